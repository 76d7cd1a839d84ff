"""What one run produced: every case with its outcome, and the install it ran on."""

from __future__ import annotations

import statistics
from collections import Counter
from dataclasses import MISSING, asdict, dataclass, field, fields

SCHEMA = "cute-dsl-harness/results/12"
# 2 to 8 only added optional fields (4: status, collected, notes; 5: a case's ptx facts;
# 6: the GPUs in use, each case's GPU, the host, the runs a merged report came from;
# 7: a failing gpu case's reproducer record, and the sources those records name;
# 8: each GPU's board facts, and a bandwidth verdict's basis: the board's own runs or the traveling verdict;
# 9: what was found wrong with the install at start, the user's CUTE_DSL_* variables, the loader's choice;
# 10: a case's host-cost figures and observed meanings; 11: where and when each case ran, and the run's
# timeline: its workers' start-up and collection, the bench phase; 12: each case's CPU seconds)
READABLE_SCHEMAS = tuple(f"cute-dsl-harness/results/{n}" for n in range(1, 12)) + (SCHEMA,)
# the vocabulary every module reads, defined once: tiers in reading order, outcomes, what needs a human
TIERS = ("host", "cache", "compile", "api", "gpu", "bench", "harness")
DEVICE_TIERS = ("gpu", "bench")
TIER_PRECEDENCE = ("bench", "gpu", "compile", "host", "cache", "api", "harness")  # a case marked with several counts as the first
OUTCOMES = ("passed", "failed", "error", "xfailed", "xpassed", "skipped")
BAD_OUTCOMES = ("failed", "error", "xpassed")  # what needs a human
# the keys a case's records travel under in pytest's user_properties (xdist sends them as plain data,
# and no int below -2**31: execnet refuses it, so a record holding such ints travels as JSON text)
TIER_KEY, GPU_KEY, CASE_KEY, PTX_KEY, BANDWIDTH_KEY = "tier", "gpu", "case", "ptx", "bandwidth"
HOST_COST_KEY = "host_costs"  # a case's HostCost figures, as plain dicts
SEMANTICS_KEY = "semantics"  # a semantics case's observed meanings (``Meaning``), as plain dicts
REPRO_KEY, REPRO_SOURCES_KEY = "repro", "repro_sources"  # a failing gpu case's ReproSpec (JSON text on a report), and its modules' texts by digest
INSTALL_BROKEN_EXIT = 6  # a run stopped at start by what is wrong with the install (INSTALL BROKEN)
GPU_LOST_EXIT = 7  # a run that lost a GPU; pytest's own exit statuses are 0-5, and 4 is the harness's usage error
LOST = "GPU LOST"  # how a lost GPU's cases fail, and the verdict line's head
STORM = "not run: fault storm"  # how a fault-stormed GPU's remaining cases fail
INSTALL_BROKEN = "INSTALL BROKEN"  # the verdict line's head of a run its install stopped at start
NOT_WRITTEN = "REPORT NOT WRITTEN"  # the verdict line's head where a report file could not be written (exit status 3)
STATUSES = ("complete", "incomplete", "stopped early", "interrupted", "internal error", "gpu lost", "fault storm",
            "install broken")
SIZES = ("bandwidth", "launch")  # bench sizes: large enough to stream, and small enough to be launch-bound
REFERENCE_STAGES = ("torch_add", "d2d_copy")  # bench rows that are not DSL kernels: what to compare with
COPY_CASE = "d2d_copy-1GiB"  # the bench tier's device-to-device copy


def torch_add_case(dtype: str, shape) -> str:
    """The bench case id of torch.add at one dtype and shape: ``torch_add-fp16-16384x8192``."""
    return f"torch_add-{dtype}-{shape[0]}x{shape[1]}"


EXTENSION_COMPILER, LEGACY_COMPILER = "extension", "legacy"  # the fingerprint's compiler, the two lanes
NO_GPU = "no GPU"  # the fingerprint's gpu on a machine without one

