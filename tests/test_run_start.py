"""Bad input to the harness is refused at start, in one line, before any case runs; a run
that never starts (or only lists cases) leaves no folder behind."""

import json
import os
import subprocess
import sys
import time

import pytest
import torch

from fixtures.dsl import sanitizer
from fixtures.plugin import startup

pytestmark = pytest.mark.harness

ONE_TEST = "import pytest\n\n@pytest.mark.host\ndef test_one():\n    pass\n"

# stage modules as a kernel author might get them wrong (the DSL imports; nothing runs on a GPU)
STAGE_MODULES = {
    "raises_at_import": 'raise RuntimeError("no such kernel\\nsecond line")\n',
    "takes_a_name": (
        "from fixtures.dsl.kernels import register\n\n"
        "@register('naive')\ndef again(mA, mB, mC, stream):\n    pass\n"
    ),
    "three_arguments": (
        "import cutlass.cute as cute\nfrom fixtures.dsl.kernels import register\n\n"
        "@register('three_args')\n@cute.jit\ndef three_args(mA: cute.Tensor, mB: cute.Tensor, mC: cute.Tensor):\n    pass\n"
    ),
    "registers_nothing": "import cutlass.cute as cute\n\nSPEED = 1\n",
    "not_jit": (
        "from fixtures.dsl.kernels import register\n\n"
        "@register('not_jit')\ndef not_jit(mA, mB, mC, stream):\n    mC[0, 0] = mA[0, 0] + mB[0, 0]\n"
    ),
}


@pytest.fixture
def project(project):
    project.makepyfile(test_one=ONE_TEST, **STAGE_MODULES)
    (project.path / "heavy_pkg").mkdir()  # a package whose import is heavy: never run to find a submodule it lacks
    (project.path / "heavy_pkg" / "__init__.py").write_text("raise RuntimeError('heavy_pkg was imported')\n")
    (project.path / "examples").mkdir()
    (project.path / "examples" / "my_stages.py").write_text("")  # a file path a kernel author may give
    return project


