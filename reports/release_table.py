"""Which DSL release passes what: one markdown table from several runs' results.json.

Each run is one install (``tox -e dsl4.3`` ... ``dsl4.8`` on a CPU machine, the gpu tier on a
GPU runner); runs of the same release merge into its row, a run that only skipped a tier giving
way to one that ran it. A cell counts the tier's cases:
``✅ passed`` plus expected failures and skips, or ``❌ bad/total`` when any case needs a human.
``--update README.md`` rewrites the table between its two markers, so the README's table is
always a product of runs, never typed by hand.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from pathlib import Path

from packaging.version import InvalidVersion, Version

from reports import atomic
from reports.model import RunResult
from reports.summary import cell

TIERS = ("host", "compile", "api", "gpu", "bench", "harness")
START = "<!-- release-table:start (python -m reports releases RUN... --update README.md) -->"
END = "<!-- release-table:end -->"


def _release_key(release: str):
    try:
        return (0, Version(release))
    except InvalidVersion:
        return (1, release)


def render(runs: list[RunResult]) -> str:
    """The table: a row per release (oldest first), a column per tier any run exercised."""
    per_run: dict[str, dict[str, list[Counter]]] = defaultdict(lambda: defaultdict(list))
    for run in runs:
        row = per_run[run.fingerprint.get("dsl", "?")]
        by_tier: dict[str, Counter] = defaultdict(Counter)
        for case in run.cases:
            by_tier[case.tier][case.outcome] += 1
        for tier, counts in by_tier.items():
            row[tier].append(counts)
    cells = {release: {tier: _merged(counts) for tier, counts in row.items()} for release, row in per_run.items()}
    tiers = [t for t in TIERS if any(t in row for row in cells.values())]
    tiers += sorted({t for row in cells.values() for t in row} - set(TIERS))
    lines = ["| DSL | " + " | ".join(tiers) + " |", "|---" * (len(tiers) + 1) + "|"]
    for release in sorted(cells, key=_release_key):
        lines.append(f"| {release} | " + " | ".join(cell(cells[release].get(t)) for t in tiers) + " |")
    return "\n".join(lines) + "\n"


def _merged(counts: list[Counter]) -> Counter:
    """One release's tier over its runs; a run that only skipped the tier (a CPU run's gpu cases)
    says nothing where another run exercised it."""
    exercised = [c for c in counts if set(c) != {"skipped"}] or counts
    return sum(exercised, Counter())


def update(document: Path, table: str) -> None:
    """Replace what stands between the markers in ``document`` (atomically); ValueError without them."""
    text = document.read_text(encoding="utf-8")
    head, start, rest = text.partition(START)
    _, end, tail = rest.partition(END)
    if not start or not end:
        raise ValueError(f"{document}: no release table markers ({START} ... {END})")
    atomic.write_text(document, f"{head}{START}\n{table}{END}{tail}")