# a run whose plans were sampled says so in its selection and its verdict line, by the sample's name
PLAN_SAMPLE = "--plan-sample "
PLAN_SAMPLES = {  # --plan-sample's values (fixtures.cases.matrix.cases takes them), and what each runs
    "all": "every case of each plan",
    "pairs": "each plan's strength-2 sample, not all its cases",
    "gate": "the gpu plan's sample by where defects live, the others' strength-2 samples, not all their cases",
}


@dataclass(frozen=True)
class Fingerprint:
    """The install a run ran on, what reports and baselines are keyed by (gathered by
    ``fixtures.dsl.environment.fingerprint``). Every field is a plain string, or None where a
    record does not say: one written before the field existed, or a run its install stopped at
    start (dsl, dsl_libs, torch and python alone). On disk: an object of the fields it records."""

    dsl: str | None = None
    dsl_libs: str | None = None  # the flavour of the build loaded ("cu13"), "bundled" for an untagged one
    dsl_loader: str | None = None  # what was installed beside it, and why the DSL's loader took it
    dsl_cuda: str | None = None
    compiler: str | None = None  # the compiler an ordinary cute.compile goes through: "extension", "legacy" or "unknown"
    frontend: str | None = None  # what rewrote kernels' Python: "default" or "pyir" (--frontend); None: written before, the default
    torch: str | None = None
    torch_cuda: str | None = None
    tvm_ffi: str | None = None  # apache-tvm-ffi's version: what the TVM-FFI call path runs through
    driver: str | None = None
    driver_cuda: str | None = None
    gpu: str | None = None
    compute_capability: str | None = None
    python: str | None = None

    def install_key(self) -> tuple:
        """What "the same install" means: the DSL, its build, torch and the compiler and frontend lanes
        too, so two lanes' runs stand side by side in a merge and a difference between them shows (a
        record written before a lane's field came from its default lane, the only one then)."""
        return (self.dsl, self.dsl_libs, self.dsl_cuda, self.torch, self.torch_cuda, self.compiler or LEGACY_COMPILER,
                self.frontend or "default")

    def install_name(self) -> str:
        """The install in a few words: ``dsl 4.8.1, torch 2.11.0+cu130[, extension compiler][, pyir frontend]``."""
        lane = ", extension compiler" if self.compiler == EXTENSION_COMPILER else ""
        lane += f", {self.frontend} frontend" if self.frontend not in (None, "default") else ""
        return f"dsl {self.dsl or '?'}, torch {self.torch or '?'}{lane}"

    def changed(self, other: Fingerprint) -> list[str]:
        """The fields either records in which ``other`` differs, in field order."""
        return [f.name for f in fields(self) if getattr(self, f.name) != getattr(other, f.name)
                and not (f.name == "frontend" and (self.frontend or "default") == (other.frontend or "default"))]

    def header_lines(self) -> list[str]:
        """The report header's lines of a gathered (complete) fingerprint."""
        return [
            f"cute-dsl: {self.dsl} (libs: {self.dsl_libs}; built for CUDA {self.dsl_cuda}; "
            f"compiler: {self.compiler}; {self.dsl_loader})",
            f"torch: {self.torch} (CUDA {self.torch_cuda}); apache-tvm-ffi: {self.tvm_ffi}; python {self.python}",
            f"driver: {self.driver} (CUDA {self.driver_cuda}); gpu: {self.gpu}"
            + (f" (sm_{self.compute_capability.replace('.', '')})" if self.gpu != NO_GPU else ""),
        ]

    def to_json(self) -> dict[str, str]:
        """The fields it records, in field order."""
        return {name: value for name, value in asdict(self).items() if value is not None}

    @classmethod
    def from_json(cls, data, where: str = "fingerprint") -> Fingerprint:
        """A fingerprint as any report or baseline wrote it (fields it lacks are None, fields this
        harness no longer knows are dropped); ValueError says in one line why not."""
        if not isinstance(data, dict):
            raise ValueError(f"{where}: expected a JSON object, got {type(data).__name__}")
        known = {f.name for f in fields(cls)}
        wrong = [k for k, v in data.items() if k in known and not isinstance(v, str)]
        if wrong:
            raise ValueError(f"{where}: {', '.join(wrong)} not a string")
        return cls(**{k: v for k, v in data.items() if k in known})


