"""What changed between two installs' runs: a markdown answer from two results.json files."""

from __future__ import annotations

import json
from pathlib import Path

from reports import semantics
from reports.model import BAD_OUTCOMES as BAD
from reports.model import OUTCOMES, ApiDrift, RunResult

LISTED = 10  # nodeids shown per list before "and N more"


def load(path: Path) -> RunResult:
    """A run from a report folder or its results.json; ValueError says in one line why not."""
    file = path / "results.json" if path.is_dir() else path
    try:
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ValueError(f"{file}: no such file") from None
    except (OSError, UnicodeDecodeError) as error:
        raise ValueError(f"{file}: unreadable ({error})") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise ValueError(f"{file}: not JSON ({error})") from None
    try:
        return RunResult.from_json(data)
    except ValueError as error:
        raise ValueError(f"{file}: {error}") from None


def render(a: RunResult, b: RunResult, name_a: str, name_b: str, threshold_pct: float = 5.0) -> str:
    """The differences, most important first; a section appears only when it has something to say."""
    lines = [f"# {name_a} → {name_b}", "", f"- A: `{name_a}` (dsl {a.fingerprint.dsl or '?'})",
             f"- B: `{name_b}` (dsl {b.fingerprint.dsl or '?'})", ""]
    if not _changed(a, b, threshold_pct):
        lines += [f"**No changes**: the same install, every case with the same outcome, no API drift, deprecation "
                  f"or meaning changed and no bandwidth beyond {threshold_pct:g}%.", ""]
    lines += _status(a, b)
    lines += _fingerprint(a, b)
    lines += _outcomes(a, b)
    lines += semantics.changes(a, b)
    lines += _drift(a, b)
    lines += _deprecations(a, b)
    lines += _bandwidth(a, b, threshold_pct)
    return "\n".join(lines).rstrip("\n") + "\n"


def _changed(a: RunResult, b: RunResult, threshold_pct: float) -> bool:
    """Whether any section below has a change to show (a partial run is one)."""
    outcomes = ({c.nodeid: c.outcome for c in a.cases} != {c.nodeid: c.outcome for c in b.cases})
    return bool(_status(a, b) or a.fingerprint.changed(b.fingerprint) or outcomes or _drift(a, b)
                or _deprecations(a, b) or semantics.changes(a, b) or any(abs(d) > threshold_pct for d in _deltas(a, b)))


def _deltas(a: RunResult, b: RunResult) -> list[float]:
    """B's bandwidth change against A, percent, for every case both measured."""
    before = {c.nodeid: c.bandwidth for c in a.bench_cases()}
    return [100 * (c.bandwidth.gbps - before[c.nodeid].gbps) / before[c.nodeid].gbps
            for c in b.bench_cases() if c.nodeid in before]


def _status(a: RunResult, b: RunResult) -> list[str]:
    """A run that did not finish: its missing cases are gaps, not changes."""
    partial = [(label, run) for label, run in (("A", a), ("B", b)) if run.status != "complete"]
    if not partial:
        return []
    lines = ["## Partial runs", ""]
    lines += [f"- **{label} ended {run.status}** after {len(run.cases)} of {run.collected} cases ({run.not_run} not run): "
              f"cases missing from {label} were not run, not removed" for label, run in partial]
    return lines + [""]


def _fingerprint(a: RunResult, b: RunResult) -> list[str]:
    changed = a.fingerprint.changed(b.fingerprint)
    if not changed:
        return ["Same install fingerprint.", ""]
    lines = ["## Install", "", "| field | A | B |", "|---|---|---|"]
    lines += [f"| {f} | {getattr(a.fingerprint, f) or '–'} | {getattr(b.fingerprint, f) or '–'} |" for f in changed]
    return lines + [""]


