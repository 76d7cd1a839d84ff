"""Bandwidth baselines: pytest-benchmark JSON files under ``reports/baselines/``, one per install.

A baseline is what pytest-benchmark writes for a run (machine_info, benchmarks with stats and
extra_info), with the harness's fingerprint added to machine_info so it can be matched to an
install, plus ``cute_harness_runs``: the figures of every run saved into it, each from its own
machine start and naming the board that measured it (``reports.model.Board``). Boards of one
model read apart by more than a run's noise (1-3% between hosts of one fleet), so a GPU is judged
only against runs of its own board (``Baseline.runs_of``): the median of several starts and their
spread (``CaseReference``), never one start's figure. A board without runs of its own gets the
traveling verdict, which reads each case against a reference kernel measured beside it
(``RatioReference``, over every board's runs). A file without the runs list (one saved before
they existed) reads as one run; runs saved before boards were named judge no board of their own.
Each run names how its figures were measured (``METHOD``): runs of an older method are kept in
the file but judge nothing, and the next save of the install drops them.

Loading refuses, in one line, a file that is not such a baseline and one recorded on another
GPU model; saving is atomic, adds this run to the same install's earlier ones (a later save
from the same machine start replaces that start's run) and merges the benchmarks by case.
"""

from __future__ import annotations

import fnmatch
import json
import math
import re
import statistics
from dataclasses import dataclass
from pathlib import Path

from reports import atomic
from reports.model import NO_GPU, Board, Fingerprint
from reports.usage import HarnessUsageError

FOLDER = Path(__file__).parent / "baselines"
FINGERPRINT_KEY = "cute_harness_fingerprint"
BOARD_KEY = "cute_harness_board"  # in a run's pytest-benchmark machine_info: the board that measured it
RUNS_KEY = "cute_harness_runs"
MIN_RUNS = 3  # machine starts a case's reference needs before its spread is trusted
# what a run's figures are: the trimmed mean over a case's placements (fixtures.bandwidth.measure)
METHOD = "placements-trimmed-mean"
OLDER_METHOD = "fastest-placement"  # runs saved before runs named their method: the fastest of three
_BOOT_ID = Path("/proc/sys/kernel/random/boot_id")
# what the gate reads of each case, and what a usable value of it is
_REQUIRED = {
    "case": ("a case id", lambda v: isinstance(v, str) and bool(v)),
    "gbps": ("a positive number", lambda v: _number(v) and v > 0),
    "median_s": ("a positive number", lambda v: _number(v) and v > 0),
    "spread_s": ("a number >= 0", lambda v: _number(v) and v >= 0),
    "samples": ("a positive integer", lambda v: isinstance(v, int) and not isinstance(v, bool) and v > 0),
}


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


class BaselineError(HarnessUsageError):
    """A baseline that cannot be used, with the one-line reason."""


@dataclass(frozen=True)
class Figures:
    """One case as one run measured it: what the gate needs of it."""

    gbps: float
    median_s: float
    spread_s: float
    samples: int

    @property
    def median_error(self) -> float:
        return median_error(self.median_s, self.spread_s, self.samples)

    @classmethod
    def of(cls, record: dict) -> Figures:
        return cls(*(record[k] for k in _FIGURES))


_MEDIAN_EFFICIENCY = 1.2533  # the median's standard error over the mean's, for normal noise
_IQR_PER_SIGMA = 1.349
_FIGURES = ("gbps", "median_s", "spread_s", "samples")


def median_error(median_s: float, spread_s: float, samples: int) -> float:
    """Relative standard error of a run's median (robust sigma from the IQR): what the gate
    combines into a threshold, and what the bench timing samples down to."""
    sigma = spread_s / _IQR_PER_SIGMA / median_s
    return _MEDIAN_EFFICIENCY * sigma / math.sqrt(samples)


