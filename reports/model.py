"""What one run produced: every case with its outcome, and the install it ran on."""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass, field

SCHEMA = "cute-dsl-harness/results/1"


@dataclass
class CaseResult:
    nodeid: str
    outcome: str  # passed, failed, skipped, xfailed, xpassed, error
    tier: str
    duration_s: float
    reason: str = ""
    message: str = ""


@dataclass
class RunResult:
    fingerprint: dict[str, str]
    arch: str
    started: str
    finished: str = ""
    exit_status: int | None = None
    api_drift: list[dict] = field(default_factory=list)
    compiles: dict[str, int] = field(default_factory=dict)  # kernel compiles, and distinct signatures
    cases: list[CaseResult] = field(default_factory=list)

    def counts(self) -> Counter:
        return Counter(c.outcome for c in self.cases)

    def to_json(self) -> dict:
        return {"schema": SCHEMA, **asdict(self), "counts": dict(self.counts())}
