"""A deliberate kernel fault must stay in its case.

A drill runs a pytest inside this one: a kernel that writes far outside its output faults
with an illegal address, which poisons its process's CUDA context. Under xdist the faulting case must fail with the CUDA
error named and every other case must still pass; without xdist the rest fail fast, saying why.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest


pytestmark = pytest.mark.gpu

ROOT = Path(__file__).resolve().parents[2]
HEALTHY = 6
DRILL_TIMEOUT_S = 150

DRILL = f'''
import pytest

from fixtures.cases import matrix
from fixtures.cases.dtypes import DTYPES
from fixtures.cases.ops import ADD
from fixtures.cases.stages import Stage
from fixtures.dsl import fault_turn
from fixtures.dsl.kernels import bind
from suites.gpu import _faulting_stage

pytestmark = pytest.mark.gpu


def test_deliberate_illegal_address(run_case):
    stage = bind(Stage("wild_write", ADD), _faulting_stage.wild_write)
    fault_turn.take()  # held until this process ends: its fault takes turns with the canaries'
    run_case(matrix.Case(stage, DTYPES["fp16"], "align16", "static", (128, 2048), "drill"))


HEALTHY = [c for c in matrix.cases("gpu") if c.stage.name == "tv" and c.layout == "static"][:{HEALTHY}]


@pytest.mark.parametrize("case", HEALTHY, ids=lambda c: c.id)
def test_healthy(case, run_case):
    run_case(case)
'''


@pytest.fixture
def drill(tmp_path: Path) -> Path:
    for name in ("conftest.py", "tox.ini", "fixtures", "reports", "suites"):
        os.symlink(ROOT / name, tmp_path / name)
    (tmp_path / "test_drill.py").write_text(DRILL)
    return tmp_path


def _run_drill(folder: Path, *args: str) -> tuple[str, dict[str, dict]]:
    """Run the drill in a pytest of its own, with none of this run's pytest or harness state."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "CUTE_HARNESS_"))}
    report_dir = folder / "report"
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "pytest", "-p", "no:randomly", "--timeout", "60", "--report-dir", str(report_dir), *args,
             "test_drill.py"],
            cwd=folder, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=DRILL_TIMEOUT_S,
        )
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"the drill did not finish in {DRILL_TIMEOUT_S}s; its output:\n{(exc.stdout or b'')[-4000:]!r}")
    assert (report_dir / "results.json").exists(), f"the drill wrote no report:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    cases = json.loads((report_dir / "results.json").read_text())["cases"]
    return proc.stdout, {c["nodeid"].split("::", 1)[1]: c for c in cases}


@pytest.mark.slow
@pytest.mark.timeout(DRILL_TIMEOUT_S + 30)
def test_fault_fails_its_case_and_the_rest_still_run(drill: Path):
    stdout, cases = _run_drill(drill, "-n", "2")
    fault = cases.pop("test_deliberate_illegal_address")
    assert fault["outcome"] == "failed" and "illegal memory access" in fault["message"], fault
    assert [c["outcome"] for c in cases.values()] == ["passed"] * HEALTHY, cases
    assert "replacing crashed worker" in stdout


@pytest.mark.slow
@pytest.mark.timeout(DRILL_TIMEOUT_S + 30)
def test_without_xdist_the_rest_fail_fast_saying_why(drill: Path):
    _, cases = _run_drill(drill, "-p", "no:xdist")
    fault = cases.pop("test_deliberate_illegal_address")
    assert fault["outcome"] == "failed" and "illegal memory access" in fault["message"], fault
    # they fail in setup, which pytest reports as errors
    assert all(c["outcome"] == "error" and "CUDA context poisoned by" in c["message"] for c in cases.values()), cases
