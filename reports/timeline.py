"""``python -m reports timeline RUN``: where a run's wall time went, from its results.json.

Every case carries the process that ran it and when (seconds after the run's start), and the
run's timeline its processes' phases (an xdist worker's start-up, collection and cases; a bench
process's compiling ahead and measuring). This renders them as markdown: the run's milestones,
one row per process (busy and idle time), worker time by tier and by test, the longest cases,
and what held the parallel part's tail.
"""

from __future__ import annotations

from collections import defaultdict

from reports.model import CaseResult, RunResult

LONGEST = 15  # rows of the longest cases and the heaviest tests
TAIL_S = 10.0  # the parallel part's last seconds: which cases held them


def _timed(run: RunResult) -> list[CaseResult]:
    return [c for c in run.cases if c.start_s is not None and c.stop_s is not None]


def _test_of(nodeid: str) -> str:
    return nodeid.split("[", 1)[0]


def _seconds(value: float | None) -> str:
    return "" if value is None else f"{value:.1f}"


def _cpu(cases: list[CaseResult]) -> str:
    """The cases' CPU seconds summed; "" where none recorded them (a run written before schema 12)."""
    known = [c.cpu_s for c in cases if c.cpu_s is not None]
    return f"{sum(known):.1f}" if known else ""


def render(run: RunResult, name: str) -> str:
    """The run's timeline as markdown; ValueError for a run that recorded none (schema 10 or
    older, or a merged report)."""
    timeline = run.timeline
    cases = _timed(run)
    if timeline is None or not cases:
        raise ValueError(f"{name}: no timeline recorded (a run written before schema 11, or a merged report)")
    out = [f"# Where the time went: {name}", ""]
    out += _milestones(run, cases)
    out += _processes(run, cases)
    out += _by_tier(cases)
    out += _heaviest_tests(cases)
    out += _longest(cases)
    out += _tail(run, cases)
    return "\n".join(out) + "\n"


def _milestones(run: RunResult, cases: list[CaseResult]) -> list[str]:
    t = run.timeline
    collected = [s.stop_s for s in t.spans if s.phase == "collection"]
    first_case = min(c.start_s for c in cases)
    lines = [f"- cases: {len(cases)} timed; worker time {sum(c.stop_s - c.start_s for c in cases):.0f} s"]
    measured = [c for c in cases if c.cpu_s is not None]
    if measured:
        cpu, held = sum(c.cpu_s for c in measured), sum(c.stop_s - c.start_s for c in measured) or 1.0
        lines[0] += f"; their processes' CPU time {cpu:.0f} s ({100 * cpu / held:.0f}% of those cases' worker time)"
    beyond = {c.nodeid: c.stop_s - c.start_s - c.duration_s for c in cases if c.duration_s is not None}
    xfailed = [beyond[c.nodeid] for c in cases if c.outcome == "xfailed" and c.nodeid in beyond]
    lines.append(f"- beyond the cases' calls (their setup, teardown and reports): {sum(beyond.values()):.1f} s, "
                 f"{sum(xfailed):.1f} s of it in the {len(xfailed)} xfailed cases'")
    set_up = next((s for s in t.spans if s.process == "controller" and s.phase == "set-up"), None)
    if t.controller_start_s is not None:
        checks = "the options' checks" if set_up else "the install's and options' checks"
        lines.append(f"- the controller's process started {-t.controller_start_s:.1f} s before the run's start (Python, "
                     f"pytest, {checks}); the workers start at the run's start")
    if set_up is not None:
        lines.append(f"- the controller checked the install and set up beside the workers' start, until {set_up.stop_s:.1f} s")
    if collected:
        lines.append(f"- workers collected at {min(collected):.1f}-{max(collected):.1f} s; the first case began at {first_case:.1f} s")
    if t.parallel_end_s is not None:
        lines.append(f"- the parallel part ended at {t.parallel_end_s:.1f} s (its last worker done)")
    bench = [s for s in t.spans if s.process.startswith("bench")]
    if t.bench_go_s is not None:
        end = max((s.stop_s for s in bench), default=None)
        lines.append(f"- the bench phase was told to measure at {t.bench_go_s:.1f} s" +
                     (f" and was done at {end:.1f} s ({end - t.bench_go_s:.1f} s)" if end is not None else ""))
    if t.end_s is not None:
        lines.append(f"- the report was written at {t.end_s:.1f} s after the run's start")
    return [*lines, ""]