@dataclass(frozen=True)
class SavedRun:
    """One run saved into a baseline: when, on which machine start and board, its figures per case."""

    saved: str
    boot_id: str  # the machine start it ran on ("" where unknown)
    cases: dict[str, Figures]
    method: str = METHOD  # how its figures were measured
    board: Board | None = None  # the board that measured it; None in runs saved before boards were named

    def to_json(self) -> dict:
        return {"saved": self.saved, "boot_id": self.boot_id, "method": self.method,
                **({"board": self.board.to_json()} if self.board else {}),
                "cases": {case: {k: getattr(f, k) for k in _FIGURES} for case, f in self.cases.items()}}

    def same_board(self, board: Board | None, equivalent: tuple[frozenset[str], ...] = ()) -> bool:
        """Whether this run was measured on ``board`` (the same identity), or on a board declared
        equivalent to it (``equivalent``: groups of board ids); a run or board NVML could not name
        is no board's."""
        if self.board is None or board is None:
            return False
        return self.board.identity() == board.identity() or any({self.board.id, board.id} <= group for group in equivalent)


@dataclass(frozen=True)
class CaseReference:
    """What one case is judged against: its figures over the baseline's runs."""

    case: str
    runs: tuple[Figures, ...]

    @property
    def count(self) -> int:
        return len(self.runs)

    @property
    def gbps(self) -> float:
        """The median over runs: one outlying start moves it little."""
        return statistics.median(f.gbps for f in self.runs)

    @property
    def median_s(self) -> float:
        return statistics.median(f.median_s for f in self.runs)

    @property
    def spread_pct(self) -> float:
        """Lowest to highest run, in percent of the reference."""
        rates = [f.gbps for f in self.runs]
        return 100 * (max(rates) - min(rates)) / self.gbps

    @property
    def between_sigma(self) -> float:
        """Relative standard deviation between runs (machine starts); 0 with one run."""
        return statistics.stdev(f.gbps for f in self.runs) / self.gbps if self.count > 1 else 0.0

    @property
    def median_error(self) -> float:
        return statistics.median(f.median_error for f in self.runs)


@dataclass(frozen=True)
class RatioReference:
    """What the traveling verdict judges a case by: its GB/s over its yardstick's (the reference
    kernel measured beside it, ``reports.gate.yardstick``) in each run, one ratio per board (the
    median of its runs), so the spread is the one across boards and hosts."""

    case: str
    yardstick: str
    ratios: tuple[float, ...]  # one per board, in the baseline's order
    median_error: float  # relative standard error of one run's ratio (both figures'), the median over runs

    @property
    def count(self) -> int:
        return len(self.ratios)

    @property
    def ratio(self) -> float:
        return statistics.median(self.ratios)

    @property
    def between_sigma(self) -> float:
        """Relative standard deviation of the ratio across boards; 0 with one board."""
        return statistics.stdev(self.ratios) / self.ratio if self.count > 1 else 0.0

    @property
    def spread_pct(self) -> float:
        return 100 * (max(self.ratios) - min(self.ratios)) / self.ratio


