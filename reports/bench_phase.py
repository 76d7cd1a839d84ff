"""The bench tier of a parallel run, measured alone after the parallel part: one gate command
(``pytest suites -n 16 --require-gpu``) checks results in parallel and bandwidth serially.

Bandwidth needs the GPU to itself, and pytest-benchmark switches itself off under xdist. So
each xdist worker deselects the bench cases it collected and hands their ids back; once every
worker is done, the controller runs those cases in one pytest process of their own, which
streams its reports back (serialised as xdist serialises a worker's), and replays them here:
the terminal, junit.xml, results.json and the exit status see one run. A bench case the
serial phase did not report is a failure that says why, never a silent gap.

With several GPUs in the run, the bench cases are dealt out round-robin, one serial process
per GPU (pinned with ``--gpus UUID``), all at once: a GPU's memory bandwidth is its own. Each
process writes its pytest-benchmark document; the controller saves the baseline from all of
them (``reports.bench_plugin``).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from reports import run_state
from reports.model import GpuRecord

DEFERRED_KEY = "cute_harness_deferred_bench"  # in a worker's workeroutput
STREAM_OPTION = "--bench-phase-stream"
_PASSED_ON = ("--arch", "--bandwidth-baseline", "--bandwidth-plant-slowdown")  # single-valued
_REPEATED = ("--stage-module", "--bandwidth-threshold")


PHASE_PLUGIN = "cute-harness-bench-phase"


def add_options(group) -> None:
    group.addoption(STREAM_OPTION, default=None, help=argparse.SUPPRESS, metavar="FILE")


def document_path(stream: Path) -> Path:
    """Where a serial phase process writes its pytest-benchmark document, beside its report stream."""
    return Path(stream).with_suffix(".benchmarks.json")


def is_serial_phase(config: pytest.Config) -> bool:
    """Whether this process is the serial bench phase of a parallel run (it writes no report of its own)."""
    return bool(config.getoption(STREAM_OPTION))


def deferring(config: pytest.Config) -> bool:
    """Whether this run is the controller or a worker of a parallel run (``-n N``)."""
    if config.option.collectonly:
        return False
    return hasattr(config, "workerinput") or config.getoption("dist", "no") != "no"


def register(config: pytest.Config) -> None:
    """Put the right half in this process: a worker defers, the controller runs the serial
    phase, and the serial phase streams its reports back. (Without a GPU the serial phase
    skips the bench cases for that reason, as a worker would.)"""
    stream = config.getoption(STREAM_OPTION)
    if stream:
        config.pluginmanager.register(ReportStream(config, Path(stream)), "cute-harness-report-stream")
    elif hasattr(config, "workerinput"):
        config.pluginmanager.register(Deferral(config), "cute-harness-bench-deferral")
    elif deferring(config):
        config.pluginmanager.register(SerialPhase(config), PHASE_PLUGIN)


class Deferral:
    """On an xdist worker: the bench cases leave the parallel part, their ids go to the controller."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config

    @pytest.hookimpl(trylast=True)  # after -m and -k have deselected what they will
    def pytest_collection_modifyitems(self, config: pytest.Config, items: list[pytest.Item]) -> None:
        bench = [item for item in items if item.get_closest_marker("bench")]
        if not bench:
            return
        items[:] = [item for item in items if not item.get_closest_marker("bench")]
        config.hook.pytest_deselected(items=bench)
        config.workeroutput[DEFERRED_KEY] = [item.nodeid for item in bench]


class ReportStream:
    """In the serial phase's process: every report, serialised, one JSON line each."""

    def __init__(self, config: pytest.Config, path: Path) -> None:
        self.config = config
        self.out = path.open("a", encoding="utf-8")

    @pytest.hookimpl
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        data = self.config.hook.pytest_report_to_serializable(config=self.config, report=report)
        self.out.write(json.dumps(data) + "\n")
        self.out.flush()

    @pytest.hookimpl
    def pytest_unconfigure(self) -> None:
        self.out.close()