@dataclass
class CaseRecord:
    """A matrix case's facts, as the plugin stamps them on its test (``Case`` in the harness)."""

    id: str  # stage-dtype-align-layout-MxN
    stage: str
    dtype: str
    align: str = ""  # "" in runs written before schema 5
    layout: str = ""
    family: str = ""  # the shape family (aligned, odd, unit, ...)


@dataclass
class BandwidthRecord:
    """One bench case's measurement, and its baseline verdict where there was a baseline: what
    results.json, the summary, the plots, ``compare`` and (as pytest-benchmark's extra_info) a
    baseline file keep of it. Fields after ``rel_noise`` were added over time, so an older
    record reads with their defaults."""

    case: str  # the bench case id (what a baseline is keyed by)
    stage: str  # a stage name, or torch_add / d2d_copy
    dtype: str
    size: str  # "bandwidth" (streams) or "launch" (launch-bound): see SIZES
    shape: list[int]
    bytes: int  # moved per launch: both inputs read and the output written once
    gbps: float  # the placements' trimmed mean (fixtures.bandwidth.measure)
    median_s: float  # seconds per launch at that rate
    spread_s: float  # the typical placement's interquartile range
    samples: int
    rel_noise: float  # relative standard deviation of the samples
    ceiling_gbps: float  # this session's device-to-device copy
    pct_ceiling: float
    spec_peak_gbps: float | None = None  # NVML's memory clock x bus width; None without NVML
    pct_peak: float | None = None
    timing: str = "events"  # "events" (one launch a sample) or "graph" (a replay over operand sets)
    launches_per_sample: int = 1
    converged: bool = True  # the noise fell under the rule before the time limit
    throttled: int = 0  # samples discarded while NVML reported a throttle reason
    throttle_reasons: list[str] = field(default_factory=list)
    host_late: int = 0  # samples discarded because the host enqueued after the stream hold ended
    placements_gbps: list[float] = field(default_factory=list)  # every placement's GB/s
    placement_spread_pct: float | None = None
    measurements: int = 1  # 2 or more: re-measured on fresh placements before calling it slower
    planted_slowdown: float | None = None  # a --bandwidth-plant-slowdown drill's bytes moved beyond those counted (never less than asked)
    # the baseline verdict: "new" without a reference for this case, else same / slower / faster
    verdict: str = ""
    baseline_gbps: float | None = None
    baseline_runs: int | None = None  # machine starts the reference is the median of
    baseline_spread_pct: float | None = None  # between those starts
    delta_pct: float | None = None
    threshold_pct: float | None = None  # the smallest slowdown this case can call
    # what the verdict rests on: "board" (the board's own runs), "traveling" (reports.gate.judge_traveling)
    # or "" (no baseline); a traveling verdict's baseline_gbps is the reference's ratio times this
    # run's yardstick (the reference kernel measured on the same GPU)
    basis: str = ""
    yardstick: str = ""  # the traveling verdict's reference case (torch_add-..., d2d_copy-1GiB); "" for none
    yardstick_gbps: float | None = None  # as measured beside it in this run

    @classmethod
    def from_dict(cls, data: dict, where: str = "bandwidth") -> BandwidthRecord:
        return _build(cls, data, where)

    def to_dict(self) -> dict:
        return asdict(self)


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
    index_widths: str = ""  # bits a block index is scaled in on its way into an address ("32", "64", "32,64"; ptx.index_widths)


