"""The frontend family's case model, checks and lane: every record is a decorated body whose plain-
Python reading writes its outputs; the checks name the construct, the case and the path; and
``--frontend`` is checked at start (before torch and the DSL load), sets the DSL's pair of
variables, refuses an environment that contradicts it, and is named in the header and the report."""

import json
import os
import subprocess
import sys

import pytest
import torch

from fixtures.cases import frontend as fe
from fixtures.cases.failures import GpuHostDisagreement, Mismatch, Unwritten
from fixtures.plugin.frontend import frontend_option
from reports.usage import HarnessUsageError
from tests.conftest import ROOT

pytestmark = pytest.mark.harness

ONE_TEST = "import pytest\n\n@pytest.mark.host\ndef test_one():\n    pass\n"
IMPORT_PROBE = (
    "import atexit, sys\n\n"
    "atexit.register(lambda: open('heavy_imports.txt', 'w').write(' '.join(m for m in ('torch', 'cutlass') if m in sys.modules)))\n"
)


def test_case_ids_are_unique_and_read_like_the_case():
    ids = [case.id for case in fe.cases()]
    assert len(ids) == len(set(ids))
    assert "frontend-loop_if-i32" in ids and "frontend-lambda_constexpr-i32-k8" in ids and "frontend-issue_2647-i32" in ids


@pytest.mark.parametrize("construct", fe.CONSTRUCTS.values(), ids=lambda c: c.name)
def test_every_record_is_a_decorated_body_whose_plain_python_writes_its_outputs(construct):
    """The DSL's frontend rewrites only a function decorated ``@cute.jit``; the plain-Python reading
    writes every slot some thread (a slot no thread writes would judge nothing)."""
    assert "@cute.jit\ndef body(t, x, out, " in construct.source
    for case in (c for c in fe.cases() if c.construct is construct):
        rows = fe.reference(case)
        assert len(rows) == fe.THREADS and all(len(row) == construct.slots for row in rows)
        for slot in range(construct.slots):
            assert any(row[slot] != case.type.poison for row in rows), (case.id, slot)


def test_the_plain_reading_is_python_s_meaning():
    """Spot values, worked by hand: the reference is Python's, not the DSL's."""
    assert fe.reference(fe.case_by_id("frontend-for_range-i32")) == [[3], [2], [6], [7], [12], [3], [5], [11]]
    assert fe.reference(fe.case_by_id("frontend-lambda_constexpr-i32-k8"))[4] == [3]  # 4 // 4 * 3
    assert fe.reference(fe.case_by_id("frontend-issue_2647-i32"))[0] == [3, 1]  # stored before, reassigned after
    assert fe.reference(fe.case_by_id("frontend-loop_target_after-i32"))[3] == [-12345, 13]  # an empty range keeps it


def _tensor(rows, case):
    return torch.tensor(rows, dtype={"i32": torch.int32, "f32": torch.float32}[case.type.id])


def test_a_wrong_value_names_the_construct_the_case_and_the_path():
    from fixtures.dsl import frontend as run

    case = fe.case_by_id("frontend-loop_if-i32")
    want = run.expected(case)
    got = run.Ran(want.out.clone(), [])
    got.out[2, 0] += 1
    with pytest.raises(Mismatch, match=r"a loop-carried value updated under a dynamic `if` \(frontend-loop_if-i32, "
                                       r"\w+ frontend\), host JIT: 1 of 8 elements differ .* thread 2, out\[2, 0\]"):
        run.check_against_reference(case, "host", got, want)
    run.check_against_reference(case, "host", run.Ran(want.out.clone(), []), want)


def test_an_element_left_holding_the_poison_is_unwritten_and_gpu_host_disagreement_is_its_own():
    from fixtures.dsl import frontend as run

    case = fe.case_by_id("frontend-range_constexpr-f32")
    want = run.expected(case)
    got = run.Ran(want.out.clone(), [])
    got.out[:, 2] = case.type.poison
    with pytest.raises(Unwritten, match=r"GPU: 8 of 24 output elements the reference writes still hold the poison"):
        run.check_against_reference(case, "gpu", got, want)
    with pytest.raises(GpuHostDisagreement, match=r"GPU vs host JIT: 8 of 24 .*\(the host JIT matches the reference\)"):
        run.check_paths_agree(case, got, run.Ran(want.out.clone(), []), want)


