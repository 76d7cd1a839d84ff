"""The bench tier's options and baseline handling, as a pytest plugin.

``--bandwidth-baseline`` picks the baseline at start (a bad or foreign one stops the run in
one line), each bench case asks ``judge`` for its verdict, and ``--bandwidth-save`` adds the
run to this install's baseline at the end (``--replace``: starts it over), atomically, and
only when every bench case passed and the run was not interrupted: a failed or killed run
leaves the previous baseline as it was.

Baselines are per GPU model: each process judges against its own GPU's (``auto``), and a run
whose bench phase measured on GPUs of several models saves one baseline per model.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from reports import atomic, gate
from reports import baseline as baseline_mod
from reports.bench_phase import PHASE_PLUGIN, STREAM_OPTION, document_path
from reports.model import BandwidthRecord
from reports.usage import HarnessUsageError


def add_options(group) -> None:
    group.addoption(
        "--bandwidth-baseline",
        default="auto",
        metavar="auto|none|PATH",
        help="baseline to judge bandwidth against (default auto: reports/baselines/<this install>.json if present)",
    )
    group.addoption(
        "--bandwidth-save",
        nargs="?",
        const="auto",
        default=None,
        metavar="PATH",
        help="save this run's bandwidth as a baseline (default path: reports/baselines/<this install>.json)",
    )
    group.addoption(
        "--replace",
        action="store_true",
        default=False,
        help="with --bandwidth-save: start the baseline over from this run instead of adding this run to it",
    )
    group.addoption(
        "--bandwidth-threshold",
        action="append",
        default=[],
        metavar="CASE_GLOB=PCT",
        help="a fixed slowdown threshold in percent for matching cases, instead of the noise-derived one (repeatable)",
    )
    group.addoption(
        "--bandwidth-plant-slowdown",
        type=float,
        default=None,
        metavar="FRACTION",
        help="add FRACTION of each case's baseline time to its timed work (proves the gate catches a slowdown)",
    )


@dataclass(frozen=True)
class BenchOptions:
    """The bench options, checked at start before anything heavy is imported."""

    overrides: list[tuple[str, float]]
    baseline_choice: str  # auto, none, or a path (already loaded into ``named_baseline``)
    named_baseline: baseline_mod.Baseline | None
    save_choice: str | None  # None, auto, or a path
    replace: bool  # start the saved baseline over instead of adding this run
    plant_fraction: float | None


def parse_options(config: pytest.Config) -> BenchOptions:
    """The bench options as given (a named baseline loaded and checked), or ``ValueError`` with
    the one-line reason; imports nothing heavy, so a typo is answered in a second."""
    overrides = [gate.parse_override(t) for t in config.getoption("--bandwidth-threshold")]
    choice = config.getoption("--bandwidth-baseline")
    named = baseline_mod.load(Path(choice)) if choice not in ("auto", "none") else None
    fraction = config.getoption("--bandwidth-plant-slowdown")
    if fraction is not None and not 0 < fraction < 1:
        raise HarnessUsageError(f"--bandwidth-plant-slowdown {fraction}: expected a fraction in (0, 1)")
    save = config.getoption("--bandwidth-save")
    if save not in (None, "auto"):
        atomic.writable_file("--bandwidth-save", Path(save))
    if config.getoption("--replace") and save is None:
        raise HarnessUsageError("--replace: only means something with --bandwidth-save (start its baseline over)")
    return BenchOptions(overrides, choice, named, save, config.getoption("--replace"), fraction)


class BenchGate:
    def __init__(self, config: pytest.Config, options: BenchOptions, fingerprint: dict) -> None:
        self.config = config
        self.fingerprint = fingerprint
        self.overrides = options.overrides
        if options.named_baseline is not None:
            baseline_mod.check_comparable(options.named_baseline, fingerprint)
            self.baseline, self.note = options.named_baseline, f"compared with {options.named_baseline.path}"
        else:
            self.baseline, self.note = baseline_mod.select(options.baseline_choice, fingerprint)
        self.plant_fraction = options.plant_fraction
        if self.plant_fraction is not None and self.baseline is None:
            raise HarnessUsageError(f"--bandwidth-plant-slowdown needs a baseline to size the slowdown ({self.note})")
        self.save_path, self._previous = self._save_target(options.save_choice)
        self.replace = options.replace
        self._references = self.baseline.references if self.baseline else {}
        self._bench_failed = 0
        self._bench_ran = 0
        self.saved_lines: list[str] = []

    def _save_target(self, choice: str | None) -> tuple[Path | None, baseline_mod.Baseline | None]:
        """Where ``--bandwidth-save`` writes and the baseline it replaces; a file there that is
        not this GPU's baseline is refused now, so it is never overwritten."""
        if choice is None:
            return None, None
        path = baseline_mod.default_path(self.fingerprint) if choice == "auto" else Path(choice)
        try:
            return path, _previous_at(path, self.fingerprint)
        except baseline_mod.BaselineError as exc:
            raise HarnessUsageError(f"--bandwidth-save: refusing to replace it: {exc}") from None

    def reference(self, case: str) -> baseline_mod.CaseReference | None:
        return self._references.get(case)

    def judge(self, record: BandwidthRecord) -> BandwidthRecord:
        return gate.judge(record, self.reference(record.case), gate.override_for(record.case, self.overrides))

    def info(self) -> dict:
        """What results.json records of the comparison."""
        if self.baseline is None:
            return {"note": self.note}
        return {"path": str(self.baseline.path), "fingerprint": self.baseline.fingerprint, "runs": len(self.baseline.runs)}

    @pytest.hookimpl
    def pytest_benchmark_update_machine_info(self, config, machine_info: dict) -> None:
        machine_info[baseline_mod.FINGERPRINT_KEY] = self.fingerprint

    @pytest.hookimpl
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if dict(report.user_properties).get("tier") != "bench" or report.when != "call":
            return
        self._bench_ran += not report.skipped
        self._bench_failed += report.failed

    @pytest.hookimpl
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if hasattr(self.config, "workerinput"):
            return
        stream = self.config.getoption(STREAM_OPTION)
        if stream:  # a serial bench process: its controller saves, from every GPU's document
            document = self._document()
            if document is not None:
                atomic.write_json(document_path(Path(stream)), document)
            return
        if self.save_path is None:
            return
        phase = self.config.pluginmanager.get_plugin(PHASE_PLUGIN)
        documents = phase.documents() if phase is not None else [d for d in [self._document()] if d is not None]
        self.saved_lines = self._save(exitstatus, documents)

    def _document(self) -> dict | None:
        """This process's pytest-benchmark JSON of the bench cases it measured, or None."""
        bs = getattr(self.config, "_benchmarksession", None)
        benchmarks = [b for b in (bs.benchmarks if bs else []) if b.extra_info.get("case")]
        if not benchmarks:
            return None
        document = self.config.hook.pytest_benchmark_generate_json(
            config=self.config,
            benchmarks=benchmarks,
            include_data=False,
            machine_info=bs.get_machine_info(),
            commit_info=self.config.hook.pytest_benchmark_generate_commit_info(config=self.config),
        )
        for bench in document["benchmarks"]:  # a matrix Case is kept by its id
            bench["params"] = {k: getattr(v, "id", v) for k, v in (bench.get("params") or {}).items()}
        return document

    def _save(self, exitstatus: int, documents: list[dict]) -> list[str]:
        """Save the measured documents into their GPU model's baseline; the lines that say what happened."""
        path = self.save_path
        if exitstatus == pytest.ExitCode.INTERRUPTED:
            return [f"baseline not saved: the run was interrupted ({path} unchanged)"]
        if self._bench_failed:
            return [f"baseline not saved: {self._bench_failed} bench cases failed ({path} unchanged)"]
        if not documents:
            return [f"baseline not saved: no bench case was measured ({path} unchanged)"]
        combined = baseline_mod.by_model(documents)
        if len(combined) > 1 and path != baseline_mod.default_path(self.fingerprint):
            return [f"baseline not saved: this run measured {len(combined)} GPU models and --bandwidth-save names one "
                    f"file ({path} unchanged); without a path each model's baseline is saved"]
        lines = []
        for fp, document in combined:
            own = baseline_mod.slug(fp) == baseline_mod.slug(self.fingerprint)
            target = path if own else baseline_mod.default_path(fp)
            try:
                previous = self._previous if own else _previous_at(target, fp)
            except baseline_mod.BaselineError as exc:
                lines.append(f"baseline not saved: refusing to replace it: {exc}")
                continue
            run = baseline_mod.run_of(document, document.get("datetime", ""), baseline_mod.machine_start())
            merged = baseline_mod.merge(document, fp, previous, run, self.replace)
            baseline_mod.save(target, merged)
            runs = len(merged[baseline_mod.RUNS_KEY])
            lines.append(f"baseline saved: {target} ({len(document['benchmarks'])} cases measured; it now holds {runs} "
                         f"run{'s' if runs > 1 else ''}, each from its own machine start)")
        return lines

    @pytest.hookimpl
    def pytest_terminal_summary(self, terminalreporter) -> None:
        if self._bench_ran:
            terminalreporter.write_line(f"bandwidth baseline: {self.note}")
        for line in self.saved_lines:
            terminalreporter.write_line(line)


def _previous_at(path: Path, fp: dict) -> baseline_mod.Baseline | None:
    """The baseline already at ``path``, checked to be this GPU model's; None where there is none."""
    if not path.exists():
        return None
    previous = baseline_mod.load(path)
    baseline_mod.check_comparable(previous, fp)
    return previous
