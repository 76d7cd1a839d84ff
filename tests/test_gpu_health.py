"""A GPU lost mid-run and a fault storm, with NVML (``tests/data/fake_pynvml.py``) and the CUDA
check (``device.gpu_unavailable``, ``fault.cuda_context_error``) stubbed at their boundaries:
a GPU there at start and gone for a worker fails that worker's device cases, names the GPU and
ends the run with its own status and exit status; a GPU whose cases keep faulting stops
launching after the storm limit (the gate's, or a debugging run's ``--fault-storm``)."""

import json

import pytest

from fixtures.plugin import health
from reports import model

pytestmark = pytest.mark.harness

H100 = {"name": "NVIDIA H100 80GB HBM3", "total_mib": 81559, "free_mib": 80000}

# the controller sees CUDA at start; a worker pinned to a GPU in LOST_GPUS does not
CUDA_STUB = """
import os

from fixtures.dsl import device
from fixtures.plugin import fault

NO_GPU = "no CUDA device: torch.cuda.is_available() is False (stubbed)"


def _unavailable():
    lost = os.environ.get("LOST_GPUS", "").split(",")
    worker = "PYTEST_XDIST_WORKER" in os.environ
    return NO_GPU if worker and os.environ.get("CUDA_VISIBLE_DEVICES") in lost else None


device.gpu_unavailable = _unavailable
if os.environ.get("EVERY_FAILURE_FAULTS"):
    fault.cuda_context_error = lambda: "AcceleratorError: an illegal memory access was encountered"
"""

CASES = """
import pytest


@pytest.mark.gpu
@pytest.mark.parametrize("n", range(6))
def test_on_the_gpu(n):
    assert not {fail}


@pytest.mark.host
def test_on_the_host():
    pass
"""


@pytest.fixture
def run(project, fake_gpus, monkeypatch, tmp_path):
    project.makepyfile(cuda_stub=CUDA_STUB)
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)  # this test's own worker: the stubs tell workers by it
    monkeypatch.setenv("PYTEST_ADDOPTS", "-p cuda_stub --arch sm_90a")

    def go(gpus: int, *args: str, fail: bool = False, **env: str):
        fake_gpus([H100] * gpus)
        for key, value in env.items():
            monkeypatch.setenv(key, value)
        project.makepyfile(test_cases=CASES.format(fail=fail))
        out = tmp_path / "report"
        result = project.runpytest_subprocess("-p", "no:randomly", "--report-dir", str(out), *args, "test_cases.py")
        return result, json.loads((out / "results.json").read_text()), (out / "summary.md").read_text()

    return go


def test_a_gpu_gone_for_one_of_two_fails_its_cases_and_ends_the_run_as_gpu_lost(run):
    result, data, summary = run(2, "-n", "2", LOST_GPUS="GPU-fake-1", FAKE_NVML_RESET_REQUIRED="GPU-fake-1")
    assert result.ret == model.GPU_LOST_EXIT, result.stdout.str()[-3000:]
    assert data["status"] == "gpu lost" and data["exit_status"] == model.GPU_LOST_EXIT
    on = {gpu: [c for c in data["cases"] if c["gpu"] == gpu] for gpu in ("GPU-fake-0", "GPU-fake-1")}
    assert on["GPU-fake-0"] and all(c["outcome"] == "passed" for c in on["GPU-fake-0"])
    assert on["GPU-fake-1"] and all(c["outcome"] == "error" for c in on["GPU-fake-1"])
    message = on["GPU-fake-1"][0]["message"]
    assert "GPU LOST: GPU-fake-1 (NVIDIA H100 80GB HBM3): requires reset (NVML); no CUDA device" in message, message
    lost = len(on["GPU-fake-1"])
    result.stdout.fnmatch_lines([f"GPU LOST: GPU-fake-1 after {7 - lost} cases, {lost} not run *"])
    assert [g["health"].split(":")[0] for g in data["gpus"]] == ["", "GPU LOST"]
    assert "| `GPU-fake-1` |" in summary and "| GPU LOST: GPU-fake-1 (NVIDIA H100 80GB HBM3): requires reset (NVML)" in summary