def test_printed_lines_are_judged_in_any_order():
    from fixtures.dsl import frontend as run

    case = fe.case_by_id("frontend-printf-i32")
    want = run.expected(case)
    assert "thread 4: x=5" in want.printed and want.printed.count("3") == 4  # k=8: t // 4 * 3
    assert [line for line in want.printed if line.startswith("above")] == ["above 2: 3", "above 2: 4", "above 2: 5", "above 2: 6"]
    run.check_against_reference(case, "gpu", run.Ran(want.out.clone(), want.printed[::-1]), want)
    with pytest.raises(Mismatch, match=r"GPU: cute.printf's output differs .* printed and not expected: \['4'\]; "
                                       r"expected and not printed: \['0'\]"):
        run.check_against_reference(case, "gpu", run.Ran(want.out.clone(), sorted([*want.printed[1:], "4"])), want)
    with pytest.raises(GpuHostDisagreement, match=r"cute.printf's output differs between the GPU and the host JIT "
                                                  r"\(the host JIT matches the reference\)"):
        run.check_paths_agree(case, run.Ran(want.out.clone(), []), run.Ran(want.out.clone(), want.printed), want)


@pytest.mark.parametrize(("text", "environ", "chosen", "set_after"), [
    (None, {}, "default", {}),
    (None, {"CUTE_DSL_ENABLE_PYIR": "True"}, "pyir", {"CUTE_DSL_ENABLE_PYIR": "True"}),  # the user's own, untouched
    ("pyir", {}, "pyir", {"CUTE_DSL_ENABLE_PYIR": "1", "CUTE_DSL_AUTO_M2S": "1"}),
    ("pyir", {"CUTE_DSL_ENABLE_PYIR": "on"}, "pyir", {"CUTE_DSL_ENABLE_PYIR": "1", "CUTE_DSL_AUTO_M2S": "1"}),
    ("default", {"CUTE_DSL_ENABLE_PYIR": "0"}, "default", {"CUTE_DSL_ENABLE_PYIR": "0"}),
])
def test_the_option_chooses_the_frontend_and_sets_the_dsl_s_pair(text, environ, chosen, set_after):
    assert frontend_option(text, environ) == chosen
    assert environ == set_after


@pytest.mark.parametrize(("text", "environ", "words"), [
    ("bogus", {}, "--frontend bogus: expected default or pyir"),
    ("default", {"CUTE_DSL_ENABLE_PYIR": "1"}, "--frontend default: the environment sets CUTE_DSL_ENABLE_PYIR=1"),
    ("default", {"CUTE_DSL_AUTO_M2S": "yes"}, "--frontend default: the environment sets CUTE_DSL_AUTO_M2S=yes"),
    ("pyir", {"CUTE_DSL_AUTO_M2S": "0"}, "--frontend pyir: the environment sets CUTE_DSL_AUTO_M2S=0"),
])
def test_an_option_the_environment_contradicts_is_refused(text, environ, words):
    with pytest.raises(HarnessUsageError, match=words.replace("(", r"\(")):
        frontend_option(text, environ)


def test_a_bad_frontend_is_one_line_before_torch_and_the_dsl_load(project, usage_error):
    project.makepyfile(test_one=ONE_TEST, imports_probe=IMPORT_PROBE)
    line = usage_error("-p", "imports_probe", "--frontend=ast", "test_one.py", own_process=True)
    assert line == "ERROR: --frontend ast: expected default or pyir"
    assert (project.path / "heavy_imports.txt").read_text() == ""


def test_a_pyir_run_says_so_in_its_header_and_report(tmp_path):
    """In a process of its own: the DSL reads its variables once, at import."""
    report = tmp_path / "report"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST", "CUTE_DSL_"))}
    done = subprocess.run([sys.executable, "-m", "pytest", "suites/host/test_frontend_on_host.py", "-p", "no:randomly",
                           "-n", "0", "--frontend", "pyir", "-k", "frontend-while-i32]", f"--report-dir={report}"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "frontend: pyir (CUTE_DSL_ENABLE_PYIR=1, CUTE_DSL_AUTO_M2S=1)" in done.stdout
    results = json.loads((report / "results.json").read_text())
    assert results["fingerprint"]["frontend"] == "pyir"
    assert "- frontend: `pyir`" in (report / "summary.md").read_text()


def test_a_dsl_without_pyir_or_reading_another_frontend_is_refused_after_it_loads(monkeypatch):
    from fixtures.dsl import frontend as run
    from fixtures.plugin.frontend import check_loaded

    monkeypatch.setattr(run, "has_pyir", lambda: False)
    with pytest.raises(HarnessUsageError, match=r"--frontend pyir: DSL \S+ has no PyIR frontend \(it came in 4.8\)"):
        check_loaded(fe.PYIR_FRONTEND)
    monkeypatch.setattr(run, "has_pyir", lambda: True)
    monkeypatch.setattr(run, "running_frontend", lambda: fe.DEFAULT_FRONTEND)
    with pytest.raises(HarnessUsageError, match=r"--frontend pyir: the DSL reads default \(it was imported before"):
        check_loaded(fe.PYIR_FRONTEND)
    check_loaded(fe.DEFAULT_FRONTEND)