def leftovers(project) -> list[str]:
    """What a run left in the project folder (besides the project, pytester's own files and
    pytest-benchmark's storage folder) and the harness's temporary folders (``cute-*``; the DSL
    keeps a cache of its own there)."""
    mine = {"conftest.py", "tox.ini", "requirements.txt", "fixtures", "reports", "tmp", "test_one.py", "examples", "heavy_pkg", "stdin", "stdout", "stderr", ".benchmarks",
            "__pycache__",
            *(f"{m}.py" for m in STAGE_MODULES)}
    left = sorted(p.name for p in project.path.iterdir() if p.name not in mine and not p.name.startswith("runpytest-"))
    return left + [f"tmp/{p.name}" for p in (project.path / "tmp").glob("cute-*")]


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        pytest.param(("--report-dir", "test_one.py"), "ERROR: --report-dir test_one.py: exists and is not a folder", id="report-dir-file"),
        pytest.param(("--report-dir=/proc/x",), "ERROR: --report-dir /proc/x: cannot write there (", id="report-dir-unwritable"),
        pytest.param(("--report-dir", "r" * 300), "ERROR: --report-dir rrrrrrrrrr", id="report-dir-name-too-long"),
        pytest.param(("--stage-module", "raises_at_import"),
                     "ERROR: --stage-module raises_at_import: RuntimeError: no such kernel (raises_at_import.py:1)", id="stage-raises"),
        pytest.param(("--stage-module", "takes_a_name"),
                     "ERROR: --stage-module takes_a_name: ValueError: a stage named 'naive' is built in (takes_a_name.py:3)",
                     id="stage-name-taken"),
        pytest.param(("--stage-module", "no_such_module"),
                     "ERROR: --stage-module no_such_module: ModuleNotFoundError: No module named 'no_such_module'", id="stage-missing"),
        pytest.param(("--stage-module", "heavy_pkg.missing"),
                     "ERROR: --stage-module heavy_pkg.missing: ModuleNotFoundError: No module named 'heavy_pkg.missing'",
                     id="stage-submodule-missing"),
        pytest.param(("--stage-module", "registers_nothing"),
                     "ERROR: --stage-module registers_nothing: registers no stage (decorate each kernel with @register('name')",
                     id="stage-none-registered"),
        pytest.param(("--stage-module", "three_arguments"),
                     "ERROR: --stage-module three_arguments: ValueError: stage 'three_args': three_args must take (mA, mB, mC, stream)",
                     id="stage-signature"),
        pytest.param(("--stage-module", "not_jit"),
                     "ERROR: stage 'not_jit' does not compile (not_jit-fp16-", id="stage-not-jit"),
        pytest.param(("--explore", "0"), "ERROR: --explore 0: draw at least one case a stage", id="explore-zero"),
        pytest.param(("--explore", "many"),
                     "ERROR: --explore many: expected a whole number of fresh cases to draw a stage (e.g. --explore 200)",
                     id="explore-not-a-number"),
        pytest.param(("--plan-sample", "pair"),
                     "ERROR: --plan-sample pair: expected all (every case of each plan), pairs (each plan's strength-2 "
                     "sample, what CI runs) or gate (the GPU gate's sample, docs/ci.md)", id="plan-sample"),
        pytest.param(("--fault-storm", "0"),
                     "ERROR: --fault-storm 0: expected a number of device faults, at least 1, that stop launches on a GPU "
                     "within 120 s, or off (the gate's is 3)", id="fault-storm-zero"),
        pytest.param(("--fault-storm", "many"), "ERROR: --fault-storm many: expected a number of device faults",
                     id="fault-storm-not-a-number"),
        pytest.param(("--benchmark-only", "-n", "2"),
                     "ERROR: --benchmark-only with -n: a parallel run measures its bench cases alone", id="benchmark-only-under-xdist"),
        pytest.param(("--stage-module", "examples/my_stages.py"),
                     "ERROR: --stage-module examples/my_stages.py: a file path; name the module as Python imports it: "
                     "--stage-module examples.my_stages", id="stage-path"),
        pytest.param(("--stage-module", "nosuch/mod.py"), "ERROR: --stage-module nosuch/mod.py: a file path, and no such file (",
                     id="stage-path-missing"),
        pytest.param(("--drawn-case", "tv-fp16-align16-static-c_is_x-1x1"),
                     "ERROR: --drawn-case tv-fp16-align16-static-c_is_x-1x1: names no case", id="drawn-case-unknown"),
        pytest.param(("--sanitize=memcheck,leakcheck",), "ERROR: --sanitize: unknown tool leakcheck (choose from", id="sanitize-tool"),
        pytest.param(("--report-dir=",), "ERROR: --report-dir: an empty path (leave the option out for runs/<timestamp>)",
                     id="report-dir-empty"),
        pytest.param(("-m", "nonexistentmarker", "-n", "2"), "ERROR: Unknown marker(s) in '-m' expression: nonexistentmarker.",
                     id="mark-unknown-under-xdist"),
        pytest.param(("-k", "tv and (", "-n", "2"), "ERROR: Wrong expression passed to '-k': tv and (: ",
                     id="keyword-syntax-under-xdist"),
    ],
)
def test_bad_input_is_one_line_at_start_and_leaves_nothing(project, usage_error, args, expected):
    line = usage_error(*args, "test_one.py")
    assert line.startswith(expected), line
    assert leftovers(project) == []


@pytest.mark.parametrize("args", [
    pytest.param(("--stage-module", "raises_at_import"), id="stage-raises"),
    pytest.param(("--stage-module", "not_jit"), id="stage-not-jit"),
])
def test_bad_input_found_beside_the_workers_start_is_one_line_and_leaves_nothing(project, usage_error, args, tmp_path):
    """Under xdist the controller checks the install and sets up beside its workers' start
    (``beside``): what its set-up refuses is still one line and exit 4, no case ran, the workers
    it started are gone with the run, and a ``--junitxml`` file the user had is not replaced."""
    junit = tmp_path / "mine.xml"
    junit.write_text("the user's own")
    alone = usage_error(*args, f"--junitxml={junit}", "test_one.py")
    line = usage_error(*args, f"--junitxml={junit}", "-n", "2", "test_one.py")
    assert line == alone
    assert junit.read_text() == "the user's own"
    assert leftovers(project) == []


def test_a_kernel_that_is_not_jit_is_named_by_the_dsls_own_words(usage_error):
    """Compiled once on the CPU at start: the DSL's refusal (4.8: ``CALL_MISSING_JIT_DECORATOR``,
    4.3: "is not decorated with jit decorator"), one line, no colour codes."""
    line = usage_error("--stage-module", "not_jit", "test_one.py")
    assert "jit_decorator" in line.lower().replace(" ", "_") and "\x1b" not in line


def test_collect_only_writes_no_report_and_leaves_nothing(project):
    result = project.runpytest_inprocess("--collect-only", "test_one.py")
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(["*reports: none (--collect-only)*"])
    assert leftovers(project) == []


