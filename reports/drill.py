"""Whether a planted-slowdown drill proved the gate: every planted bandwidth-size case `slower`.

A drill run (``--bandwidth-plant-slowdown F``) fails its cases when the gate works, so pytest's
exit status says nothing about the gate; this reads its results.json and answers with one: 0
where every bandwidth-size case that was planted was called slower, 1 where the gate missed one
(or none was planted, or a bench case failed without a verdict: the gate was never asked of
it). Given the A/A run of the same machine start (``--against``), it also says how much slower
each case really measured: the slowdown the drill planted in time, beside the bytes it planted
(``BandwidthRecord.planted_slowdown``); an A/A run of another install or GPU, or itself a drill,
is refused. The launch-bound size is reported, not judged: a launch's fixed cost dilutes the
planted bytes there (docs/bandwidth.md). A run of several GPUs is judged GPU by GPU, each
against its own A/A figures: the drill is proved where it is proved on every GPU. Each GPU's
lines say what its verdicts rested on (its board's own runs, or the traveling verdict, under
which only the DSL stages are planted).
"""

from __future__ import annotations

import statistics
from collections import Counter
from dataclasses import dataclass

from reports.model import BAD_OUTCOMES, BandwidthRecord, CaseResult, RunResult
from reports.summary import gpu_label

JUDGED_SIZE = "bandwidth"
NAMED = 10  # unmeasured cases named on their line; the rest counted


@dataclass(frozen=True)
class DrillResult:
    lines: list[str]
    proved: bool


def judge(drill: RunResult, against: RunResult | None = None) -> DrillResult:
    """The drill's verdict and the lines that say it, one size family a line (per GPU, where it
    ran on several), misses listed."""
    if against is not None:
        _check_against(drill, against)
    reference = {(c.gpu, c.bandwidth.case): c.bandwidth for c in against.bench_cases()} if against else {}
    by_gpu: dict[str, list[CaseResult]] = {}
    for case in drill.bench_cases():
        if case.bandwidth.planted_slowdown is not None:
            by_gpu.setdefault(case.gpu, []).append(case)
    if not by_gpu:
        return DrillResult([_no_drill(drill)], False)
    lines, missed_on = [], []
    for gpu, cases in by_gpu.items():
        gpu_lines, proved = _judge_gpu([c.bandwidth for c in cases], {k[1]: v for k, v in reference.items() if k[0] == gpu})
        if len(by_gpu) > 1:
            bases = " and ".join(sorted({c.bandwidth.basis for c in cases} - {""})) or "no baseline"
            lines.append(f"gpu {gpu_label(drill, gpu)} (judged by: {bases}):")
            gpu_lines = [f"  {line}" for line in gpu_lines]
        lines += gpu_lines
        if not proved:
            missed_on.append(gpu)
    unmeasured = [c for c in drill.cases if c.tier == "bench" and c.bandwidth is None and c.outcome != "passed"]
    if unmeasured:
        named = ", ".join(f"{_case_id(c.nodeid)} ({c.outcome})" for c in unmeasured[:NAMED])
        lines.append(f"not measured: {named}" + (f" and {len(unmeasured) - NAMED} more" if len(unmeasured) > NAMED else ""))
    every = f" on each of {len(by_gpu)} GPUs" if len(by_gpu) > 1 else ""
    if any(not any(c.bandwidth.size == JUDGED_SIZE for c in cases) for cases in by_gpu.values()):
        lines.append(f"drill NOT PROVED: no planted {JUDGED_SIZE}-size case on a GPU of this run")
        return DrillResult(lines, False)
    if any(c.outcome in BAD_OUTCOMES for c in unmeasured):
        lines.append("drill NOT PROVED: a bench case failed without a bandwidth verdict (above): the gate was never asked of it")
        return DrillResult(lines, False)
    if missed_on:
        where = f" on gpu {', '.join(gpu_label(drill, g) for g in missed_on)}" if len(by_gpu) > 1 else ""
        lines.append(f"drill NOT PROVED: the gate missed a planted {JUDGED_SIZE}-size case{where} (above)")
        return DrillResult(lines, False)
    lines.append(f"drill PROVED: the gate called every planted {JUDGED_SIZE}-size case slower{every}")
    return DrillResult(lines, True)


