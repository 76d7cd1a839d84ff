"""``summary.md``: what a CI job summary shows of a run."""

from __future__ import annotations

from collections import Counter, defaultdict

from reports.model import RunResult

OUTCOMES = ("passed", "failed", "error", "xfailed", "xpassed", "skipped")


def render(run: RunResult) -> str:
    counts = run.counts()
    lines = ["# CuTe DSL conformance run", ""]
    lines += [f"- {k}: `{v}`" for k, v in run.fingerprint.items()]
    lines += [f"- arch: `{run.arch}`", f"- exit status: `{run.exit_status}`"]
    if run.compiles:
        lines.append(
            f"- kernel compiles: `{run.compiles['compiles']}` for `{len(run.cases)}` cases "
            f"(`{run.compiles['distinct_signatures']}` distinct signatures)"
        )
    lines.append("")
    lines += ["| tier | " + " | ".join(OUTCOMES) + " |", "|---" * (len(OUTCOMES) + 1) + "|"]
    by_tier: dict[str, Counter] = defaultdict(Counter)
    for case in run.cases:
        by_tier[case.tier][case.outcome] += 1
    for tier in sorted(by_tier):
        lines.append(f"| {tier} | " + " | ".join(str(by_tier[tier][o]) for o in OUTCOMES) + " |")
    lines.append("| **all** | " + " | ".join(str(counts[o]) for o in OUTCOMES) + " |")
    failures = [c for c in run.cases if c.outcome in ("failed", "error", "xpassed")]
    if failures:
        lines += ["", "## Failures", ""]
        lines += [f"- `{c.nodeid}`: {c.message.splitlines()[0] if c.message else c.outcome}" for c in failures]
    reasons = Counter((c.outcome, c.reason) for c in run.cases if c.outcome in ("skipped", "xfailed"))
    if reasons:
        lines += ["", "## Skips and expected failures", "", "| outcome | count | reason |", "|---|---|---|"]
        lines += [f"| {o} | {n} | {r} |" for (o, r), n in reasons.most_common()]
    drift = [d for d in run.api_drift if d.get("used") != d.get("preferred")]
    if drift:
        lines += ["", "## API drift", ""]
        lines += [f"- `{d['capability']}`: uses `{d['used']}` (current spelling `{d['preferred']}`)" for d in drift]
    return "\n".join(lines) + "\n"
