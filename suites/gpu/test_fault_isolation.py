"""A deliberate kernel fault must stay in its case.

A drill runs a pytest inside this one: a kernel that writes far outside its output faults
with an illegal address, which poisons its process's CUDA context. Under xdist the faulting case must fail with the CUDA
error named and every other case must still pass; without xdist the rest fail fast, saying why.
"""

import json
import os
from pathlib import Path

import pytest

pytestmark = pytest.mark.gpu

ROOT = Path(__file__).resolve().parents[2]
HEALTHY = 6

DRILL = f'''
import pytest

from fixtures import matrix, runner
from fixtures.dtypes import DTYPES
from fixtures.ops import ADD
from fixtures.stages import Stage
from suites.gpu import _faulting_stage

pytestmark = pytest.mark.gpu


def test_deliberate_illegal_address():
    stage = Stage("wild_write", _faulting_stage.wild_write, ADD, builtin=False)
    runner.run_case(matrix.Case(stage, DTYPES["fp16"], "align16", "static", (128, 2048), "drill"), seed=1)


HEALTHY = [c for c in matrix.cases("gpu") if c.stage.name == "tv" and c.layout == "static"][:{HEALTHY}]


@pytest.mark.parametrize("case", HEALTHY, ids=lambda c: c.id)
def test_healthy(case):
    runner.run_case(case, seed=1)
'''


@pytest.fixture
def drill(pytester: pytest.Pytester) -> pytest.Pytester:
    for name in ("conftest.py", "tox.ini", "fixtures", "reports", "suites"):
        os.symlink(ROOT / name, pytester.path / name)
    pytester.makepyfile(test_drill=DRILL)
    return pytester


def _results(report_dir: Path) -> dict[str, dict]:
    cases = json.loads((report_dir / "results.json").read_text())["cases"]
    return {c["nodeid"].split("::", 1)[1]: c for c in cases}


def test_fault_fails_its_case_and_the_rest_still_run(drill: pytest.Pytester):
    report_dir = drill.path / "report"
    result = drill.runpytest_subprocess("-n", "2", "-p", "no:randomly", "--report-dir", str(report_dir))
    cases = _results(report_dir)
    fault = cases.pop("test_deliberate_illegal_address")
    assert fault["outcome"] == "failed" and "illegal memory access" in fault["message"], fault
    assert [c["outcome"] for c in cases.values()] == ["passed"] * HEALTHY, cases
    assert "replacing crashed worker" in result.stdout.str()


def test_without_xdist_the_rest_fail_fast_saying_why(drill: pytest.Pytester):
    report_dir = drill.path / "report"
    drill.runpytest_subprocess("-p", "no:xdist", "-p", "no:randomly", "--report-dir", str(report_dir))
    cases = _results(report_dir)
    fault = cases.pop("test_deliberate_illegal_address")
    assert fault["outcome"] == "failed" and "illegal memory access" in fault["message"], fault
    assert all(c["outcome"] == "failed" and "CUDA context poisoned by" in c["message"] for c in cases.values()), cases
