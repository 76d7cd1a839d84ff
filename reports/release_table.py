"""Which DSL release passes what: one markdown table from several runs' results.json.

Each run is one install (``tox -e dsl4.3`` ... ``dsl4.8`` on a CPU machine, ``dsl4.8-torch2.15``
on another torch, the gpu tier on a GPU runner); runs of the same DSL release on the same torch
release share a row, each cell from one run (``_chosen`` says
which; a note under the table names the runs left out and marks an interrupted one). A cell
counts the tier's cases:
``✅ passed`` plus expected failures and skips, or ``❌ bad/total`` when any case needs a human.
``--update docs/release-matrix.md`` rewrites the table between its two markers, so the table there is
always a product of runs, never typed by hand.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from pathlib import Path

from packaging.version import InvalidVersion, Version

from reports import atomic, semantics
from reports.model import TIERS, RunResult
from reports.summary import cell

START = "<!-- release-table:start (python -m reports releases RUN... --update docs/release-matrix.md) -->"
END = "<!-- release-table:end -->"


def _release_key(release: str):
    try:
        return (0, Version(release))
    except InvalidVersion:
        return (1, release)


def _row_key(row: tuple[str, str]):
    return tuple(_release_key(part) for part in row)


def torch_release(version: str) -> str:
    """torch's release without its build tag (``2.15.0+cu132`` is 2.15.0): a CPU and a CUDA build
    of one release are one row."""
    return version.split("+", 1)[0]


def render(runs: list[RunResult]) -> str:
    """The table: a row per release (oldest first), a column per tier any run exercised; then a
    note for every cell that is not simply one complete run's."""
    per_release: dict[tuple[str, str], dict[str, list[tuple[RunResult, Counter]]]] = defaultdict(lambda: defaultdict(list))
    for run in runs:
        row = per_release[(run.fingerprint.dsl or "?", torch_release(run.fingerprint.torch or "?"))]
        by_tier: dict[str, Counter] = defaultdict(Counter)
        for case in run.cases:
            by_tier[case.tier][case.outcome] += 1
        for tier, counts in by_tier.items():
            row[tier].append((run, counts))
    cells: dict[tuple[str, str], dict[str, str]] = defaultdict(dict)
    notes = []
    for release in sorted(per_release, key=_row_key):
        for tier, candidates in per_release[release].items():
            run, counts, note = _chosen(candidates)
            cells[release][tier] = ("" if run.status == "complete" else f"⚠ {run.status}: ") + cell(counts)
            notes += [f"- {release[0]} (torch {release[1]}) {tier}: {note}"] if note else []
    tiers = [t for t in TIERS if any(t in row for row in cells.values())]
    tiers += sorted({t for row in cells.values() for t in row} - set(TIERS))
    lines = ["| DSL | torch | " + " | ".join(tiers) + " |", "|---" * (len(tiers) + 2) + "|"]
    for release in cells:
        lines.append(f"| {release[0]} | {release[1]} | " + " | ".join(cells[release].get(t, "") for t in tiers) + " |")
    return "\n".join(lines + ([""] + notes if notes else [])) + "\n" + semantics.release_section(_newest_per_release(runs))


def _newest_per_release(runs: list[RunResult]) -> list[tuple[str, RunResult]]:
    """Each DSL release's newest run that observed meanings (the semantics family ran), oldest release first."""
    newest: dict[str, RunResult] = {}
    for run in runs:
        release = run.fingerprint.dsl or "?"
        if semantics.meanings(run) and (release not in newest or (run.finished or run.started) > (
                newest[release].finished or newest[release].started)):
            newest[release] = run
    return [(release, newest[release]) for release in sorted(newest, key=_release_key)]


def _chosen(candidates: list[tuple[RunResult, Counter]]) -> tuple[RunResult, Counter, str]:
    """One run's counts for a release's tier, never a sum: a run that only skipped the tier (a
    CPU run's gpu cases) gives way to one that exercised it, an interrupted run to a complete
    one, an older run to a newer one; the note says what was left out or why the cell is partial."""
    exercised = [c for c in candidates if set(c[1]) != {"skipped"}] or candidates
    run, counts = max(exercised, key=lambda c: (c[0].status == "complete", c[0].finished or c[0].started))
    notes = []
    if run.status != "complete":
        notes.append(f"the run started {run.started} ended {run.status} after {len(run.cases)} of "
                     f"{run.collected} cases ({run.not_run} not run)")
    if len(exercised) > 1:
        others = ", ".join(sorted(c[0].started for c in exercised if c[0] is not run))
        notes.append(f"{len(exercised)} runs; shown: the run started {run.started}, not: {others}")
    return run, counts, "; ".join(notes)


def update(document: Path, table: str) -> None:
    """Replace what stands between the markers in ``document`` (atomically); ValueError where it
    cannot be read or has no markers."""
    try:
        text = document.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise ValueError(f"{document}: cannot read it ({getattr(error, 'strerror', None) or error})") from None
    head, start, rest = text.partition(START)
    _, end, tail = rest.partition(END)
    if not start or not end:
        raise ValueError(f"{document}: no release table markers ({START} ... {END})")
    atomic.write_text(document, f"{head}{START}\n{table}{END}{tail}")
