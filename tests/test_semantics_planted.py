"""Planted DSL edits (``tests/plants/semantics_edits.py``: ``%`` with Python's sign, ``exp2``
computing ``exp``, a narrowing conversion that saturates) turn the semantics family red on the
host path, each case's message naming the operation, the type and the path; the same run's
cases of other operations stay green. One child pytest runs them all (about 20 s on 2 cores)."""

import json
import subprocess
import sys

import pytest

from tests.conftest import ROOT

pytestmark = pytest.mark.harness

PLANTED = {  # case: what its failure must say
    "semantics-mod-i8-tensor": "`a % b` on Int8, a tensor on the right, host:",
    "semantics-mod-i32-scalar": "`a % b` on Int32, a scalar on the right, host:",
    "semantics-exp2-f32": "`cute.math.exp2(a)` on Float32, host:",
    "semantics-to-i8-i16": "`a.to(Int8)` on Int8 from Int16, host:",
}
UNTOUCHED = ("semantics-floordiv-i8-tensor", "semantics-exp-f32", "semantics-to-i16-i8", "semantics-to-u8-i16")


def test_planted_edits_are_red_naming_operation_type_and_path(tmp_path):
    report = tmp_path / "report"
    selected = " or ".join(f"{case}]" for case in (*PLANTED, *UNTOUCHED))
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "suites/host/test_semantics_on_host.py", "-p", "tests.plants.semantics_edits",
         "-p", "no:randomly", "-n", "0", "-q", "-k", selected, f"--report-dir={report}"],
        cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-3000:]
    cases = {c["nodeid"].split("[")[-1].rstrip("]"): c for c in json.loads((report / "results.json").read_text())["cases"]}
    assert set(cases) == {*PLANTED, *UNTOUCHED}, sorted(cases)
    for case, words in PLANTED.items():
        assert cases[case]["outcome"] == "failed", (case, cases[case]["outcome"])
        assert words in cases[case]["message"] and "differ from the reference" in cases[case]["message"], cases[case]["message"]
    assert {case: cases[case]["outcome"] for case in UNTOUCHED} == dict.fromkeys(UNTOUCHED, "passed")
