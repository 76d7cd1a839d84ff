"""The meanings a release gives where the DSL defines an operation itself (the sign of ``%`` and
``//`` on negative operands, out-of-range float-to-integer conversions, fp8 overflow, a negative
integer to a wider unsigned type), as the semantics family observed them: a table per run for
``summary.md``, a line per changed meaning for ``python -m reports compare`` (and ``ab``), and a table per
release for ``python -m reports releases``.
"""

from __future__ import annotations

from reports.model import RunResult

Key = tuple[str, str, str]  # subject, type, path


def meanings(run: RunResult) -> dict[Key, str]:
    """Each (subject, type, path) the run observed, with its meaning (the first case's that says it)."""
    found: dict[Key, str] = {}
    for case in run.cases:
        for m in case.semantics:
            found.setdefault((m.subject, m.type, m.path), m.meaning)
    return found


def _short(meaning: str) -> str:
    """The rule without the values behind it (``saturates: nan -> 0, ...`` is ``saturates``)."""
    return meaning.split(": ", 1)[0] if ": " in meaning and " -> " in meaning else meaning


def section(run: RunResult) -> list[str]:
    """summary.md's table of the run's meanings (nothing where the family did not run)."""
    found = meanings(run)
    if not found:
        return []
    lines = ["", "## Meanings this release defines itself", "",
             "Where the DSL, not Python or torch, says what an operation yields (the semantics family):", "",
             "| subject | type | gpu | host |", "|---|---|---|---|"]
    rows = sorted({(subject, type_) for subject, type_, _ in found})
    for subject, type_ in rows:
        lines.append(f"| {subject} | {type_} | {found.get((subject, type_, 'gpu'), '')} | "
                     f"{found.get((subject, type_, 'host'), '')} |")
    return lines


def changed_lines(was: dict[Key, str], now: dict[Key, str]) -> list[str]:
    """One line per meaning both tables hold that ``now`` gives differently (a meaning only one
    holds is no change: the other did not observe it)."""
    return [f"{subject}, {type_} ({path}): {was[key]} → {now[key]}"
            for key in sorted(was.keys() & now.keys()) if was[key] != now[key]
            for subject, type_, path in (key,)]


def changes(a: RunResult, b: RunResult) -> list[str]:
    """compare's section: one line per meaning both runs observed that B gives differently."""
    changed = changed_lines(meanings(a), meanings(b))
    if not changed:
        return []
    return [f"## Changed meanings ({len(changed)})", "", *(f"- {line}" for line in changed), ""]


def release_section(runs: list[tuple[str, RunResult]]) -> str:
    """The release table's companion: a row per (subject, type, path), a column per release, each
    cell the rule the release follows (a row whose cells differ is a change of meaning)."""
    per_release = {release: {k: _short(v) for k, v in meanings(run).items()} for release, run in runs}
    per_release = {release: found for release, found in per_release.items() if found}
    if not per_release:
        return ""
    releases = list(per_release)
    keys = sorted({key for found in per_release.values() for key in found})
    lines = ["", "Meanings each release defines itself (the semantics family; a row whose cells differ changed meaning):", "",
             "| subject | type | path | " + " | ".join(releases) + " |", "|---" * (len(releases) + 3) + "|"]
    for key in keys:
        cells = [per_release[r].get(key, "") for r in releases]
        mark = " ⚠" if len({c for c in cells if c}) > 1 else ""
        lines.append(f"| {key[0]}{mark} | {key[1]} | {key[2]} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"