@dataclass
class Baseline:
    path: Path
    fingerprint: Fingerprint
    document: dict  # the pytest-benchmark JSON, with the runs list
    runs: list[SavedRun]

    @property
    def current_runs(self) -> list[SavedRun]:
        """The runs measured as this harness measures (``METHOD``): the only ones that judge."""
        return [run for run in self.runs if run.method == METHOD]

    def runs_of(self, board: Board | None, equivalent: tuple[frozenset[str], ...] = ()) -> list[SavedRun]:
        """The current runs measured on ``board`` (or a board declared equivalent): what judges it."""
        return [run for run in self.current_runs if run.same_board(board, equivalent)]

    def boards(self) -> list[str]:
        """The ids of the boards with current runs, in the file's order."""
        return list(dict.fromkeys(run.board.id for run in self.current_runs if run.board))

    def changed(self, board: Board) -> list[str]:
        """How this board's id's runs differ from it now (another VBIOS, clock, power limit or
        CPU): why a board that has runs is still judged as one without."""
        return list(dict.fromkeys(d for run in self.current_runs if run.board and run.board.id == board.id
                                  and run.board.identity() != board.identity() for d in board.differences(run.board)))

    def references(self, runs: list[SavedRun]) -> dict[str, CaseReference]:
        """Each case's figures over ``runs`` (one board's)."""
        found: dict[str, list[Figures]] = {}
        for run in runs:
            for case, figures in run.cases.items():
                found.setdefault(case, []).append(figures)
        return {case: CaseReference(case, tuple(figures)) for case, figures in found.items()}

    def ratio_reference(self, case: str, yardstick: str) -> RatioReference | None:
        """``case`` over ``yardstick`` in every current run that measured both, one ratio per
        board (a run of an unnamed board counts as a board of its own); None where none did."""
        by_board: dict[object, list[float]] = {}
        errors = []
        for i, run in enumerate(self.current_runs):
            now, under = run.cases.get(case), run.cases.get(yardstick)
            if now is None or under is None:
                continue
            by_board.setdefault(run.board.identity() if run.board else i, []).append(now.gbps / under.gbps)
            errors.append(math.hypot(now.median_error, under.median_error))
        if not by_board:
            return None
        ratios = tuple(statistics.median(ratios) for ratios in by_board.values())
        return RatioReference(case, yardstick, ratios, statistics.median(errors))


def slug(fp: Fingerprint) -> str:
    """A file name naming the install: GPU, driver, CUDA, DSL and torch."""
    text = f"{fp.gpu}-driver{fp.driver}-cuda{fp.driver_cuda}-dsl{fp.dsl}-torch{fp.torch}"
    return re.sub(r"[^A-Za-z0-9.]+", "_", text).strip("_")


def default_path(fp: Fingerprint, folder: Path = FOLDER) -> Path:
    return folder / f"{slug(fp)}.json"


def load(path: Path) -> Baseline:
    try:
        document = json.loads(Path(path).read_text())
    except OSError as exc:
        raise BaselineError(f"baseline {path}: cannot read it ({exc.strerror or exc})") from None
    except json.JSONDecodeError as exc:
        raise BaselineError(f"baseline {path}: not JSON ({exc.msg} at line {exc.lineno})") from None
    recorded = document.get("machine_info", {}).get(FINGERPRINT_KEY) if isinstance(document, dict) else None
    if not isinstance(recorded, dict) or "gpu" not in recorded:
        raise BaselineError(f"baseline {path}: no machine_info.{FINGERPRINT_KEY}; not a baseline this harness saved")
    try:
        fp = Fingerprint.from_json(recorded, f"machine_info.{FINGERPRINT_KEY}")
    except ValueError as exc:
        raise BaselineError(f"baseline {path}: {exc}") from None
    benchmarks = document.get("benchmarks")
    if not isinstance(benchmarks, list):
        raise BaselineError(f"baseline {path}: no benchmarks list")
    for i, bench in enumerate(benchmarks):
        info = bench.get("extra_info") if isinstance(bench, dict) else None
        missing = [k for k in _REQUIRED if not isinstance(info, dict) or k not in info]
        if missing:
            raise BaselineError(f"baseline {path}: benchmark {i} lacks extra_info {', '.join(missing)}")
        _check_values(path, f"benchmark {i} extra_info", info, _REQUIRED)
    return Baseline(Path(path), fp, document, _runs(path, document))


def _check_values(path: Path, where: str, record: dict, rules: dict) -> None:
    for key, (wanted, valid) in rules.items():
        if key not in record:
            raise BaselineError(f"baseline {path}: {where} lacks {key}")
        if not valid(record[key]):
            raise BaselineError(f"baseline {path}: {where}.{key} is {record[key]!r}, expected {wanted}")