@dataclass
class ReproOperand:
    """One operand as the harness placed and filled it (``fixtures.dsl.tensors``, ``fixtures.dsl.fill``)."""

    name: str  # a, b or c
    stored: list[int]  # the extents it is stored with: 1 along a broadcast mode (then expanded to the case's shape)
    strides: list[int]  # elements
    base_offset: int  # elements past a 16-byte boundary
    guard: int  # guard band elements on each side
    assumed_align: int | None  # what from_dlpack is told (None: the element's own)
    same_as: str = ""  # the operand whose tensor this one is (an in-place call); "" for its own
    # an input's edge values, in its distinct elements (a broadcast mode narrowed to one), after the random fill
    edge_rows: list[int] = field(default_factory=list)
    edge_cols: list[int] = field(default_factory=list)
    edge_bits: list[int] = field(default_factory=list)  # bit patterns (a float type's) or values (an integer type's)


@dataclass
class ReproModule:
    """A module a reproducer carries: the stage's own and what it imports of the harness or the user's package."""

    name: str  # dotted, as imported
    path: str  # relative to the folder it is imported from
    digest: str  # sha256 of its text: its key in ``RunResult.repro_sources``


@dataclass
class ReproSpec:
    """What a failing gpu case's standalone reproducer needs (``python -m reports repro``): the
    kernel, the operands exactly as placed and filled, the launch and the comparison."""

    case: str  # the case id
    failure: str  # the class of what the harness raised: Mismatch, Unwritten, ..., or the CUDA error's
    shape: list[int]
    dtype: str  # torch's name (float16)
    low: float  # random inputs come from [low, high)
    high: float
    mode: str  # how the DSL sees the layouts: static, dynamic or compact
    compact_divisibility: int  # N's divisibility under compact
    operands: list[ReproOperand]
    seed: int
    poison_bits: int | None  # a float output's poison; None: chosen per launch (integers) or the prior input (in place)
    op: str  # add, mul or mul_relu
    takes_op: bool
    rtol: float  # 0 and 0: compared exactly
    atol: float
    launch_module: str
    launch_function: str
    modules: list[ReproModule]  # in import order, the launch function's module last
    block_elements: int  # a fill past this many elements draws a block of rows at a time
    guard_byte: int
    edges: bool = True
    shrunk: str = "not shrunk"  # or how it was (a drawn case: by Hypothesis)


@dataclass(frozen=True)
class Board:
    """What identifies the hardware behind a bandwidth figure: the board, its settings and its
    host's CPU. Runs of one board judge it (``reports.baseline``); a board with another VBIOS,
    memory clock, power limit or CPU is another board, since each moves its figures."""

    uuid: str
    serial: str = ""  # NVML's board serial; "" where it does not say
    part_number: str = ""
    vbios: str = ""
    memory_clock_mhz: int | None = None  # maximum
    power_limit_w: float | None = None  # enforced
    cpu: str = ""  # the host's CPU model

    @property
    def id(self) -> str:
        """The board's own name: its serial, else its UUID."""
        return self.serial or self.uuid

    def identity(self) -> tuple:
        """What two runs must share to be one board's."""
        return (self.id, self.part_number, self.vbios, self.memory_clock_mhz, self.power_limit_w, self.cpu)

    def differences(self, other: Board) -> list[str]:
        """The facts in which ``other`` (the same board id) differs from this one, in words."""
        return [f"{name} {getattr(other, name)} (now {getattr(self, name)})"
                for name in ("part_number", "vbios", "memory_clock_mhz", "power_limit_w", "cpu")
                if getattr(self, name) != getattr(other, name)]

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict) -> Board:
        return _build(cls, data, "board")


