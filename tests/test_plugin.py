"""The plugin (``fixtures.plugin.hooks``), driven end to end in throwaway copies of the project (one subprocess per run)."""

import configparser
import importlib.metadata
import json
import shlex
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import torch
from _pytest.mark.expression import Expression

from fixtures.cases import matrix
from reports.model import SCHEMA
from tests.conftest import call_reports

pytestmark = pytest.mark.harness

ROOT = Path(__file__).resolve().parents[1]
NO_GPU = "no CUDA device"

TIERS_MODULE = """
import pytest

@pytest.mark.host
def test_on_host():
    pass

@pytest.mark.host
def test_fails():
    assert 1 == 2, "one is not two"

@pytest.mark.gpu
def test_on_gpu():
    pass

@pytest.mark.host
@pytest.mark.xfail(reason="known limitation")
def test_limitation():
    assert False
"""

CASES_MODULE = """
import pytest

@pytest.mark.plan("gpu")
def test_case(case):
    pass
"""


@pytest.fixture
def project(project):
    project.makepyfile(test_tiers=TIERS_MODULE)
    return project


def stderr_lines(result):
    return [line for line in result.errlines if line.strip()]


def test_require_gpu_without_gpu_is_a_one_line_usage_error(project):
    """A GPU runner that lost its GPU must fail at once and say why, not skip everything green."""
    result = project.runpytest_inprocess("--require-gpu", "test_tiers.py")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    (line,) = stderr_lines(result)
    assert line.startswith("ERROR: --require-gpu: ")
    assert NO_GPU in line


def test_unknown_arch_is_a_one_line_usage_error(project):
    """A mistyped --arch is caught before anything compiles, naming what was asked for."""
    result = project.runpytest_inprocess("--arch", "sm_99", "test_tiers.py")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    (line,) = stderr_lines(result)
    assert line.startswith("ERROR: unknown --arch 'sm_99'; known: ")
    assert "sm_90a" in line


def test_cpu_run_accepts_sm_90a_skips_gpu_tier_and_prints_fingerprint(project):
    """What a CPU runner sees: the chosen arch, the install's fingerprint, host tests run, gpu tests skipped for one reason."""
    result = project.runpytest_inprocess("--arch", "sm_90a", "-rs", "test_tiers.py")
    result.assert_outcomes(passed=1, failed=1, skipped=1, xfailed=1)
    result.stdout.fnmatch_lines(
        [
            f"cute-dsl: {importlib.metadata.version('nvidia-cutlass-dsl')} (libs: *",
            f"torch: {torch.__version__} (CUDA *); apache-tvm-ffi: *; python *",
            "driver: * (CUDA *); gpu: no GPU",
            "compile arch: sm_90a; reports: *",
        ]
    )
    (skipped,) = [line for line in result.outlines if line.startswith("SKIPPED")]
    assert skipped.startswith("SKIPPED [1] test_tiers.py:")
    assert f": {NO_GPU}: " in skipped