def _processes(run: RunResult, cases: list[CaseResult]) -> list[str]:
    by_process: dict[str, list[CaseResult]] = defaultdict(list)
    for case in cases:
        by_process[case.worker or "controller"].append(case)
    phases = {(s.process, s.phase): s for s in run.timeline.spans}
    out = ["## Processes", "", "| process | ready at | collected at | first case | last case done | cases | busy s | cpu s | idle s |",
           "|---|---|---|---|---|---|---|---|---|"]
    for process in sorted(by_process, key=_process_order):
        mine = by_process[process]
        first, last = min(c.start_s for c in mine), max(c.stop_s for c in mine)
        busy = sum(c.stop_s - c.start_s for c in mine)
        start_up, collection = phases.get((process, "start-up")), phases.get((process, "collection"))
        out.append(f"| {process} | {_seconds(start_up.stop_s if start_up else None)} | "
                   f"{_seconds(collection.stop_s if collection else None)} | {first:.1f} | {last:.1f} | {len(mine)} | "
                   f"{busy:.1f} | {_cpu(mine)} | {last - first - busy:.1f} |")
    return [*out, ""]


def _process_order(process: str) -> tuple:
    digits = "".join(ch for ch in process if ch.isdigit())
    return (process.startswith("bench"), process.rstrip("0123456789"), int(digits) if digits else -1)


def _by_tier(cases: list[CaseResult]) -> list[str]:
    total = sum(c.stop_s - c.start_s for c in cases) or 1.0
    tiers: dict[str, list[CaseResult]] = defaultdict(list)
    for case in cases:
        tiers[case.tier].append(case)
    out = ["## Worker time by tier", "", "| tier | cases | worker s | cpu s | share | longest s |", "|---|---|---|---|---|---|"]
    for tier, mine in sorted(tiers.items(), key=lambda kv: -sum(c.stop_s - c.start_s for c in kv[1])):
        spent = sum(c.stop_s - c.start_s for c in mine)
        longest = max(c.stop_s - c.start_s for c in mine)
        out.append(f"| {tier} | {len(mine)} | {spent:.1f} | {_cpu(mine)} | {100 * spent / total:.0f}% | {longest:.1f} |")
    return [*out, ""]


def _heaviest_tests(cases: list[CaseResult]) -> list[str]:
    tests: dict[str, list[CaseResult]] = defaultdict(list)
    for case in cases:
        tests[_test_of(case.nodeid)].append(case)
    spent = {test: sum(c.stop_s - c.start_s for c in mine) for test, mine in tests.items()}
    ranked = sorted(tests.items(), key=lambda kv: -spent[kv[0]])[:LONGEST]
    out = ["## Heaviest tests (all their cases)", "", "| test | cases | worker s | cpu s | mean s |", "|---|---|---|---|---|"]
    out += [f"| `{test}` | {len(mine)} | {spent[test]:.1f} | {_cpu(mine)} | {spent[test] / len(mine):.2f} |" for test, mine in ranked]
    return [*out, ""]


def _longest(cases: list[CaseResult]) -> list[str]:
    ranked = sorted(cases, key=lambda c: c.start_s - c.stop_s)[:LONGEST]
    out = ["## Longest cases", "", "| case | process | start | stop | s |", "|---|---|---|---|---|"]
    out += [f"| `{c.nodeid}` | {c.worker or 'controller'} | {c.start_s:.1f} | {c.stop_s:.1f} | {c.stop_s - c.start_s:.1f} |"
            for c in ranked]
    return [*out, ""]


def _tail(run: RunResult, cases: list[CaseResult]) -> list[str]:
    """The parallel part's last seconds: each case still running then, longest first."""
    end = run.timeline.parallel_end_s
    if end is None:
        return []
    parallel = [c for c in cases if not c.worker.startswith("bench") and c.stop_s > end - TAIL_S]
    ranked = sorted(parallel, key=lambda c: c.start_s - c.stop_s)[:LONGEST]
    out = [f"## The tail: cases running in the parallel part's last {TAIL_S:.0f} s", "",
           "| case | process | start | stop |", "|---|---|---|---|"]
    out += [f"| `{c.nodeid}` | {c.worker or 'controller'} | {c.start_s:.1f} | {c.stop_s:.1f} |" for c in ranked]
    return out
