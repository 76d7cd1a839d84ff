"""Several GPUs driven from one process (issue 46): a framework's process sees every GPU, sets
the current device or enters a device context, and calls a stage compiled on the first GPU with
another GPU's tensors and stream. The test run pins each process to one GPU, so the scenarios run
in a process of their own with every GPU of the run visible (``python -m fixtures.dsl.run_devices``);
each launch there is checked as the gpu tier checks any (values, poison, guard bands, inputs)."""

import json
import os
import subprocess
import sys

import pytest

from fixtures.cases import matrix
from fixtures.plugin import run_state

pytestmark = pytest.mark.gpu

# a static and a dynamic layout (two kinds of compile), and an operand off its alignment
CASE_IDS = ("tv-fp16-align16-static-128x2048", "tv-fp16-align16-dynamic-128x2048", "tv-fp16-offset-dynamic-128x2048")
CASES = [c for c in matrix.cases("gpu") if c.id in CASE_IDS]
TIMEOUT_S = 240


@pytest.fixture
def run_gpus(pytestconfig):
    gpus = run_state.of(pytestconfig).gpus
    if len(gpus) < 2:
        pytest.skip(f"{len(gpus)} GPU in this run: one process driving several GPUs needs two or more (nvidia-h100-x2)")
    return gpus


def _drive(case, gpus, *flags: str) -> tuple[list[dict], str]:
    """The scenarios' results, one a scenario and GPU, and the process's stderr."""
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": ",".join(g.uuid for g in gpus)}
    proc = subprocess.run([sys.executable, "-m", "fixtures.dsl.run_devices", case.id, *flags], env=env,
                          capture_output=True, text=True, timeout=TIMEOUT_S, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, f"the several-GPU process died (exit {proc.returncode}):\n{proc.stderr[-3000:]}"
    return [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")], proc.stderr


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_one_process_drives_every_gpu(case, run_gpus, record_property):
    results, stderr = _drive(case, run_gpus)
    record_property("devices", results)
    assert {r["device"] for r in results} == set(range(len(run_gpus))), f"not every GPU was driven: {results}"
    wrong = [r for r in results if r["outcome"] == "wrong"]
    assert not wrong, f"wrong results: {wrong}"
    refused = [r for r in results if r["outcome"] != "conforms" and r["scenario"] != "current_device_0"]
    assert not refused, f"a scenario frameworks use failed: {refused}\n{stderr[-2000:]}"
    assert results[-1]["compiles"] == 1, f"the stage compiled on the first GPU was not the one every GPU ran: {results[-1]}"


def test_a_launch_left_out_on_one_gpu_is_caught(run_gpus):
    """The planted defect: the last GPU's launch left out; its output keeps its poison."""
    results, _ = _drive(CASES[0], run_gpus, "--plant-no-launch-on-last")
    last = len(run_gpus) - 1
    (planted,) = [r for r in results if r["scenario"] == "set_device" and r["device"] == last]
    assert planted["outcome"] == "wrong" and "never written" in planted["error"], planted
    assert all(r["outcome"] == "conforms" for r in results if r["scenario"] == "set_device" and r["device"] != last)


OTHER_PATHS = ("tvm_ffi", "implicit", "aot_module", "aot_tvm_ffi")


@pytest.mark.parametrize("path", OTHER_PATHS)
def test_other_call_paths_drive_every_gpu(path, run_gpus, record_property):
    """``set_device`` and ``device_context`` through another call path (``--path``): compiled or
    exported once, on the first GPU, then called with each GPU's tensors; every launch conforms."""
    from fixtures.dsl.run_devices import other_paths

    reason = other_paths()[path].unavailable()
    if reason:
        pytest.skip(f"{path}: {reason}")
    results, stderr = _drive(CASES[1], run_gpus, "--path", path)
    record_property("devices", results)
    assert {r["device"] for r in results} == set(range(len(run_gpus))), f"not every GPU was driven: {results}"
    bad = [r for r in results if r["outcome"] != "conforms"]
    assert not bad, f"{path}: {bad}\n{stderr[-2000:]}"