def _runs(path: Path, document: dict) -> list[SavedRun]:
    """The saved runs; a file from before the runs list is one run of its benchmarks."""
    if RUNS_KEY not in document:
        cases = {b["extra_info"]["case"]: Figures.of(b["extra_info"]) for b in document["benchmarks"]}
        return [SavedRun(str(document.get("datetime", "")), "", cases, OLDER_METHOD)]
    runs = document[RUNS_KEY]
    if not isinstance(runs, list) or not runs:
        raise BaselineError(f"baseline {path}: {RUNS_KEY} is not a non-empty list")
    rules = {k: v for k, v in _REQUIRED.items() if k != "case"}
    loaded = []
    for i, run in enumerate(runs):
        if not isinstance(run, dict) or not isinstance(run.get("cases"), dict) or not run["cases"]:
            raise BaselineError(f"baseline {path}: {RUNS_KEY}[{i}] has no cases")
        for case, record in run["cases"].items():
            if not isinstance(record, dict):
                raise BaselineError(f"baseline {path}: {RUNS_KEY}[{i}] case {case!r} is not an object")
            _check_values(path, f"{RUNS_KEY}[{i}] case {case!r}", record, rules)
        cases = {case: Figures.of(record) for case, record in run["cases"].items()}
        try:
            board = Board.from_json(run["board"]) if "board" in run else None
        except (ValueError, TypeError) as exc:
            raise BaselineError(f"baseline {path}: {RUNS_KEY}[{i}] board: {exc}") from None
        loaded.append(SavedRun(str(run.get("saved", "")), str(run.get("boot_id", "")), cases,
                               str(run.get("method", OLDER_METHOD)), board))
    return loaded


def check_comparable(baseline: Baseline, fp: Fingerprint) -> None:
    if baseline.fingerprint.gpu != fp.gpu:
        raise BaselineError(
            f"baseline {baseline.path.name} was recorded on {baseline.fingerprint.gpu}, this run is on {fp.gpu}: "
            "bandwidth is not comparable across GPU models"
        )


def select(choice: str, fp: Fingerprint, folder: Path = FOLDER) -> tuple[Baseline | None, str]:
    """The baseline ``--bandwidth-baseline`` names (``auto``: the one for this install, if any;
    ``none``: no comparison) and a line saying what was chosen."""
    if choice == "none":
        return None, "no comparison (--bandwidth-baseline none)"
    if choice == "auto":
        path = default_path(fp, folder)
        if not path.exists():
            if fp.gpu == NO_GPU:  # --bandwidth-save is refused here: nothing to record
                return None, f"no baseline for this install ({path.name}); none can be recorded without a GPU"
            return None, f"no baseline for this install ({path.name}); record one with --bandwidth-save"
    else:
        path = Path(choice)
    baseline = load(path)
    check_comparable(baseline, fp)
    try:
        check_current(baseline)
    except BaselineError as exc:
        if choice != "auto":
            raise
        return None, f"no comparison: {exc}"
    return baseline, f"compared with {path}"


def check_current(baseline: Baseline) -> None:
    """A baseline with no run measured as this harness measures judges nothing: refused."""
    if not baseline.current_runs:
        methods = ", ".join(sorted({run.method for run in baseline.runs}))
        raise BaselineError(f"baseline {baseline.path.name} holds only runs measured as {methods} (this harness measures "
                            f"{METHOD}): record this install's runs again with --bandwidth-save")


def machine_start() -> str:
    """This machine start's id (Linux's boot id), so two saves from one start count as one run."""
    try:
        return _BOOT_ID.read_text().strip()
    except OSError:
        return ""


def merge(document: dict, fp: Fingerprint, previous: Baseline | None, run: SavedRun, replace: bool = False,
          same_start: bool = False) -> dict:
    """The baseline to save: ``document`` (this run's pytest-benchmark JSON) plus the cases of
    ``previous`` it did not measure, and ``run`` added to ``previous``'s runs, when ``previous``
    is the same install's baseline and ``replace`` does not start over. A run of ``previous``
    from the same board and machine start as ``run`` gives way to it (starts, not saves, are
    what count) unless ``same_start`` keeps it (a runner that is not restarted between its
    baseline runs); so do runs measured by another method than ``run``'s."""
    document = {**document, "machine_info": {**document.get("machine_info", {}), FINGERPRINT_KEY: fp.to_json()}}
    if previous is None or replace or slug(previous.fingerprint) != slug(fp):
        return {**document, RUNS_KEY: [run.to_json()]}
    measured = {b["extra_info"]["case"] for b in document["benchmarks"]}
    kept = [b for b in previous.document["benchmarks"] if b["extra_info"]["case"] not in measured]
    earlier = [r for r in previous.runs if r.method == run.method and (same_start or not _same_start(r, run))]
    return {**document, "benchmarks": kept + document["benchmarks"], RUNS_KEY: [r.to_json() for r in [*earlier, run]]}


