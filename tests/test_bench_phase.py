"""The bench phase's early start where the machine says no: a full disk, a process that cannot
start. Either way the serial phase starts after the workers, as without the early start, and no
process is left waiting."""

import errno
import json
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from fixtures.plugin import bench_phase, run_state
from reports.model import GpuRecord

pytestmark = pytest.mark.harness

IDS = ["suites/bench/test_bandwidth.py::test_device_ceiling", "suites/bench/test_bandwidth.py::test_stage_bandwidth[x]"]


class _Config(SimpleNamespace):
    """What the bench phase reads of a pytest config (no options given)."""

    def getoption(self, name: str):
        return [] if name in ("--stage-module", *bench_phase._REPEATED) else None


def _config(scratch: Path, gpus: int = 0) -> _Config:
    config = _Config(stash=pytest.Stash(), workeroutput={}, rootpath=scratch, inipath=None,
                     hook=SimpleNamespace(pytest_deselected=lambda items: None))
    state = run_state.of(config)
    state.scratch = scratch
    state.gpus = [GpuRecord(i, f"GPU-{i}", "H100", 81559, None, "host") for i in range(gpus)]
    return config


def _bench_items() -> list:
    return [SimpleNamespace(nodeid=nodeid, get_closest_marker=lambda name: name == "bench") for nodeid in IDS]


@pytest.mark.parametrize("full", [False, True], ids=["written", "full-disk"])
def test_a_worker_leaves_its_bench_ids_for_the_early_start_unless_the_disk_is_full(tmp_path, monkeypatch, full):
    config = _config(tmp_path)
    if full:
        def no_space(self, *args, **kwargs):
            raise OSError(errno.ENOSPC, "No space left on device")

        monkeypatch.setattr(Path, "write_text", no_space)
    items = _bench_items()
    bench_phase.Deferral(config).pytest_collection_modifyitems(config, items)
    assert items == [] and config.workeroutput[bench_phase.DEFERRED_KEY] == IDS  # the late start still has them
    if full:
        assert list(tmp_path.iterdir()) == [], "a full disk left a partial file"
    else:
        assert json.loads((tmp_path / bench_phase.DEFERRED_FILE).read_text()) == IDS


def test_a_worker_leaves_the_tests_that_touch_no_gpu(tmp_path):
    """Those without a device tier's marker: the scheduler deals them last, and the bench phase
    measures once every other has ended."""
    config = _config(tmp_path)
    markers = {"suites/compile/test_ptx.py::test_a[x]": "compile", "suites/gpu/test_s.py::test_b[x]": "gpu",
               "suites/host/test_h.py::test_c": "host"}
    items = _bench_items() + [SimpleNamespace(nodeid=n, get_closest_marker=lambda name, m=m: name == m) for n, m in markers.items()]
    bench_phase.Deferral(config).pytest_collection_modifyitems(config, items)
    assert json.loads((tmp_path / bench_phase.GPU_FREE_FILE).read_text()) == [
        "suites/compile/test_ptx.py::test_a[x]", "suites/host/test_h.py::test_c"]
    assert bench_phase.gpu_free(run_state.of(config)) == {"suites/compile/test_ptx.py::test_a[x]", "suites/host/test_h.py::test_c"}


def test_go_comes_when_the_last_test_that_touches_a_gpu_ends_not_when_the_workers_do(tmp_path, monkeypatch):
    """One GPU: the early process is told to measure at the GPU test's teardown, while a
    CPU-only test is still to run; not at its call, and not at a CPU-only test's end."""
    config = _config(tmp_path, gpus=1)
    gpu_test, cpu_test = "suites/gpu/test_s.py::test_b[x]", "suites/compile/test_ptx.py::test_a[x]"
    (tmp_path / bench_phase.GPU_FREE_FILE).write_text(json.dumps([cpu_test]))
    (tmp_path / bench_phase.DEFERRED_FILE).write_text(json.dumps(IDS))
    told = tmp_path / "told"
    real_popen = subprocess.Popen

    def popen(command, pass_fds=(), **kwargs):
        (read,) = pass_fds
        return real_popen([sys.executable, "-c", f"import os; open({str(told)!r}, 'wb').write(os.read({read}, 3))"],
                          pass_fds=pass_fds)

    monkeypatch.setattr(bench_phase.subprocess, "Popen", popen)
    phase = bench_phase.SerialPhase(config)
    phase.pytest_xdist_node_collection_finished(node=None, ids=[gpu_test, cpu_test])
    process = phase.early[0].process
    for nodeid, when in ((cpu_test, "teardown"), (gpu_test, "setup"), (gpu_test, "call")):
        phase.pytest_runtest_logreport(SimpleNamespace(nodeid=nodeid, when=when))
        with pytest.raises(subprocess.TimeoutExpired):
            process.wait(timeout=0.2)  # still waiting: a test that touches the GPU is not done
    phase.pytest_runtest_logreport(SimpleNamespace(nodeid=gpu_test, when="teardown"))
    assert process.wait(timeout=30) == 0 and told.read_bytes() == bench_phase.GO
    assert phase.go_at is not None and phase.early[0].go is None