def test_a_run_leaves_its_report_and_no_temporary_folder(project):
    """The run's scratch (notes, the DSL's dump folders) goes when the run ends; the default report folder stays."""
    result = project.runpytest_inprocess("test_one.py")
    assert result.ret == pytest.ExitCode.OK
    (runs,) = [p for p in project.path.iterdir() if p.name == "runs"]
    (report,) = runs.iterdir()
    assert sorted(p.name for p in report.iterdir()) == ["junit.xml", "results.json", "summary.md"]
    assert leftovers(project) == ["runs"]


def test_the_report_dir_is_checked_in_either_spelling(project, usage_error):
    """``--report-dir PATH`` and ``--report-dir=PATH`` mean the same, for a bad path and a good one."""
    assert usage_error("--report-dir", "test_one.py", "test_one.py") == usage_error("--report-dir=test_one.py", "test_one.py")
    for spelling in (("--report-dir", "a/b"), ("--report-dir=c/d",)):
        assert project.runpytest_subprocess(*spelling, "-n", "1", "test_one.py").ret == pytest.ExitCode.OK
    assert (project.path / "a/b/results.json").exists() and (project.path / "c/d/results.json").exists()


IMPORT_PROBE = (
    "import atexit, sys\n\n"
    "atexit.register(lambda: open('heavy_imports.txt', 'w').write(' '.join(m for m in ('torch', 'cutlass') if m in sys.modules)))\n"
)


@pytest.mark.parametrize(
    "args",
    [
        pytest.param(("--arch=sm_1",), id="arch"),
        pytest.param(("--report-dir", "test_one.py"), id="report-dir"),
        pytest.param(("--report-dir", "r" * 300), id="report-dir-name-too-long"),
        pytest.param(("--bandwidth-threshold=abc",), id="threshold"),
        pytest.param(("--bandwidth-plant-slowdown=2",), id="plant-slowdown"),
        pytest.param(("--replace",), id="replace-without-save"),
        pytest.param(("--bandwidth-baseline=bad_baseline.json",), id="baseline-file"),
        pytest.param(("--gpus=0,x",), id="gpus-malformed"),
        pytest.param(("--gpus=7",), id="gpus-not-visible"),
        pytest.param(("--explore=0",), id="explore"),
        pytest.param(("--explore=many",), id="explore-not-a-number"),
        pytest.param(("--fault-storm=-1",), id="fault-storm"),
        pytest.param(("--stage-module=./examples/my_stages.py",), id="stage-path"),
        pytest.param(("--stage-module=nosuch/mod.py",), id="stage-path-missing"),
        pytest.param(("--stage-module=no_such_module",), id="stage-missing"),
        pytest.param(("--sanitize=bogus",), id="sanitize"),
        pytest.param(("--plan-sample=",), id="plan-sample"),
        pytest.param(("--drawn-case=nope",), id="drawn-case-form"),
    ],
)
def test_a_usage_error_comes_before_torch_and_the_dsl_load(project, usage_error, args):
    """Options and input files are checked first, so a typo costs well under the 15-20 s that
    importing torch and the DSL takes: neither is imported when the run stops."""
    project.makepyfile(imports_probe=IMPORT_PROBE)
    (project.path / "bad_baseline.json").write_text('{"cute_harness_fingerprint": 1}')
    usage_error("-p", "imports_probe", *args, "test_one.py", own_process=True)
    assert (project.path / "heavy_imports.txt").read_text() == ""


@pytest.mark.skipif(sanitizer.find_tool() is not None, reason="compute-sanitizer is installed here")
def test_a_missing_sanitizer_stops_a_run_that_requires_the_gpu(usage_error):
    line = usage_error("--sanitize", "--require-gpu", "test_one.py")
    assert line == "ERROR: --sanitize: compute-sanitizer not found on PATH or in /usr/local/cuda/bin (it comes with the CUDA toolkit)"


@pytest.mark.skipif(sanitizer.find_tool() is not None, reason="compute-sanitizer is installed here")
def test_a_missing_sanitizer_skips_its_cases_with_the_reason():
    assert startup.sanitize_option("memcheck", required=False) == (
        ("memcheck",), "--sanitize: compute-sanitizer not found on PATH or in /usr/local/cuda/bin (it comes with the CUDA toolkit)"
    )
    assert startup.sanitize_option(None, required=True) == ((), None)


def test_a_report_is_never_replaced_by_a_later_run(project, usage_error):
    """Reusing a report folder stops the second run at start; the first run's report is intact."""
    assert project.runpytest_inprocess("--report-dir=out", "test_one.py").ret == pytest.ExitCode.OK
    before = (project.path / "out" / "results.json").read_text()
    line = usage_error("--report-dir=out", "test_one.py")
    assert line.startswith("ERROR: --report-dir out: holds the report of an earlier run (started 20"), line
    assert line.endswith("); choose a new folder, or remove that one first")
    assert (project.path / "out" / "results.json").read_text() == before