@dataclass
class GpuRecord:
    """One GPU a run used: what the report header lists and a case names by ``uuid``."""

    index: int  # NVML's (nvidia-smi's) index on its host
    uuid: str
    name: str  # the model, as NVML names it
    memory_mib: int
    memory_clock_mhz: int | None  # NVML's maximum memory clock; None where it does not say
    host: str
    health: str = ""  # "" while it served the run; else why it stopped ("GPU LOST: ...", a fault storm's reason)
    # the board's own facts (``Board``); "" or None where NVML does not say (and in runs before schema 8)
    serial: str = ""
    part_number: str = ""
    vbios: str = ""
    power_limit_w: float | None = None
    cpu: str = ""

    def board(self) -> Board:
        return Board(self.uuid, self.serial, self.part_number, self.vbios, self.memory_clock_mhz, self.power_limit_w,
                     self.cpu)


@dataclass
class ApiDrift:
    """How one DSL capability the harness uses resolved in this install (``fixtures.dsl.compat``)."""

    capability: str
    used: str | None  # the spelling found; None where this release has none
    preferred: str  # the current spelling
    drifted: bool = False  # an older spelling was used
    note: str = ""  # the capability's history


@dataclass
class Deprecation:
    """A DSL deprecation a run met: what breaks in a later release."""

    category: str
    message: str
    where: str = ""  # file:line of the warning
    first_case: str = ""  # the first case that met it ("" at collection)


@dataclass
class CompileTally:
    """Kernel compiles across every process of a run, and the distinct signatures among them."""

    compiles: int
    distinct_signatures: int


@dataclass
class BaselineInfo:
    """What a run's bandwidth was judged against: a baseline file (its path, install, machine
    starts), or why none (``note``)."""

    path: str = ""
    fingerprint: Fingerprint = field(default_factory=Fingerprint)
    runs: int | None = None
    note: str = ""


@dataclass
class MergedRun:
    """One run a merged report was made from (``python -m reports merge``)."""

    path: str
    host: str
    started: str
    fingerprint: Fingerprint
    status: str
    exit_status: int | None
    cases: int
    compiles: CompileTally | None = None


@dataclass
class HostCost:
    """One host cost a run measured (issue 47: import, conversion, compile, call, memory kept per
    cycle), its samples in ``unit``; ``python -m reports ab`` judges two installs' figures."""

    name: str
    unit: str
    samples: list[float]

    @property
    def median(self) -> float:
        return statistics.median(self.samples)


@dataclass
class CaseResult:
    nodeid: str
    outcome: str  # passed, failed, skipped, xfailed, xpassed, error
    tier: str
    duration_s: float
    reason: str = ""
    message: str = ""
    case: CaseRecord | None = None  # matrix cases
    bandwidth: BandwidthRecord | None = None  # bench cases: the measurement, and its baseline verdict if any
    ptx: PtxFacts | None = None  # compile-tier cases of registered stages
    gpu: str = ""  # the UUID of the GPU a gpu or bench case ran on (see RunResult.gpus)
    source: int | None = None  # in a merged report: the run it came from (an index into RunResult.merged_from)
    repro: ReproSpec | None = None  # a failing gpu case's reproducer record
    host_costs: list[HostCost] = field(default_factory=list)  # the figures a host-cost case measured
    semantics: list[Meaning] = field(default_factory=list)  # what a semantics case observed of the release's meanings
    worker: str = ""  # the process that ran it: an xdist worker (gw3), "bench" (the serial bench phase; "bench-gpuN" of several), "" (the controller)
    start_s: float | None = None  # when its setup began, seconds after the run's start (Timeline.epoch)
    stop_s: float | None = None  # when its teardown ended, likewise
    cpu_s: float | None = None  # its process's CPU seconds over that span, its waited-for children's too (None before schema 12)


@dataclass
class Meaning:
    """What one path of a release does where the DSL defines an operation's meaning itself (the
    sign of ``%``, an out-of-range conversion): ``reports.semantics`` tables them per release."""

    subject: str  # "% on operands of different signs"
    type: str  # "Int8", or "Float32 to Int8"
    path: str  # gpu or host
    meaning: str  # "C: the sign of the dividend (torch.fmod)"
    cpu: str = ""  # a host result the CPU decides: the CPU class it holds on ("x86-64 without AVX-512")


