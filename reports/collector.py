"""Records every case of a run and writes the run's reports when the session ends.

Registered on the controlling process only (under xdist, workers' reports arrive here), so
results.json, summary.md and junit.xml describe the whole run once.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import socket
import tempfile
from dataclasses import asdict
from pathlib import Path

import pytest

from reports import atomic, health, report_files, run_state, summary
from reports.model import (
    BandwidthRecord,
    CaseRecord,
    CaseResult,
    GpuRecord,
    PtxFacts,
    RunResult,
)
from reports.usage import HarnessUsageError

TIERS = ("bench", "gpu", "compile", "host", "api", "harness")  # a case marked with several counts as the first
_REPORT_DIR = "cute_harness_report_dir"  # keys of what an xdist worker is handed (workerinput)
_SCRATCH = "cute_harness_scratch"
_GPUS = "cute_harness_gpus"
_CUDA_AT_START = "cute_harness_cuda_at_start"


def _now() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")


def report_dir(config: pytest.Config) -> Path | None:
    """The run's report folder; None under ``--collect-only``, which writes no report."""
    return run_state.of(config).report_dir


def notes_dir(config: pytest.Config) -> Path:
    """Per-process notes of this run (compile tallies, recorded kernel faults), shared with xdist
    workers and gone after the run.

    They stay out of the report folder until the end: a replacement worker parses the run's
    command line again, and once ``--report-dir /abs/path`` exists, pytest's first pass (which
    does not know the harness's options yet) takes it for a test path and moves the rootdir
    there, away from this conftest.
    """
    return run_state.of(config).notes_dir


def _missing_parents(path: Path) -> list[Path]:
    """``path`` and its ancestors that do not exist yet, deepest first."""
    missing = []
    while not path.exists() and path != path.parent:
        missing.append(path)
        path = path.parent
    return missing


def check_report_dir(config: pytest.Config) -> Path | None:
    """The report folder, proven writable before anything runs (a typo must not cost a run's
    work); None under ``--collect-only``, which writes no report.

    The folders this creates for the probe are removed again and made when the reports are
    written: while the run goes on, an existing ``--report-dir /abs/path`` would be taken for a
    test path by every xdist worker's first pass over the command line (see ``notes_dir``).
    """
    if config.option.collectonly:
        return None
    if hasattr(config, "workerinput"):
        return Path(config.workerinput[_REPORT_DIR])
    chosen = config.getoption("--report-dir")
    if chosen is not None and not chosen.strip():
        raise HarnessUsageError("--report-dir: an empty path (leave the option out for runs/<timestamp>)")
    if not chosen:
        stamp = dt.datetime.now(dt.timezone.utc).strftime("%Y%m%d-%H%M%S")
        chosen = str(Path(config.rootpath) / "runs" / f"{stamp}-{os.getpid()}")
    earlier = Path(chosen).expanduser() / "results.json"
    if earlier.exists():  # a report is never replaced
        raise HarnessUsageError(f"--report-dir {chosen}: holds the report of an earlier run ({_started(earlier)}); "
                         "choose a new folder, or remove that one first")
    created = _missing_parents(Path(chosen).expanduser().resolve())
    path = atomic.writable_dir("--report-dir", chosen)
    for folder in created:
        folder.rmdir()
    return path


def _selection(config: pytest.Config) -> str:
    """The run's ``-k`` and ``-m``, as a command line would spell them."""
    chosen = [(flag, config.getoption(name)) for flag, name in (("-k", "keyword"), ("-m", "markexpr"))]
    return " ".join(f"{flag} '{value}'" for flag, value in chosen if value)


def _started(results: Path) -> str:
    """When the run whose ``results.json`` this is started, as far as it says."""
    try:
        return f"started {json.loads(results.read_text())['started']}"
    except (OSError, ValueError, KeyError, TypeError):
        return "results.json"


def scratch_dir(config: pytest.Config) -> Path:
    """This run's temporary folder (notes, the DSL's dumps), one for the controller and its
    workers; the controller removes it at the end, so a crashed worker leaves nothing behind."""
    state = run_state.of(config)
    if hasattr(config, "workerinput"):
        state.scratch = Path(config.workerinput[_SCRATCH])
    else:
        state.scratch = Path(tempfile.mkdtemp(prefix="cute-harness-"))
    state.notes_dir.mkdir(exist_ok=True)
    return state.scratch