def _no_drill(run: RunResult) -> str:
    """The one line for a run that planted nothing: not a drill (or one whose bench cases never ran)."""
    outcomes = Counter(c.outcome for c in run.cases if c.tier == "bench")
    bench = ", ".join(f"{n} {outcome}" for outcome, n in outcomes.most_common()) or "none"
    return (f"drill NOT PROVED: no case of this run was planted: not a --bandwidth-plant-slowdown run, or its bench "
            f"cases never measured (bench cases: {bench})")


def _judge_gpu(planted: list[BandwidthRecord], reference: dict[str, BandwidthRecord]) -> tuple[list[str], bool]:
    """One GPU's lines, a size family each, and whether it called every planted bandwidth-size case slower."""
    lines, proved = [], False
    for size in dict.fromkeys(b.size for b in planted):
        cases = [b for b in planted if b.size == size]
        slower = [b for b in cases if b.verdict == "slower"]
        judged = size == JUDGED_SIZE
        line = (f"{size}: {len(slower)} of {len(cases)} planted cases slower{'' if judged else ' (not judged)'}; "
                f"planted {_range(b.planted_slowdown * 100 for b in cases)}")
        deltas = [b.delta_pct for b in cases if b.delta_pct is not None]
        if deltas:
            line += f", {_range(deltas, signed=True)} against the baseline"
            line += f" (thresholds {_range(b.threshold_pct for b in cases if b.threshold_pct is not None)})"
        measured = [_measured(b, reference[b.case]) for b in cases if b.case in reference]
        if measured:
            line += f"; measured {_range(measured)} slower than the A/A run (median {statistics.median(measured):.2f}%)"
        lines.append(line)
        if judged:
            missed = [b for b in cases if b.verdict != "slower"]
            lines += [f"  missed: {b.case} ({b.verdict or 'no verdict'}, {_signed(b.delta_pct)})" for b in missed]
            proved = bool(cases) and not missed
    return lines, proved


def _check_against(drill: RunResult, against: RunResult) -> None:
    """``--against`` must be an A/A run of the drill's install on the drill's GPUs: another's
    figures would measure the difference between two machines, not the drill."""
    if any(c.bandwidth.planted_slowdown is not None for c in against.bench_cases()):
        raise ValueError("--against: a drill run (its cases were planted), not the A/A run")
    changed = [f"{key} {getattr(against.fingerprint, key)} (drill: {getattr(drill.fingerprint, key)})"
               for key in drill.fingerprint.changed(against.fingerprint)]
    if changed:
        raise ValueError(f"--against: a run of another install: {', '.join(changed)}")
    gpus = {c.gpu for c in drill.cases if c.bandwidth}
    if not gpus <= {c.gpu for c in against.cases if c.bandwidth}:
        raise ValueError(f"--against: measured on other GPUs than the drill's ({', '.join(sorted(gpus))})")


def _measured(drilled: BandwidthRecord, aa: BandwidthRecord) -> float:
    """How much longer the drill's launches took than the A/A run's, in percent."""
    return 100 * (aa.gbps / drilled.gbps - 1)


def _case_id(nodeid: str) -> str:
    """``test_x.py::test_y[case-id]``'s case id (the node id where it has none)."""
    return nodeid.rpartition("[")[2].rstrip("]") or nodeid


def _range(values, signed: bool = False) -> str:
    values = sorted(values)
    if not values:
        return "–"
    fmt = _signed if signed else (lambda v: f"{v:.2f}%")
    return fmt(values[0]) if values[0] == values[-1] else f"{fmt(values[0])} .. {fmt(values[-1])}"


def _signed(value: float | None) -> str:
    return "no delta" if value is None else f"{value:+.2f}%"
