"""``python -m reports merge RUN... --out DIR``: several runs as one report (results.json,
summary.md, junit.xml), e.g. the runners of a CI matrix, GPU models side by side, or a run and
a re-run of its failures.

A case is one per (node id, GPU model, install): the same test on an H100 and an H200 is two
cases, and a later run's result for the same case replaces an earlier one's, as a re-run
means. Runs of different installs (DSL or torch) are refused unless ``--mixed-installs`` says
they are meant to be merged; the summary then counts outcomes per install.
"""

from __future__ import annotations

from pathlib import Path

from reports import junit, report_files
from reports.model import BAD_OUTCOMES, CaseResult, Fingerprint, MergedRun, RunResult

_PASSING_EXITS = (0, 1, 5)  # exits a merged report recomputes from its cases; others (2, 3, 4) carry over


def merge(runs: list[tuple[str, RunResult]], mixed_installs: bool = False) -> RunResult:
    """One run from ``runs`` (named, in order); ValueError says in one line why not."""
    installs = {run.fingerprint.install_key(): name for name, run in runs}
    if len(installs) > 1 and not mixed_installs:
        named = "; ".join(f"{run.fingerprint.install_name()} in {name}" for name, run in runs)
        raise ValueError(f"the runs are of different installs ({named}); pass --mixed-installs to merge them anyway")
    cases: dict[tuple, CaseResult] = {}
    replaced = 0
    for source, (_, run) in enumerate(runs):
        for case in run.cases:
            gpu = run.gpu(case.gpu)
            key = (case.nodeid, gpu.name if gpu else run.fingerprint.gpu, run.fingerprint.install_key())
            replaced += key in cases
            cases[key] = CaseResult(**{**vars(case), "source": source})
    first = runs[0][1]
    merged = RunResult(
        fingerprint=_joined([run.fingerprint for _, run in runs]),
        arch=" + ".join(dict.fromkeys(run.arch for _, run in runs)),
        started=min(run.started for _, run in runs),
        finished=max(run.finished for _, run in runs),
        api_drift=first.api_drift,
        deprecations=list({(d.category, d.message): d for _, run in runs for d in run.deprecations}.values()),
        cases=list(cases.values()),
        baseline=first.baseline,
        registered_stages=list(dict.fromkeys(s for _, run in runs for s in run.registered_stages)),
        host=" + ".join(dict.fromkeys(run.host for _, run in runs if run.host)),
        gpus=list({(g.host, g.uuid): g for _, run in runs for g in run.gpus}.values()),
        repro_sources={digest: text for _, run in runs for digest, text in run.repro_sources.items()},
        merged_from=[MergedRun(name, run.host, run.started, run.fingerprint, run.status, run.exit_status, len(run.cases),
                               run.compiles) for name, run in runs],
    )
    rerun = {i: _rerun_by(i, runs) for i in range(len(runs))}
    unfinished = [(name, run) for i, (name, run) in enumerate(runs) if run.status != "complete" and rerun[i] is None]
    merged.status = unfinished[0][1].status if unfinished else "complete"
    merged.collected = len(merged.cases) + sum(run.not_run for _, run in unfinished)
    merged.exit_status = _exit_status(merged, [run.exit_status for i, (_, run) in enumerate(runs) if rerun[i] is None])
    merged.notes = [note for _, run in runs for note in run.notes]
    merged.notes += [f"{name} ended {run.status} ({run.not_run} cases not run)" for name, run in unfinished]
    merged.notes += [f"{name} ended {run.status}; {rerun[i]}, a later complete run, ran every one of its cases again"
                     for i, (name, run) in enumerate(runs) if run.status != "complete" and rerun[i] is not None]
    if replaced:
        merged.notes.append(f"{replaced} results of an earlier run were replaced by a later run's (a re-run)")
    if len(installs) > 1:
        merged.notes.append("merged across installs (--mixed-installs): see the outcomes per install")
    return merged


def _rerun_by(index: int, runs: list[tuple[str, RunResult]]) -> str | None:
    """The later complete run of the same install that ran every case ``runs[index]`` collected
    (a rerun of an interrupted run), if any: the interruption then no longer stands."""
    _, run = runs[index]
    ids = {c.nodeid for c in run.cases}
    for name, later in runs[index + 1:]:
        if (later.status == "complete" and later.fingerprint.install_key() == run.fingerprint.install_key()
                and (later.collected or 0) >= (run.collected or 0) and ids <= {c.nodeid for c in later.cases}):
            return name
    return None


def _joined(fingerprints: list[Fingerprint]) -> Fingerprint:
    """Each field once where the runs agree, else their values joined with " + " ("?" for a run
    that does not record it); a field no run records stays unrecorded."""
    recorded = [fp.to_json() for fp in fingerprints]
    fields = dict.fromkeys(f for fp in recorded for f in fp)
    return Fingerprint.from_json({f: " + ".join(dict.fromkeys(fp.get(f, "?") for fp in recorded)) for f in fields})


def _exit_status(run: RunResult, exits: list[int | None]) -> int:
    """What the merged cases say (1: something needs a human, 5: nothing ran, 0), unless a run
    ended in a way its cases cannot show (interrupted, internal or usage error)."""
    carried = [e for e in exits if e not in _PASSING_EXITS]
    if carried:
        return carried[0] if carried[0] is not None else 3
    counts = run.counts()
    if any(counts[o] for o in BAD_OUTCOMES):
        return 1
    return 0 if any(c.outcome != "skipped" for c in run.cases) else 5


def _where(run: RunResult, case: CaseResult) -> str:
    source = run.merged_from[case.source] if case.source is not None else None
    fp = source.fingerprint if source else run.fingerprint
    gpu = run.gpu(case.gpu)
    return f"{gpu.name if gpu else fp.gpu or '?'}, dsl {fp.dsl or '?'}, torch {fp.torch or '?'}"


def write(run: RunResult, out: Path) -> list[Path]:
    """The run's reports (``report_files``), with the junit.xml a run gets from pytest made here."""
    return report_files.write(run, out, junit.from_run(run, lambda case: _where(run, case)))