def worker_input(config: pytest.Config) -> dict:
    """What an xdist worker is handed so that every process of the run agrees on its folders and GPUs."""
    state = run_state.of(config)
    return {_SCRATCH: str(state.scratch), _GPUS: [asdict(g) for g in state.gpus], _CUDA_AT_START: state.cuda_at_start,
            **({_REPORT_DIR: str(state.report_dir)} if state.report_dir else {})}


def handed_gpus(config: pytest.Config) -> list[GpuRecord]:
    """On a worker: the run's GPUs, as the controller chose them."""
    return [GpuRecord(**g) for g in config.workerinput[_GPUS]]


def handed_cuda_at_start(config: pytest.Config) -> bool:
    """On a worker: whether the controller could use CUDA when the run started."""
    return config.workerinput.get(_CUDA_AT_START, False)


def configure(config: pytest.Config, report: Path | None) -> None:
    run_state.of(config).report_dir = report
    if hasattr(config, "workerinput") or report is None:
        return
    if config.option.xmlpath is None:
        config.option.xmlpath = str(report / "junit.xml")
    config.pluginmanager.register(Recorder(config), "cute-harness-recorder")


def unconfigure(config: pytest.Config) -> None:
    """The controller removes the run's scratch folder once the reports are written."""
    scratch = run_state.of(config).scratch
    if scratch is not None and not hasattr(config, "workerinput"):
        shutil.rmtree(scratch, ignore_errors=True)


def classify(report: pytest.TestReport) -> str | None:
    """The case's outcome from one of its phase reports, or None if this phase says nothing new."""
    if hasattr(report, "wasxfail"):
        return "xfailed" if report.skipped else "xpassed"
    if report.when not in ("setup", "teardown"):  # "call", or xdist's "???" for a crashed worker
        return report.outcome
    if report.failed:
        return "error"
    if report.skipped:
        return "skipped"
    return None


def _reason(report: pytest.TestReport) -> str:
    if hasattr(report, "wasxfail"):
        return report.wasxfail.removeprefix("reason: ")
    if report.skipped and isinstance(report.longrepr, tuple):
        return report.longrepr[2].removeprefix("Skipped: ")
    return ""


def _message(report: pytest.TestReport) -> str:
    """The failure's own words (the exception line), not the traceback's first line."""
    if not report.failed:
        return ""
    crash = getattr(report.longrepr, "reprcrash", None)
    return crash.message if crash is not None else report.longreprtext[-2000:]


def _compile_tally(folder: Path) -> dict[str, int]:
    """Compiles across every process of the run (xdist workers each keep their own cache)."""
    total, signatures = 0, set()
    for path in (folder / "compiles").glob("*.json"):
        tally = json.loads(path.read_text())
        total += tally["compiles"]
        signatures.update(tally["signatures"])
    return {"compiles": total, "distinct_signatures": len(signatures)}


_DEPRECATIONS = (DeprecationWarning, PendingDeprecationWarning, FutureWarning)


def deprecation_finding(warning_message, nodeid: str) -> dict | None:
    """A warning as a recorded finding when it is a deprecation of the DSL's: emitted from the
    DSL's own files, naming it (``@deprecated`` shims warn from the caller's line), or the api
    suite's ``Deprecated``; None for anything else (torch's, pytest's)."""
    category = warning_message.category
    if not (isinstance(category, type) and issubclass(category, _DEPRECATIONS)):
        return None
    message = str(warning_message.message)
    filename = str(warning_message.filename)
    ours = category.__name__ == "Deprecated" or "/cutlass/" in filename or "cutlass" in message or "cute." in message
    if not ours:
        return None
    return {"category": category.__name__, "message": message, "where": f"{filename}:{warning_message.lineno}",
            "first_case": nodeid}