class SerialPhase:
    """On the controller of a parallel run: the deferred bench cases, run once the workers are done."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.started = time.monotonic()
        self.deferred: dict[str, None] = {}  # ordered, deduplicated: every worker collects the same ids

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node, error) -> None:
        for nodeid in getattr(node, "workeroutput", {}).get(DEFERRED_KEY, []):
            self.deferred[nodeid] = None

    @pytest.hookimpl(wrapper=True)
    def pytest_runtestloop(self, session: pytest.Session):
        result = yield
        if self.deferred and not (session.shouldstop or session.shouldfail):
            recorder = self.config.pluginmanager.get_plugin("cute-harness-recorder")
            if recorder is not None:
                recorder.expect(list(self.deferred))
            self.run(session)
        return result

    def command(self, stream: Path, gpu: GpuRecord | None, nodeids: list[str]) -> list[str]:
        """A serial phase's command line: this run's harness options, its GPU, its share of the deferred cases."""
        config = self.config
        args = [sys.executable, "-m", "pytest", "-p", "no:xdist", "--rootdir", str(config.rootpath),
                f"{STREAM_OPTION}={stream}"]
        if config.inipath:
            args += ["-c", str(config.inipath)]
        if config.getoption("--require-gpu"):
            args.append("--require-gpu")
        if gpu is not None:
            args.append(f"--gpus={gpu.uuid}")
        for option in _PASSED_ON:
            value = config.getoption(option)
            if value is not None:
                args.append(f"{option}={value}")
        for option in _REPEATED:
            args += [f"{option}={value}" for value in config.getoption(option)]
        return args + nodeids

    def shares(self) -> list[tuple[GpuRecord | None, list[str]]]:
        """The deferred cases dealt out round-robin over the run's GPUs (one share without a GPU)."""
        gpus: list[GpuRecord | None] = list(run_state.of(self.config).gpus) or [None]
        cases = list(self.deferred)
        return [(gpu, cases[i::len(gpus)]) for i, gpu in enumerate(gpus) if cases[i::len(gpus)]]

    def documents(self) -> list[dict]:
        """The pytest-benchmark documents the serial processes wrote (one per GPU that measured)."""
        scratch = run_state.of(self.config).scratch
        return [json.loads(path.read_text()) for path in sorted(scratch.glob("bench-phase-*.benchmarks.json"))]

    def run(self, session: pytest.Session) -> None:
        config = self.config
        state = run_state.of(config)
        shares = self.shares()
        reporter = config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            where = f" on {len(shares)} GPUs at once" if len(shares) > 1 else ""
            reporter.write_sep("=", f"bench phase: {len(self.deferred)} bench cases, measured alone{where} after the "
                                    f"parallel part, which took {time.monotonic() - self.started:.0f} s")
        # each process chooses its GPU (--gpus UUID) among those the run started with, not the controller's pin
        env = {k: v for k, v in os.environ.items() if k != "CUDA_VISIBLE_DEVICES"}
        if state.outer_visible is not None:
            env["CUDA_VISIBLE_DEVICES"] = state.outer_visible
        phases = []
        for i, (gpu, nodeids) in enumerate(shares):
            stream = state.scratch / f"bench-phase-{i}.jsonl"
            log = (state.scratch / f"bench-phase-{i}.log").open("w") if len(shares) > 1 else None
            process = subprocess.Popen(self.command(stream, gpu, nodeids), cwd=config.rootpath, env=env,
                                       stdout=log, stderr=subprocess.STDOUT if log else None)
            phases.append((gpu, nodeids, stream, log, process))
        session.testscollected += len(self.deferred)  # the terminal's progress counts them now
        for gpu, nodeids, stream, log, process in phases:
            status = process.wait()
            if log is not None:
                log.close()
                if reporter is not None:
                    reporter.write_sep("-", f"bench phase on gpu {gpu.index} ({gpu.name}): {len(nodeids)} cases")
                    reporter.write(Path(log.name).read_text(errors="replace"))
            self.replay(stream, nodeids, status)

    def replay(self, stream: Path, nodeids: list[str], status: int) -> None:
        """Report here what one serial process reported; a case it never reported fails, saying why."""
        config = self.config
        reported = set()
        if stream.exists():
            for line in stream.read_text(encoding="utf-8").splitlines():
                data = json.loads(line)
                if isinstance(data.get("longrepr"), list):  # a skip's (path, line, reason): JSON made it a list
                    data["longrepr"] = tuple(data["longrepr"])
                report = config.hook.pytest_report_from_serializable(config=config, data=data)
                config.hook.pytest_runtest_logreport(report=report)
                if report.when == "call" or not report.passed:
                    reported.add(report.nodeid)
        for nodeid in nodeids:
            if nodeid not in reported:
                config.hook.pytest_runtest_logreport(report=_not_measured(nodeid, status))


def _not_measured(nodeid: str, status: int) -> pytest.TestReport:
    """A failed report for a deferred bench case the serial phase never reported."""
    path = nodeid.split("::", 1)[0]
    message = (f"bench phase: this case was not measured (the serial bench process exited {status} before "
               "reporting it; its output is above)")
    return pytest.TestReport(nodeid, (path, None, nodeid), {}, "failed", message, "call",
                             user_properties=[("tier", "bench")])