def _outcomes(a: RunResult, b: RunResult) -> list[str]:
    was = {c.nodeid: c for c in a.cases}
    now = {c.nodeid: c for c in b.cases}
    counts_a, counts_b = a.counts(), b.counts()
    outcomes = [o for o in OUTCOMES if counts_a[o] or counts_b[o]]
    lines = ["## Outcomes", "", "| | " + " | ".join(outcomes) + " |", "|---" * (len(outcomes) + 1) + "|",
             "| A | " + " | ".join(str(counts_a[o]) for o in outcomes) + " |",
             "| B | " + " | ".join(str(counts_b[o]) for o in outcomes) + " |", ""]
    new_failures = [c for c in b.cases if c.outcome in BAD and (c.nodeid not in was or was[c.nodeid].outcome not in BAD)]
    if new_failures:
        lines += [f"### New failures in B ({len(new_failures)})", ""]
        lines += _listed([f"`{c.nodeid}` ({c.outcome}): {_first_line(c)}" for c in new_failures])
    changed = [(was[n].outcome, now[n].outcome, n) for n in now if n in was and was[n].outcome != now[n].outcome]
    if changed:
        lines += [f"### Outcome changes ({len(changed)})", ""]
        lines += _listed([f"`{n}`: {old} → {new}" for old, new, n in changed])
    for label, only in (("A", [n for n in was if n not in now]), ("B", [n for n in now if n not in was])):
        if only:
            lines += [f"### Only in {label} ({len(only)})", ""]
            lines += _listed([f"`{n}`" for n in only])
    return lines


def _drift(a: RunResult, b: RunResult) -> list[str]:
    before = {d.capability: d for d in a.api_drift}
    after = {d.capability: d for d in b.api_drift}

    def seen(entry: ApiDrift | None) -> tuple:
        return (entry.used, entry.drifted) if entry else (None, None)

    changed = [cap for cap in dict.fromkeys([*before, *after]) if seen(before.get(cap)) != seen(after.get(cap))]
    if not changed:
        return []
    lines = ["## API drift", "", "| capability | A uses | B uses | current spelling |", "|---|---|---|---|"]
    for cap in changed:
        old, new = before.get(cap), after.get(cap)
        lines.append(f"| {cap} | {_spelling(old)} | {_spelling(new)} | `{(new or old).preferred}` |")
    return lines + [""]


def _deprecations(a: RunResult, b: RunResult) -> list[str]:
    """Deprecations B warns about that A did not (what the newer install will break next), and
    those A had that B no longer reports (gone: removed, or undeprecated)."""
    before = {d.message for d in a.deprecations}
    after = {d.message for d in b.deprecations}
    lines = []
    for title, messages in (("New deprecations in B", after - before), ("Deprecations only in A", before - after)):
        if messages:
            lines += [f"## {title} ({len(messages)})", ""] + _listed(sorted(messages))
    return lines


def _spelling(entry: ApiDrift | None) -> str:
    if entry is None:
        return "–"
    return f"`{entry.used}`" + (" (drifted)" if entry.drifted else "")


def _bandwidth(a: RunResult, b: RunResult, threshold_pct: float) -> list[str]:
    """B against A for every case both measured; |delta| beyond the threshold is flagged."""
    before = {c.nodeid: c.bandwidth for c in a.bench_cases()}
    pairs = [(before[c.nodeid], c.bandwidth) for c in b.bench_cases() if c.nodeid in before]
    if not pairs:
        return []
    lines = ["## Bandwidth", "", f"Flagged: |delta| > {threshold_pct:g}%. Ceiling (D2D copy): "
             f"A {_ceiling(a)} GB/s → B {_ceiling(b)} GB/s.", "",
             "| stage | dtype | size | shape | A GB/s | B GB/s | delta % | |", "|---|---|---|---|---|---|---|---|"]
    for old, new in pairs:
        delta = 100 * (new.gbps - old.gbps) / old.gbps
        flag = "" if abs(delta) <= threshold_pct else ("**slower**" if delta < 0 else "faster")
        lines.append(f"| {new.stage} | {new.dtype} | {new.size} | {'x'.join(map(str, new.shape))} | "
                     f"{old.gbps:.0f} | {new.gbps:.0f} | {delta:+.1f} | {flag} |")
    return lines + [""]


def _ceiling(run: RunResult) -> str:
    ceilings = sorted({c.bandwidth.ceiling_gbps for c in run.bench_cases()})
    return "/".join(f"{c:.0f}" for c in ceilings) or "–"


def _first_line(case) -> str:
    return case.message.splitlines()[0] if case.message else case.outcome


def _listed(items: list[str]) -> list[str]:
    lines = [f"- {item}" for item in items[:LISTED]]
    if len(items) > LISTED:
        lines.append(f"- … and {len(items) - LISTED} more")
    return lines + [""]