class Recorder:
    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        state = run_state.of(config)
        self.run = RunResult(fingerprint=state.fingerprint, arch=state.arch, started=_now(), api_drift=state.api_drift,
                             registered_stages=state.registered_stages, host=socket.gethostname(), gpus=state.gpus,
                             selection=_selection(config))
        self._cases: dict[str, CaseResult] = {}
        self._collected: dict[str, int] = {}  # nodeid -> position in collection order
        self._deprecations: dict[tuple[str, str], dict] = {}

    @pytest.hookimpl
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self._collected = {item.nodeid: i for i, item in enumerate(session.items)}

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node, ids: list[str]) -> None:
        """Under xdist the controller collects nothing; every worker reports the same order."""
        if not self._collected:
            self._collected = {nodeid: i for i, nodeid in enumerate(ids)}

    @pytest.hookimpl
    def pytest_warning_recorded(self, warning_message, when: str, nodeid: str, location) -> None:
        """Keep each DSL deprecation once, with the first case that met it (xdist forwards workers' warnings)."""
        finding = deprecation_finding(warning_message, nodeid)
        if finding:
            self._deprecations.setdefault((finding["category"], finding["message"]), finding)

    @pytest.hookimpl
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        outcome = classify(report)
        if outcome is None:
            return
        previous = self._cases.get(report.nodeid)
        if previous and previous.outcome in ("failed", "error"):
            return  # a teardown can't turn a failure back into a pass
        properties = dict(report.user_properties)
        self._cases[report.nodeid] = CaseResult(
            nodeid=report.nodeid,
            outcome=outcome,
            tier=properties.get("tier", "harness"),
            case=CaseRecord(**properties["case"]) if "case" in properties else None,
            bandwidth=BandwidthRecord.from_dict(properties["bandwidth"]) if "bandwidth" in properties else None,
            ptx=PtxFacts(**properties["ptx"]) if "ptx" in properties else None,
            gpu=properties.get("gpu", ""),
            duration_s=round(report.duration, 4),
            reason=_reason(report),
            message=_message(report),
        )

    def expect(self, nodeids: list[str]) -> None:
        """Count ``nodeids`` as collected: cases a later phase of this run runs (the serial bench phase)."""
        for nodeid in nodeids:
            self._collected.setdefault(nodeid, len(self._collected))

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        ran = sum(1 for c in self._cases.values() if c.outcome != "skipped")
        if ran == 0 and self._cases and exitstatus == pytest.ExitCode.OK:
            # a gate must never pass on a run that checked nothing (everything skipped)
            session.exitstatus = pytest.ExitCode.NO_TESTS_COLLECTED  # the verdict line says NOTHING RAN
        self.run.finished = _now()
        self.run.status = run_status(session, self._collected, self._cases)
        self._note_gpu_health(session)
        self.run.exit_status = int(session.exitstatus)
        self.run.collected = len(self._collected)
        self.run.compiles = _compile_tally(notes_dir(self.config))
        # collection order (the matrix's), not arrival order, which xdist shuffles
        self.run.cases = sorted(self._cases.values(), key=lambda c: self._collected.get(c.nodeid, len(self._collected)))
        self.run.deprecations = list(self._deprecations.values())
        self.run.baseline = run_state.of(self.config).bench_gate.info()
        report_files.write(self.run, report_dir(self.config))

    def _note_gpu_health(self, session: pytest.Session) -> None:
        """A GPU that was lost or stormed names itself in the GPU list and the notes; a lost one
        gives the run its own status and exit status (the runner is broken, not the install)."""
        notes = notes_dir(self.config)
        lost, storms = health.lost(notes), health.storms(notes)
        for gpu in self.run.gpus:
            gpu.health = f"{health.LOST}: {lost[gpu.uuid]}" if gpu.uuid in lost else storms.get(gpu.uuid, "")
        self.run.notes += [f"{health.LOST}: {why}" for why in lost.values()]
        self.run.notes += [f"fault storm: {why}" for why in storms.values()]
        if self.run.status in ("complete", "incomplete", "stopped early"):
            if lost:
                self.run.status = "gpu lost"
                session.exitstatus = health.GPU_LOST_EXIT
            elif storms:
                self.run.status = "fault storm"

    @pytest.hookimpl(wrapper=True, tryfirst=True)  # the outermost wrapper: it writes last
    def pytest_terminal_summary(self, terminalreporter):
        """The verdict after pytest's own summary (``-ra``'s skip and xfail lines), where a CI log ends."""
        yield
        verdict = summary.verdict(self.run)
        terminalreporter.write_line(verdict, red=not self.run.passed, green=self.run.passed)
        terminalreporter.write_line(f"reports: {report_dir(self.config)}")


def run_status(session: pytest.Session, collected: dict[str, int], cases: dict[str, CaseResult]) -> str:
    """How the run ended: ``complete`` only if every collected case reported an outcome."""
    status = int(session.exitstatus)
    if status == pytest.ExitCode.INTERRUPTED:
        return "interrupted"
    if status == pytest.ExitCode.INTERNAL_ERROR:
        return "internal error"
    if session.shouldstop or session.shouldfail:
        return "stopped early"
    return "complete" if set(collected) <= set(cases) else "incomplete"