@dataclass
class InstallFinding:
    """One thing wrong with the install, found at start: what kind, which file, package or
    variable, what was seen, and how to repair it."""

    cause: str  # files | duplicate | shadowed | requirement | import | environment | patched | build
    subject: str  # the package, module or variable
    detail: str
    repair: str

    def line(self) -> str:
        return f"{self.subject}: {self.detail}; repair: {self.repair}"


@dataclass
class Span:
    """One process's phase in a run's timeline, seconds after the run's start: an xdist worker's
    start-up (``started`` to ``ready``: its imports), its collection, its end; a bench process's
    compiling ahead and its measuring."""

    process: str  # gw3, bench, bench-gpu1
    phase: str  # "start-up", "collection", "cases", "compile ahead", "measure"; the controller's "set-up"
    start_s: float
    stop_s: float


@dataclass
class Timeline:
    """Where a run's wall time went (``python -m reports timeline``): the run's start as epoch
    seconds, and each process's phases; the cases carry their own worker, start and stop."""

    epoch: float
    spans: list[Span] = field(default_factory=list)
    controller_start_s: float | None = None  # the controller's process began (negative: before the run's start)
    parallel_end_s: float | None = None  # the last xdist worker done
    bench_go_s: float | None = None  # when the bench phase was told to measure
    end_s: float | None = None  # the report written


