"""What one run produced: every case with its outcome, and the install it ran on."""

from __future__ import annotations

from collections import Counter
from dataclasses import MISSING, asdict, dataclass, field, fields

SCHEMA = "cute-dsl-harness/results/5"
# 2 to 5 only added optional fields (4: status, collected, notes; 5: a case's ptx facts)
READABLE_SCHEMAS = tuple(f"cute-dsl-harness/results/{n}" for n in (1, 2, 3, 4)) + (SCHEMA,)
STATUSES = ("complete", "incomplete", "stopped early", "interrupted", "internal error")
SIZES = ("bandwidth", "launch")  # bench sizes: large enough to stream, and small enough to be launch-bound
REFERENCE_STAGES = ("torch_add", "d2d_copy")  # bench rows that are not DSL kernels: what to compare with


@dataclass
class PtxFacts:
    """What a compile-tier case's PTX shows: the kernel author's view of access widths."""

    accesses: str  # e.g. "loads [64x16B], stores [32x16B]": width x static count
    widest_load: int  # bytes
    widest_store: int
    bytes_loaded: int  # per thread, summed over the access instructions in the PTX
    bytes_stored: int
    guarded: bool  # has predicated paths (a bounds check)
    layout_allows: int  # the widest access the layout proves aligned for every operand, bytes
    judged: bool  # the stage declared what to expect and the facts were asserted; else only reported


@dataclass
class CaseResult:
    nodeid: str
    outcome: str  # passed, failed, skipped, xfailed, xpassed, error
    tier: str
    duration_s: float
    reason: str = ""
    message: str = ""
    case: dict | None = None  # matrix cases: id, stage, dtype; since schema 5 also align, layout, family
    bandwidth: dict | None = None  # bench cases: the measurement, and its baseline verdict if any
    ptx: PtxFacts | None = None  # compile-tier cases of registered stages


@dataclass
class RunResult:
    fingerprint: dict[str, str]
    arch: str
    started: str
    finished: str = ""
    exit_status: int | None = None
    api_drift: list[dict] = field(default_factory=list)
    deprecations: list[dict] = field(default_factory=list)  # DSL deprecations seen: what breaks next release
    compiles: dict[str, int] = field(default_factory=dict)  # kernel compiles, and distinct signatures
    cases: list[CaseResult] = field(default_factory=list)
    baseline: dict = field(default_factory=dict)  # {"path", "fingerprint"} if compared, else {"note"}
    status: str = "complete"  # how the run ended (STATUSES); a run written before schema 4 was complete
    collected: int | None = None  # cases selected to run; None in runs written before schema 4
    notes: list[str] = field(default_factory=list)  # what went wrong in the harness itself (a plot not written)
    registered_stages: list[str] = field(default_factory=list)  # kernels of the user's (--stage-module)

    def counts(self) -> Counter:
        return Counter(c.outcome for c in self.cases)

    @property
    def not_run(self) -> int:
        """Selected cases that never reported an outcome (an interrupt, ``-x``, a lost worker)."""
        return max(0, (self.collected or 0) - len(self.cases))

    @property
    def passed(self) -> bool:
        """What a gate reads: exit status 0 and every selected case reported."""
        return self.exit_status == 0 and self.status == "complete"

    def bench_cases(self) -> list[CaseResult]:
        """Cases with a bandwidth, in reading order: by size, then dtype, then stage (references last)."""
        bench = [c for c in self.cases if c.bandwidth]
        dtypes = _first_seen(c.bandwidth["dtype"] for c in bench)
        stages = _first_seen(c.bandwidth["stage"] for c in bench)

        def key(c: CaseResult):
            b = c.bandwidth
            size = SIZES.index(b["size"]) if b["size"] in SIZES else len(SIZES)
            return size, b["size"], dtypes[b["dtype"]], b["stage"] in REFERENCE_STAGES, stages[b["stage"]]

        return sorted(bench, key=key)

    def to_json(self) -> dict:
        return {"schema": SCHEMA, **asdict(self), "counts": dict(self.counts()), "not_run": self.not_run}

    @classmethod
    def from_json(cls, data) -> RunResult:
        """A run from results.json of any readable schema; ValueError says in one line why not."""
        if not isinstance(data, dict):
            raise ValueError(f"expected a JSON object, got {type(data).__name__}")
        schema = data.get("schema")
        if schema not in READABLE_SCHEMAS:
            raise ValueError(f"unknown schema {schema!r} (readable: {', '.join(READABLE_SCHEMAS)})")
        run = _build(cls, data, "run")
        cases = data.get("cases")
        if not isinstance(cases, list):
            raise ValueError("'cases' is missing or not a list")
        run.cases = [_case(c, f"case {i}") for i, c in enumerate(cases)]
        return run


def _case(data, where: str) -> CaseResult:
    case = _build(CaseResult, data, where)
    if case.ptx is not None:
        case.ptx = _build(PtxFacts, case.ptx, f"{where} ptx")
    return case


def _build(kind: type, data, where: str):
    """One dataclass from its dict: required fields must be there, absent optional ones default."""
    if not isinstance(data, dict):
        raise ValueError(f"{where}: expected a JSON object, got {type(data).__name__}")
    known = {f.name for f in fields(kind)}
    required = [f.name for f in fields(kind) if f.default is MISSING and f.default_factory is MISSING]
    missing = [name for name in required if name not in data]
    if missing:
        raise ValueError(f"{where}: missing {', '.join(missing)}")
    return kind(**{k: v for k, v in data.items() if k in known})


def _first_seen(values) -> dict:
    """Each distinct value's rank by first appearance: collection order is the matrix's order."""
    ranks: dict = {}
    for value in values:
        ranks.setdefault(value, len(ranks))
    return ranks