def test_a_serial_process_that_cannot_start_early_ends_those_already_waiting(tmp_path, monkeypatch):
    """Two GPUs: the first process starts and waits, the second cannot start; the first is
    ended, and the run goes on to start them after the workers."""
    config = _config(tmp_path, gpus=2)
    (tmp_path / bench_phase.DEFERRED_FILE).write_text(json.dumps(IDS))
    waiting, real_popen = [], subprocess.Popen

    def popen(command, pass_fds=(), **kwargs):
        if waiting:
            raise OSError(errno.EAGAIN, "Resource temporarily unavailable")
        (read,) = pass_fds
        waiting.append(real_popen([sys.executable, "-c", f"import os; os.read({read}, 3); import time; time.sleep(60)"],
                                        pass_fds=pass_fds))
        return waiting[0]

    monkeypatch.setattr(bench_phase.subprocess, "Popen", popen)
    phase = bench_phase.SerialPhase(config)
    phase.pytest_xdist_node_collection_finished(node=None, ids=[])
    assert phase.early == []
    assert waiting[0].returncode is not None, "the process already waiting was left running"


def test_an_early_process_that_ended_before_go_is_replayed_not_raised(tmp_path, monkeypatch):
    """One GPU: the early process dies while compiling ahead (it closes its pipe by exiting); at
    the run's end writing GO meets a broken pipe, and its cases are replayed with its exit status
    (which reports them as failures) instead of the run ending in an internal error."""
    config = _config(tmp_path, gpus=1)
    config.pluginmanager = SimpleNamespace(get_plugin=lambda name: None, has_plugin=lambda name: False)
    (tmp_path / bench_phase.DEFERRED_FILE).write_text(json.dumps(IDS))
    real_popen = subprocess.Popen

    def popen(command, pass_fds=(), **kwargs):
        return real_popen([sys.executable, "-c", "import sys; sys.exit(3)"], pass_fds=pass_fds)

    monkeypatch.setattr(bench_phase.subprocess, "Popen", popen)
    phase = bench_phase.SerialPhase(config)
    phase.pytest_xdist_node_collection_finished(node=None, ids=[])
    phase.early[0].process.wait()
    phase.defer(IDS)
    replayed = []
    monkeypatch.setattr(phase, "replay", lambda stream, nodeids, status, gpu=None, process="bench": replayed.append((nodeids, status)) or [])
    phase.run(SimpleNamespace(testscollected=0))
    assert replayed == [(IDS, 3)]


@pytest.mark.parametrize("follower_reports", [True, False], ids=["measured", "crashed-too"])
def test_a_serial_process_stopped_by_a_fault_is_followed_by_a_fresh_one_for_the_rest(tmp_path, monkeypatch, follower_reports):
    """A fault in one stage's bench case stops its process after reporting it: a fresh process
    measures the cases left, so they pass or fail on their own; what a follower too never
    reports fails as not measured."""
    config = _config(tmp_path, gpus=1)
    config.pluginmanager = SimpleNamespace(get_plugin=lambda name: None, has_plugin=lambda name: False)
    failed = []
    config.hook = SimpleNamespace(pytest_runtest_logreport=lambda report: failed.append(report.nodeid))
    real_popen = subprocess.Popen
    commands = []

    def popen(command, pass_fds=(), **kwargs):
        commands.append(command)
        return real_popen([sys.executable, "-c", "import sys; sys.exit(1)"], pass_fds=pass_fds)

    monkeypatch.setattr(bench_phase.subprocess, "Popen", popen)
    phase = bench_phase.SerialPhase(config)
    phase.defer(IDS)
    unreported = {0: IDS[1:], 1: [] if follower_reports else IDS[1:]}  # the first reports IDS[0], then stops
    monkeypatch.setattr(phase, "replay", lambda stream, nodeids, status, gpu=None, process="bench": unreported[len(commands) - 1])
    phase.run(SimpleNamespace(testscollected=0))
    assert len(commands) == 2 and commands[1][-len(IDS[1:]):] == IDS[1:] and IDS[0] not in commands[1]
    assert failed == ([] if follower_reports else IDS[1:])