@dataclass
class RunResult:
    fingerprint: Fingerprint
    arch: str
    started: str
    finished: str = ""
    exit_status: int | None = None
    api_drift: list[ApiDrift] = field(default_factory=list)
    deprecations: list[Deprecation] = field(default_factory=list)  # DSL deprecations seen: what breaks next release
    compiles: CompileTally | None = None
    cases: list[CaseResult] = field(default_factory=list)
    baseline: BaselineInfo = field(default_factory=BaselineInfo)
    status: str = "complete"  # how the run ended (STATUSES); a run written before schema 4 was complete
    collected: int | None = None  # cases selected to run; None in runs written before schema 4
    notes: list[str] = field(default_factory=list)  # what went wrong in the harness itself (a plot not written)
    registered_stages: list[str] = field(default_factory=list)  # kernels of the user's (--stage-module)
    host: str = ""
    selection: str = ""  # the run's -k, -m and PAIRS_SAMPLE, as given ("" for none): what a run that selected nothing names
    gpus: list[GpuRecord] = field(default_factory=list)  # in use, in pinning order
    merged_from: list[MergedRun] = field(default_factory=list)  # a merged report's runs; empty for a run
    repro_sources: dict[str, str] = field(default_factory=dict)  # module texts the cases' ReproSpecs name, by digest
    install: list[InstallFinding] = field(default_factory=list)  # what stopped the run at start (status "install broken")
    environment: dict[str, str] = field(default_factory=dict)  # the CUTE_DSL_* variables the user set, before the harness's own
    timeline: Timeline | None = None  # where the run's wall time went (absent before schema 11, and from merged reports)

    def gpu(self, uuid: str) -> GpuRecord | None:
        return next((g for g in self.gpus if g.uuid == uuid), None)

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
        dtypes = _first_seen(c.bandwidth.dtype for c in bench)
        stages = _first_seen(c.bandwidth.stage for c in bench)

        def key(c: CaseResult):
            b = c.bandwidth
            size = SIZES.index(b.size) if b.size in SIZES else len(SIZES)
            return size, b.size, dtypes[b.dtype], b.stage in REFERENCE_STAGES, stages[b.stage]

        return sorted(bench, key=key)

    def to_json(self) -> dict:
        data = asdict(self)
        # each fingerprint as the fields it records (asdict would write the others as null)
        data["fingerprint"] = self.fingerprint.to_json()
        data["baseline"]["fingerprint"] = self.baseline.fingerprint.to_json()
        for merged, written in zip(self.merged_from, data["merged_from"]):
            written["fingerprint"] = merged.fingerprint.to_json()
        return {"schema": SCHEMA, **data, "counts": dict(self.counts()), "not_run": self.not_run}

    @classmethod
    def from_json(cls, data) -> RunResult:
        """A run from results.json of any readable schema; ValueError says in one line why not."""
        if not isinstance(data, dict):
            raise ValueError(f"expected a JSON object, got {type(data).__name__}")
        schema = data.get("schema")
        if schema not in READABLE_SCHEMAS:
            raise ValueError(f"unknown schema {schema!r} (readable: {', '.join(READABLE_SCHEMAS)})")
        run = _build(cls, data, "run")
        run.fingerprint = Fingerprint.from_json(run.fingerprint)
        if run.status not in STATUSES:
            raise ValueError(f"unknown status {run.status!r} (known: {', '.join(STATUSES)})")
        cases = data.get("cases")
        if not isinstance(cases, list):
            raise ValueError("'cases' is missing or not a list")
        run.cases = [_case(c, f"case {i}") for i, c in enumerate(cases)]
        run.gpus = [_build(GpuRecord, g, f"gpu {i}") for i, g in enumerate(run.gpus)]
        run.merged_from = [_build(MergedRun, m, f"merged run {i}") for i, m in enumerate(run.merged_from)]
        for i, merged in enumerate(run.merged_from):
            merged.fingerprint = Fingerprint.from_json(merged.fingerprint, f"merged run {i} fingerprint")
            merged.compiles = _build(CompileTally, merged.compiles, "merged run compiles") if merged.compiles else None
        run.api_drift = [_build(ApiDrift, d, f"api drift {i}") for i, d in enumerate(run.api_drift)]
        run.deprecations = [_build(Deprecation, d, f"deprecation {i}") for i, d in enumerate(run.deprecations)]
        run.install = [_build(InstallFinding, f, f"install finding {i}") for i, f in enumerate(run.install)]
        run.compiles = _build(CompileTally, run.compiles, "compiles") if run.compiles else None  # {} before: none
        if run.timeline is not None:
            run.timeline = _build(Timeline, run.timeline, "timeline")
            run.timeline.spans = [_build(Span, p, f"timeline span {i}") for i, p in enumerate(run.timeline.spans)]
        if isinstance(run.baseline, dict):  # absent from the earliest schema: the default stands
            run.baseline = _build(BaselineInfo, run.baseline, "baseline")
            run.baseline.fingerprint = Fingerprint.from_json(data["baseline"].get("fingerprint", {}), "baseline fingerprint")
        return run


def _case(data, where: str) -> CaseResult:
    case = _build(CaseResult, data, where)
    if case.case is not None:
        case.case = _build(CaseRecord, case.case, f"{where} case")
    if case.ptx is not None:
        case.ptx = _build(PtxFacts, case.ptx, f"{where} ptx")
    if case.bandwidth is not None:
        case.bandwidth = BandwidthRecord.from_dict(case.bandwidth, f"{where} bandwidth")
    if case.repro is not None:
        case.repro = repro_spec(case.repro, f"{where} repro")
    case.host_costs = [_build(HostCost, h, f"{where} host cost {i}") for i, h in enumerate(case.host_costs)]
    case.semantics = [_build(Meaning, m, f"{where} meaning {i}") for i, m in enumerate(case.semantics)]
    return case


def repro_spec(data, where: str = "repro") -> ReproSpec:
    """A ``ReproSpec`` from its plain data (results.json, or a report's user properties)."""
    spec = _build(ReproSpec, data, where)
    spec.operands = [_build(ReproOperand, o, f"{where} operand {i}") for i, o in enumerate(spec.operands)]
    spec.modules = [_build(ReproModule, m, f"{where} module {i}") for i, m in enumerate(spec.modules)]
    return spec


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