def test_a_machine_that_never_had_a_gpu_still_skips(run, monkeypatch):
    """NVML lists a GPU but CUDA was never usable, at start either: today's skip, not a lost GPU."""
    monkeypatch.setenv("PYTEST_ADDOPTS", "--arch sm_90a")  # no stub: this machine's own CUDA check
    result, data, _ = run(1, "-n", "1")
    assert result.ret == pytest.ExitCode.OK and data["status"] == "complete"
    assert {c["outcome"] for c in data["cases"] if c["tier"] == "gpu"} == {"skipped"}


def test_a_fault_storm_stops_launching_on_its_gpu(run):
    result, data, summary = run(1, "-n", "1", "--max-worker-restart", "10", fail=True, EVERY_FAILURE_FAULTS="1")
    assert result.ret == pytest.ExitCode.TESTS_FAILED, result.stdout.str()[-3000:]
    assert data["status"] == "fault storm"
    outcomes = [c["outcome"] for c in data["cases"] if c["tier"] == "gpu"]
    assert outcomes.count("failed") == health.STORM_FAULTS and outcomes.count("error") == 6 - health.STORM_FAULTS
    stopped = [c["message"] for c in data["cases"] if c["outcome"] == "error"]
    assert all("not run: fault storm: 3 device faults in " in m for m in stopped), stopped
    assert "(the limit is 3 in 120 s): nothing more is launched there" in stopped[0]
    result.stdout.fnmatch_lines(["FAULT STORM on: GPU-fake-0 after 4 cases, 3 not run *"])
    assert data["gpus"][0]["health"].startswith("3 device faults in ")


@pytest.mark.parametrize(("limit", "failed"), [("1", 1), ("off", 6)])
def test_a_run_sets_or_lifts_the_storm_limit(run, limit, failed):
    """``--fault-storm N`` stops launches after N faults (every worker holds it); ``off`` launches
    every case, each fault its own failure."""
    result, data, _ = run(1, "-n", "1", "--max-worker-restart", "10", "--fault-storm", limit, fail=True, EVERY_FAILURE_FAULTS="1")
    assert result.ret == pytest.ExitCode.TESTS_FAILED, result.stdout.str()[-3000:]
    outcomes = [c["outcome"] for c in data["cases"] if c["tier"] == "gpu"]
    assert outcomes.count("failed") == failed and outcomes.count("error") == 6 - failed
    if limit == "off":
        assert data["status"] != "fault storm" and data["gpus"][0]["health"] == ""
    else:
        assert data["status"] == "fault storm"
        stopped = next(c["message"] for c in data["cases"] if c["outcome"] == "error")
        assert "not run: fault storm: 1 device faults in " in stopped and "(the limit is 1 in 120 s)" in stopped


def test_the_storm_limit_counts_faults_within_its_window(tmp_path):
    assert health.record_fault(tmp_path, "GPU-a", now=0.0) is None
    assert health.record_fault(tmp_path, "GPU-a", now=200.0) is None  # the first is out of the window
    assert health.record_fault(tmp_path, "GPU-b", now=201.0) is None  # another GPU's faults are its own
    assert health.record_fault(tmp_path, "GPU-a", now=250.0) is None
    reason = health.record_fault(tmp_path, "GPU-a", now=260.0)
    assert reason == "3 device faults in 60 s on GPU GPU-a (the limit is 3 in 120 s): nothing more is launched there"
    assert health.storms(tmp_path) == {"GPU-a": reason} and health.storm(tmp_path, "GPU-b") is None
    assert health.record_fault(tmp_path, "GPU-c", limit=1, now=0.0).startswith("1 device faults in 0 s on GPU GPU-c (the limit is 1 in 120 s)")