def _same_start(earlier: SavedRun, run: SavedRun) -> bool:
    """Whether ``earlier`` was measured on ``run``'s machine start and board (runs before boards
    were named: on its machine start)."""
    same_board = earlier.board is None or run.board is None or earlier.board.identity() == run.board.identity()
    return bool(run.boot_id) and earlier.boot_id == run.boot_id and same_board


def run_of(document: dict, saved: str, boot_id: str) -> SavedRun:
    """This run's figures from its pytest-benchmark JSON (each benchmark's extra_info), with the
    board its machine_info names."""
    return SavedRun(saved, boot_id, {b["extra_info"]["case"]: Figures.of(b["extra_info"]) for b in document["benchmarks"]},
                    board=board_of(document))


def board_of(document: dict) -> Board | None:
    """The board a bench process's pytest-benchmark document names (None: one NVML could not name)."""
    board = document.get("machine_info", {}).get(BOARD_KEY)
    return Board.from_json(board) if board else None


def by_install(documents: list[dict]) -> list[tuple[Fingerprint, list[dict]]]:
    """The bench documents of one run (one per GPU that measured, each one board's run) grouped
    by install, with its fingerprint: each install's baseline gets one run per board."""
    grouped: dict[str, tuple[Fingerprint, list[dict]]] = {}
    for document in documents:
        fp = Fingerprint.from_json(document["machine_info"][FINGERPRINT_KEY])
        grouped.setdefault(slug(fp), (fp, []))[1].append(document)
    return list(grouped.values())


def merge_runs(documents: list[dict], fp: Fingerprint, previous: Baseline | None, path: Path, boot_id: str,
               replace: bool = False, same_start: bool = False) -> dict:
    """``documents`` (one install's, one per board) merged into ``previous`` one after another,
    each a run of its board (``replace`` starts the file over with the first)."""
    current, merged = previous, {}
    for i, document in enumerate(documents):
        run = run_of(document, document.get("datetime", ""), boot_id)
        merged = merge(document, fp, current, run, replace and i == 0, same_start)
        current = Baseline(Path(path), fp, merged, _runs(Path(path), merged))
    return merged


def save(path: Path, document: dict) -> None:
    atomic.write_json(Path(path), document)


def forget(path: Path, patterns: list[str]) -> list[str]:
    """Drop the cases matching any of the globs ``patterns`` from every run of the baseline at
    ``path``, and their benchmarks, atomically: for figures that no longer mean what this run
    would measure (a stage's kernel changed, or how it is timed). They are judged ``new`` until
    starts re-measure them. Returns the dropped case ids."""
    loaded = load(path)
    known = sorted({case for run in loaded.runs for case in run.cases})
    dropped = [case for case in known if any(fnmatch.fnmatchcase(case, p) for p in patterns)]
    if not dropped:
        raise BaselineError(f"baseline {path}: no case matches {' '.join(patterns)}")
    if len(dropped) == len(known):
        raise BaselineError(f"baseline {path}: {' '.join(patterns)} matches every case; start it over with --replace")
    gone = set(dropped)
    document = loaded.document
    document["benchmarks"] = [b for b in document["benchmarks"] if b["extra_info"]["case"] not in gone]
    if RUNS_KEY in document:  # a file from before the runs list is its benchmarks alone
        runs = [{**run, "cases": {c: r for c, r in run["cases"].items() if c not in gone}} for run in document[RUNS_KEY]]
        document[RUNS_KEY] = [run for run in runs if run["cases"]]  # a run of dropped cases alone goes too
    save(path, document)
    return dropped