def test_report_dir_gets_results_summary_and_junit(project):
    """--report-dir holds the three reports, and a failure is visible in each."""
    out = project.path / "out"
    result = project.runpytest_inprocess("--report-dir", str(out), "test_tiers.py")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert sorted(p.name for p in out.iterdir()) == ["junit.xml", "results.json", "summary.md"]

    data = json.loads((out / "results.json").read_text())
    assert data["schema"] == SCHEMA
    assert data["exit_status"] == 1
    assert data["arch"] == "sm_90a"
    assert data["counts"] == {"passed": 1, "failed": 1, "skipped": 1, "xfailed": 1}
    assert data["fingerprint"]["gpu"] == "no GPU"
    assert data["fingerprint"]["dsl"] == importlib.metadata.version("nvidia-cutlass-dsl")
    assert {c["nodeid"]: (c["outcome"], c["tier"]) for c in data["cases"]} == {
        "test_tiers.py::test_on_host": ("passed", "host"),
        "test_tiers.py::test_fails": ("failed", "host"),
        "test_tiers.py::test_on_gpu": ("skipped", "gpu"),
        "test_tiers.py::test_limitation": ("xfailed", "host"),
    }
    failed = next(c for c in data["cases"] if c["outcome"] == "failed")
    assert failed["message"].startswith("AssertionError: one is not two")

    text = (out / "summary.md").read_text()
    failures = text.split("## Failures\n\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert failures == ["- `test_tiers.py::test_fails`: AssertionError: one is not two"]
    assert "| host | 1 | 1 | 0 | 1 | 0 | 0 |" in text.splitlines()

    suite = ET.parse(out / "junit.xml").getroot().find("testsuite")
    assert (suite.get("tests"), suite.get("failures")) == ("4", "1")


COUNTED_MODULE = """
import pytest

@pytest.mark.host
@pytest.mark.parametrize("n", [1, 2])
def test_on_host(n):
    pass

@pytest.mark.gpu
def test_on_gpu():
    pass

@pytest.mark.host
@pytest.mark.xfail(strict=True, reason="known limitation")
def test_limitation():
    assert False
"""


def test_the_reports_count_alike_and_name_xfails_and_a_run_without_a_gpu(project):
    """summary.md, junit.xml, results.json and the verdict line count the same cases (pytest's
    junit.xml counted xfails as skips: 4,541 skipped beside summary.md's 4,518); an xfail is a
    case that ran, named as one; exit 0 without a GPU says the gpu tier did not run."""
    project.makepyfile(test_counted=COUNTED_MODULE)
    out = project.path / "out"
    result = project.runpytest_inprocess("--report-dir", str(out), "test_counted.py")
    assert result.ret == pytest.ExitCode.OK
    verdict = ("PASSED WITHOUT A GPU: 3 cases ran (2 passed, 1 xfailed: known limitations failing as recorded), "
               "1 skipped · ran: host 3 · not run: gpu (1 skipped: no CUDA device*")
    result.stdout.fnmatch_lines([verdict])
    assert json.loads((out / "results.json").read_text())["counts"] == {"passed": 2, "skipped": 1, "xfailed": 1}
    summary_md = (out / "summary.md").read_text()
    assert "| **all** | 2 | 0 | 0 | 1 | 0 | 1 |" in summary_md.splitlines()
    assert summary_md.splitlines()[2].startswith("**" + verdict.split("*")[0])
    suite = ET.parse(out / "junit.xml").getroot().find("testsuite")
    assert [suite.get(k) for k in ("tests", "failures", "errors", "skipped")] == ["4", "0", "0", "1"]
    assert {p.get("name"): p.get("value") for p in suite.findall("properties/property")} == {"xfailed": "1"}
    xfailed = next(t for t in suite.iter("testcase") if t.get("name") == "test_limitation")
    assert [(p.get("name"), p.get("value")) for p in xfailed.iter("property")][0] == ("xfailed", "known limitation")
    assert xfailed.find("skipped") is None


DEEP_FAILURES = """
import pytest
from helper_deep import deep


@pytest.mark.host
@pytest.mark.xfail(strict=True, raises=RuntimeError, reason="known limitation")
def test_expected():
    try:
        deep(3)
    except ValueError as exc:
        raise RuntimeError("as the limitation says") from exc


@pytest.mark.host
@pytest.mark.xfail(strict=True, raises=ValueError, reason="known limitation")
def test_expected_deep_down():
    deep(3)


@pytest.mark.host
@pytest.mark.xfail(strict=True, raises=KeyError, reason="another limitation")
def test_fails_otherwise():
    deep(3)


@pytest.mark.host
def test_fails():
    deep(3)
"""

HELPER_DEEP = """
def deep(n):
    if n:
        return deep(n - 1)
    raise ValueError("at the bottom")
"""


def test_an_expected_failure_keeps_its_test_modules_traceback_and_any_other_all_of_it(project):
    """An xfailed call's report holds its traceback's entries in the test's own module and its
    chained exceptions without theirs (``fixtures.plugin.xfails``: formatting the rest cost the
    gate's 591 xfails about 0.3 s each); a failure its mark does not expect, and a plain failure,
    keep every entry, as pytest writes them."""
    project.makepyfile(test_deep=DEEP_FAILURES, helper_deep=HELPER_DEEP)
    result, by_name = call_reports(project, "--report-dir", str(project.path / "out"), "test_deep.py")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    expected = by_name["test_expected"].longrepr
    assert hasattr(by_name["test_expected"], "wasxfail")
    paths = {entry.reprfileloc.path for entry in expected.chain[-1][0].reprentries}
    assert paths == {"test_deep.py"} and "RuntimeError: as the limitation says" in str(expected)
    assert "ValueError: at the bottom" in str(expected) and "helper_deep.py" not in str(expected)  # the cause: its line alone
    deep_down = by_name["test_expected_deep_down"].longrepr
    assert [entry.reprfileloc.path for entry in deep_down.chain[-1][0].reprentries] == ["test_deep.py"]
    assert "ValueError: at the bottom" in str(deep_down)
    for name in ("test_fails_otherwise", "test_fails"):
        assert by_name[name].failed and "helper_deep.py" in str(by_name[name].longrepr), name


def test_xdist_run_reports_every_case_once(project):
    """Under -n 2 (tox's cpu env) the controller alone writes the reports, covering both workers'
    cases in collection order (what the summary's matrix and the plots order by), whatever order
    the workers finished them in."""
    out = project.path / "out"
    result = project.runpytest_subprocess("-n", "2", "--report-dir", str(out), "test_tiers.py")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    data = json.loads((out / "results.json").read_text())
    assert data["counts"] == {"passed": 1, "failed": 1, "skipped": 1, "xfailed": 1}
    assert [c["nodeid"] for c in data["cases"]] == [
        f"test_tiers.py::{name}" for name in ("test_on_host", "test_fails", "test_on_gpu", "test_limitation")
    ]


ONE_THREAD_MODULE = """
import os

import pytest
import torch


@pytest.mark.host
def test_a_worker_computes_on_one_cpu_thread():
    assert torch.get_num_threads() == 1 and os.environ["OMP_NUM_THREADS"] == "1"
"""

CPU_MODULE = """
import subprocess
import sys
import time

import pytest

SPIN = "import time\\nt = time.process_time()\\nwhile time.process_time() - t < 1.0: pass"


@pytest.fixture
def spun():
    exec(SPIN)


@pytest.mark.host
def test_spins_in_its_setup(spun):
    pass


@pytest.mark.host
def test_spins_in_a_child_it_waits_for():
    subprocess.run([sys.executable, "-c", SPIN], check=True)


@pytest.mark.host
def test_sleeps():
    time.sleep(1.0)
"""


def test_an_xdist_run_records_where_and_when_each_case_ran(project):
    """``-n auto`` starts a worker a CPU; each worker's torch uses one thread; results.json names
    each case's worker, its start and stop, each worker's start-up, collection and cases, and the
    controller's set-up beside them, which ``python -m reports timeline`` renders."""
    import os
    import subprocess
    import sys

    project.makepyfile(test_threads=ONE_THREAD_MODULE, test_cpu=CPU_MODULE)
    out = project.path / "out"
    result = project.runpytest_subprocess("-n", "auto", "--report-dir", str(out), "test_tiers.py", "test_threads.py",
                                          "test_cpu.py")
    assert result.ret == pytest.ExitCode.TESTS_FAILED  # test_fails, as ever
    data = json.loads((out / "results.json").read_text())
    workers = {f"gw{i}" for i in range(len(os.sched_getaffinity(0)))}
    ran = [c for c in data["cases"] if c["outcome"] != "skipped"]
    assert {c["worker"] for c in ran} <= workers and all(0 < c["start_s"] <= c["stop_s"] for c in ran)
    assert next(c for c in data["cases"] if c["nodeid"].endswith("one_cpu_thread"))["outcome"] == "passed"
    cpu = {c["nodeid"].split("::")[-1]: c["cpu_s"] for c in data["cases"] if c["nodeid"].startswith("test_cpu.py")}
    # a second of CPU in a fixture's setup and in a child the case waited for counts; a second asleep does not
    assert cpu["test_spins_in_its_setup"] >= 0.9 and cpu["test_spins_in_a_child_it_waits_for"] >= 0.9, cpu
    assert cpu["test_sleeps"] < 0.5, cpu
    spans = data["timeline"]["spans"]
    assert {s["process"] for s in spans} == workers | {"controller"}
    assert {s["phase"] for s in spans} == {"start-up", "collection", "cases", "set-up"}
    (set_up,) = [s for s in spans if s["process"] == "controller"]  # beside the workers' start, done before any case
    assert set_up["phase"] == "set-up" and set_up["stop_s"] <= min(c["start_s"] for c in ran)
    assert data["timeline"]["parallel_end_s"] <= data["timeline"]["end_s"]
    shown = subprocess.run([sys.executable, "-m", "reports", "timeline", str(out)], cwd=ROOT, capture_output=True, text=True)
    assert shown.returncode == 0 and "| gw0 |" in shown.stdout and "## Worker time by tier" in shown.stdout, shown.stderr
    assert "set up beside the workers' start" in shown.stdout and "their processes' CPU time" in shown.stdout


CRASHING_MODULE = """
import os
import pytest
from fixtures.plugin import fault
from fixtures.plugin import collector

@pytest.mark.host
@pytest.mark.parametrize("n", range(3))
def test_before(n):
    pass

@pytest.mark.host
def test_faults_its_worker(request):
    fault.record(collector.notes_dir(request.config), request.node.nodeid, "CUDA error: misaligned address", "")
    os._exit(3)

@pytest.mark.host
@pytest.mark.parametrize("n", range(3))
def test_after(n):
    pass
"""


def test_a_replaced_worker_runs_the_rest_with_an_absolute_report_dir(project, tmp_path_factory):
    """What a GPU runner does: ``-m gpu --report-dir /abs/path``, no test path, a kernel fault.

    The replacement worker parses the command line again before it knows the harness's options;
    had the fault record created the report folder, it would take that path for a test path,
    lose the conftest and die, and so would every replacement after it (seen on an H100).
    """
    project.makepyfile(test_crashing=CRASHING_MODULE)
    out = tmp_path_factory.mktemp("outside") / "reports"
    result = project.runpytest_subprocess("-p", "xdist", "-n", "1", "--report-dir", str(out), "-k", "before or faults or after")
    assert "unrecognized arguments" not in result.stdout.str() + result.stderr.str()
    data = json.loads((out / "results.json").read_text())
    outcomes = {c["nodeid"].split("::")[1]: c["outcome"] for c in data["cases"] if "crashing" in c["nodeid"]}
    assert outcomes == {**{f"test_before[{n}]": "passed" for n in range(3)}, "test_faults_its_worker": "failed",
                        **{f"test_after[{n}]": "passed" for n in range(3)}}
    assert sorted(p.name for p in out.iterdir()) == ["junit.xml", "results.json", "summary.md"]


def test_k_selects_by_shape_family_and_op_keywords(project):
    """The family and the op are not in a case's id; -k reaches them through the plugin's extra keywords."""
    project.makepyfile(test_cases=CASES_MODULE)
    result = project.runpytest_inprocess(
        "--collect-only", "-q", "-k", "odd and add", "--report-dir", str(project.path / "out"), "test_cases.py"
    )
    selected = {line.split("[", 1)[1].rstrip("]") for line in result.outlines if line.startswith("test_cases.py::")}
    expected = {c.id for c in matrix.cases("gpu") if c.family == "odd" and c.stage.op.name == "add"}
    assert {c.split("-", 1)[0] for c in expected} == {"naive", "vectorized", "predicated", "tuned"}
    assert selected == expected


def test_all_skipped_run_fails_the_gate(project):
    """A GPU job whose every case skipped checked nothing: it must not exit 0."""
    out = project.path / "out"
    result = project.runpytest_inprocess("-m", "gpu", "--report-dir", str(out), "test_tiers.py")
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED
    result.stdout.fnmatch_lines(["NOTHING RAN: all 1 selected cases were skipped · ran: nothing · not run: gpu (1 skipped: *"])
    assert json.loads((out / "results.json").read_text())["exit_status"] == pytest.ExitCode.NO_TESTS_COLLECTED


def test_a_selection_that_matches_nothing_is_named(project):
    """``-k`` that matches no case: the verdict says which selection chose nothing, not "all 0 skipped"."""
    result = project.runpytest_inprocess("-k", "no_such_case", "--report-dir", str(project.path / "out"), "test_tiers.py")
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED
    result.stdout.fnmatch_lines(["NOTHING RAN: no case was selected by -k 'no_such_case' · ran: nothing *"])


def test_collect_only_exits_ok(project):
    """Listing cases runs none by design; that is not a gate that checked nothing."""
    result = project.runpytest_inprocess("--collect-only", "-q", "--report-dir", str(project.path / "out"), "test_tiers.py")
    assert result.ret == pytest.ExitCode.OK
    assert not any(line.startswith("NOTHING RAN") for line in result.outlines)


def test_tox_release_envs_select_every_cpu_tier():
    """Each release env runs what a CPU machine can check of that release: host, compile, api and the harness's own tests."""
    tox = configparser.ConfigParser(interpolation=None)
    tox.read(ROOT / "tox.ini")
    (section,) = [name for name in tox.sections() if name.startswith("testenv:dsl")]
    argv = shlex.split(tox[section]["commands"])
    expression = Expression.compile(argv[argv.index("-m") + 1])
    for tier in ("host", "compile", "api", "harness"):
        assert expression.evaluate(lambda name, **kwargs: name == tier), tier
    assert not expression.evaluate(lambda name, **kwargs: name in ("gpu", "bench"))
    assert "tests" in tox["pytest"]["testpaths"].split()


DEPRECATIONS_MODULE = """
import warnings

import pytest

@pytest.mark.host
def test_meets_a_dsl_deprecation():
    warnings.warn("cute.make_fragment is deprecated, use cute.make_rmem_tensor", DeprecationWarning)

@pytest.mark.host
def test_meets_it_again_and_another_librarys():
    warnings.warn("cute.make_fragment is deprecated, use cute.make_rmem_tensor", DeprecationWarning)
    warnings.warn("numpy.thing is deprecated", DeprecationWarning)
"""


def test_dsl_deprecations_are_recorded_once_across_workers(project):
    """Deprecation warnings are findings (what breaks next release), kept once each, from xdist workers too."""
    project.makepyfile(test_deprecations=DEPRECATIONS_MODULE)
    out = project.path / "out"
    result = project.runpytest_subprocess("-n", "2", "--report-dir", str(out), "test_deprecations.py")
    assert result.ret == pytest.ExitCode.OK
    (finding,) = json.loads((out / "results.json").read_text())["deprecations"]
    assert finding["category"] == "DeprecationWarning"
    assert finding["message"] == "cute.make_fragment is deprecated, use cute.make_rmem_tensor"
    assert finding["first_case"].startswith("test_deprecations.py::test_meets_")
    assert "## Deprecations (what breaks in a later release)" in (out / "summary.md").read_text()


KNOWN_CRASH_MODULE = """
import pytest

@pytest.mark.gpu
@pytest.mark.parametrize("n", [pytest.param(1, marks=pytest.mark.skip(reason="known DSL crash, not run here"))])
def test_known_crash(n):
    pass
"""


def test_without_a_gpu_a_known_crash_skips_for_want_of_the_gpu(project):
    """97 gpu cases once skipped as "known crash, not run here" on a machine with no GPU at all."""
    project.makepyfile(test_known_crash=KNOWN_CRASH_MODULE)
    out = project.path / "out"
    project.runpytest_inprocess("--report-dir", str(out), "test_known_crash.py")
    (case,) = json.loads((out / "results.json").read_text())["cases"]
    assert (case["outcome"], case["reason"].split(":")[0]) == ("skipped", NO_GPU)


def test_every_skip_of_the_drawn_tests_is_in_the_harnesss_words(project, monkeypatch):
    """pytest's own "got empty parameter set for (drawn_case)" was the skip reason of the test
    that reruns ``--drawn-case``s in a run that named none."""
    from fixtures.dsl import device

    monkeypatch.setattr(device, "gpu_unavailable", device.gpu_unavailable)  # fake_gpu replaces it in this process
    (project.path / "suites").symlink_to(ROOT / "suites", target_is_directory=True)
    project.makepyfile(fake_gpu="from fixtures.dsl import device\n\ndevice.gpu_unavailable = lambda: None\n")
    project.syspathinsert()
    out = project.path / "out"
    project.runpytest_inprocess("-p", "fake_gpu", "--arch", "sm_90a", "--report-dir", str(out),
                                "suites/gpu/test_drawn.py::test_drawn_case")
    (case,) = json.loads((out / "results.json").read_text())["cases"]
    assert case["outcome"] == "skipped"
    assert case["reason"].startswith("no --drawn-case given: ")