@pytest.mark.parametrize("name", ["summary.md", "junit.xml"])
def test_a_folder_holding_files_of_someone_elses_is_refused_and_left_alone(project, usage_error, name):
    """Such files were once silently overwritten (no results.json: not taken for a report)."""
    (project.path / "out").mkdir()
    (project.path / "out" / name).write_text("mine\n")
    line = usage_error("--report-dir=out", "test_one.py")
    assert line == (f"ERROR: --report-dir out: holds files that are not a run's report ({name}), never overwritten; "
                    "choose an empty or new folder")
    assert [p.name for p in (project.path / "out").iterdir()] == [name]
    assert (project.path / "out" / name).read_text() == "mine\n"


WAITS = """
import pathlib, time
import pytest

@pytest.mark.host
def test_waits():
    pathlib.Path("started").touch()
    deadline = time.monotonic() + 120
    while not pathlib.Path("go").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
"""


def test_a_second_run_on_a_folder_in_use_is_refused_and_the_first_report_survives(project, usage_error):
    """Two runs started seconds apart on one folder both passed, and only the second's report was left."""
    project.makepyfile(test_waits=WAITS)
    first = project.popen([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--report-dir", "out", "test_waits.py"],
                          stdin=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while not (project.path / "started").exists() and first.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert (project.path / "started").exists(), first.communicate()
        line = usage_error("--report-dir", "out", "test_one.py")
        assert line.startswith(f"ERROR: --report-dir out: another run is writing its report there (pid {first.pid} on "), line
        assert line.endswith("); wait for it to end, or choose another folder")
    finally:
        (project.path / "go").touch()
        first.communicate(timeout=120)
    assert first.returncode == 0
    data = json.loads((project.path / "out" / "results.json").read_text())
    assert [c["nodeid"] for c in data["cases"]] == ["test_waits.py::test_waits"]
    assert not (project.path / ".out.claim").exists()


@pytest.mark.skipif(torch.cuda.is_available(), reason="a CUDA device is here")
def test_a_baseline_save_without_a_gpu_is_refused_at_start(usage_error):
    """It was accepted, and said "baseline not saved" on the run's second line only."""
    line = usage_error("test_one.py", "--bandwidth-save")  # last: it takes an optional path
    assert line == ("ERROR: --bandwidth-save: no CUDA device: torch.cuda.is_available() is False: the bench tier "
                    "measures nothing here, so there is no baseline to save (run it on a GPU runner)")


def test_more_xdist_workers_than_cpus_are_capped_in_one_line(project):
    """``-n 16`` on two CPUs ran 4.5 times slower than ``-n 2``, without a word; ``-n 64`` was still
    starting workers after 170 s: the run starts one a CPU (xdist's list of workers cut), and says so first."""
    from types import SimpleNamespace

    from fixtures.plugin import startup

    config = SimpleNamespace(option=SimpleNamespace(numprocesses=64, tx=["popen"] * 64))
    assert startup.cap_workers(config, 2) == "-n 64: capped at 2 workers, one a CPU of this machine's 2 (each compiles on " \
                                             "a CPU of its own: more only wait)"
    assert (config.option.numprocesses, config.option.tx) == (2, ["popen", "popen"])
    assert startup.cap_workers(config, 2) is None
    cpus = len(os.sched_getaffinity(0))
    result = project.runpytest_inprocess("-n", str(cpus + 3), "--collect-only", "test_one.py")
    assert result.ret == pytest.ExitCode.OK
    assert result.errlines[0].startswith(f"-n {cpus + 3}: capped at {cpus} workers")
    assert "capped" not in project.runpytest_inprocess("-n", str(cpus), "--collect-only", "test_one.py").stderr.str()


def test_a_report_folder_inside_a_finished_runs_report_is_refused(project, usage_error):
    """``--report-dir runs/done/again``, ``runs/done`` a finished run's report: accepted silently
    before, its files then read as that run's. One line at start; the finished report untouched."""
    done = project.path / "runs" / "done"
    done.mkdir(parents=True)
    (done / "results.json").write_text("{}")
    line = usage_error("--report-dir", "runs/done/again", "test_one.py")
    assert line == (f"ERROR: --report-dir runs/done/again: inside another run's report ({done}, which holds its results.json): "
                    "choose a folder outside it")
    assert sorted(p.name for p in done.iterdir()) == ["results.json"]
