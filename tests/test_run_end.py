"""A run always ends with a report that says what it checked: after an interrupt, and when a
parallel run's bench cases are measured alone after the parallel part; where the report cannot
be written (a full disk), with the verdict and the file that could not be written."""

import errno
import json
import os
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET

import pytest

from fixtures.plugin import bench_phase

pytestmark = pytest.mark.harness

INTERRUPTED = """
import pytest

@pytest.mark.host
@pytest.mark.parametrize("n", range(3))
def test_before(n):
    pass

@pytest.mark.host
def test_interrupts():
    raise KeyboardInterrupt

@pytest.mark.host
@pytest.mark.parametrize("n", range(4))
def test_after(n):
    pass
"""

BENCH = """
import os
import pytest

@pytest.mark.host
def test_host():
    pass

@pytest.mark.bench
def test_bench_measures(request):
    request.node.user_properties.append(("pid", os.getpid()))

@pytest.mark.bench
def test_bench_regressed():
    assert False, "slower than the baseline"
"""

SERIAL_PHASE_DIES = """
import os
import pytest

@pytest.mark.bench
def test_bench_first():
    os._exit(1)

@pytest.mark.bench
def test_bench_second():
    pass
"""

ONE_CASE = "import pytest\n\n@pytest.mark.host\ndef test_one():\n    pass\n"

# the GPU as the harness sees it, stubbed at its one boundary: the bench tier then runs on a CPU
FAKE_GPU = "from fixtures.dsl import device\n\ndevice.gpu_unavailable = lambda: None\n"


def results(path) -> dict:
    return json.loads((path / "results.json").read_text())


# one worker: the cases after the interrupt are then surely still queued behind it
@pytest.mark.parametrize("parallel", [(), ("-n", "1")], ids=["serial", "xdist"])
def test_an_interrupted_run_writes_a_report_that_says_so(project, parallel):
    project.makepyfile(test_interrupted=INTERRUPTED)
    out = project.path / "out"
    result = project.runpytest_subprocess(*parallel, "--report-dir", str(out), "test_interrupted.py")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    data = results(out)
    assert (data["status"], data["collected"], data["exit_status"]) == ("interrupted", 8, 2)
    assert data["not_run"] == 8 - len(data["cases"]) > 0
    verdict = (out / "summary.md").read_text().splitlines()[2]
    assert verdict.startswith(f"**INTERRUPTED after {len(data['cases'])} of 8 cases ({data['not_run']} not run)")
    result.stdout.fnmatch_lines(["INTERRUPTED after * of 8 cases (* not run) *"])


# a second Ctrl-C, as it lands while xdist waits for its workers to stop: in another plugin's finish
SECOND_CTRL_C = """
import pytest

@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish():
    raise KeyboardInterrupt
"""


def test_a_second_ctrl_c_as_the_run_ends_still_leaves_an_interrupted_report(project):
    project.makepyfile(test_interrupted=INTERRUPTED, second_ctrl_c=SECOND_CTRL_C)
    out = project.path / "out"
    result = project.runpytest_subprocess("-p", "second_ctrl_c", "--report-dir", str(out), "test_interrupted.py")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    data = results(out)
    assert (data["status"], data["exit_status"]) == ("interrupted", 2)
    assert any("second Ctrl-C" in note for note in data["notes"])
    result.stdout.fnmatch_lines(["INTERRUPTED after * of 8 cases (* not run) *"])
    # pytest's junit.xml writer never ran: the report's is written from the run's cases, and says so
    assert any(note.startswith("junit.xml written by the harness") for note in data["notes"])
    suite = ET.parse(out / "junit.xml").getroot().find("testsuite")
    assert int(suite.get("tests")) == len(data["cases"]) == sum(data["counts"].values())
    assert int(suite.get("failures")) == data["counts"].get("failed", 0)


@pytest.fixture
def bench_project(project, monkeypatch):
    project.makepyfile(fake_gpu=FAKE_GPU)
    monkeypatch.setenv("PYTEST_ADDOPTS", "-p fake_gpu --arch sm_90a")  # the serial phase inherits it too
    return project


def test_a_parallel_runs_bench_cases_run_alone_after_it_into_one_report(bench_project):
    """``-n 2`` with bench cases: workers leave them out, one process measures them once the
    workers are done, and the run's exit status, results.json and junit.xml hold every case."""
    bench_project.makepyfile(test_mixed=BENCH)
    out = bench_project.path / "out"
    result = bench_project.runpytest_subprocess("-n", "2", "--report-dir", str(out), "test_mixed.py")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*bench phase: 2 bench cases, measured alone after the other cases, which took * s*"])
    assert "started while those ran" not in result.stdout.str(), "without a GPU the serial process started early"
    data = results(out)
    assert data["status"] == "complete" and data["collected"] == 3
    outcomes = {c["nodeid"].split("::")[1]: (c["outcome"], c["tier"]) for c in data["cases"]}
    assert outcomes == {"test_host": ("passed", "host"), "test_bench_measures": ("passed", "bench"),
                        "test_bench_regressed": ("failed", "bench")}
    suite = ET.parse(out / "junit.xml").getroot().find("testsuite")
    assert (suite.get("tests"), suite.get("failures"), suite.get("skipped")) == ("3", "1", "0")
    assert "ran: host 1, bench 2" in (out / "summary.md").read_text()


EARLY = """
import os
import pathlib
import time

import pytest

STARTED, DONE, MEASURED = (pathlib.Path(os.environ[k]) for k in ("SERIAL_STARTED", "HOST_DONE", "MEASURED"))

@pytest.mark.host
def test_host_while_the_serial_process_waits():
    deadline = time.monotonic() + 120
    while not STARTED.exists():
        assert time.monotonic() < deadline, "the serial process did not start while the workers ran"
        time.sleep(0.1)
    DONE.touch()

@pytest.mark.bench
def test_bench_after_every_other_case():
    MEASURED.touch()
    assert DONE.exists(), "measured while the other cases still ran"
"""

# loaded by every process of the run: the serial bench process says when it has started
SERIAL_STARTED = """
import os
import pathlib


def pytest_configure(config):
    if config.getoption("--bench-phase-stream", None):
        pathlib.Path(os.environ["SERIAL_STARTED"]).touch()
"""


def test_the_serial_process_starts_with_the_workers_and_measures_only_once_they_are_done(bench_project, fake_gpus, monkeypatch):
    """On a run with a GPU it starts (and compiles) while the workers run and waits; it measures
    once they are done."""
    fake_gpus([{"name": "NVIDIA H100 80GB HBM3", "total_mib": 81559, "free_mib": 81000}])
    bench_project.makepyfile(test_early=EARLY, serial_started=SERIAL_STARTED)
    files = {k: bench_project.path / k.lower() for k in ("SERIAL_STARTED", "HOST_DONE", "MEASURED")}
    for key, path in files.items():
        monkeypatch.setenv(key, str(path))
    monkeypatch.setenv("PYTEST_ADDOPTS", "-p fake_gpu -p serial_started --arch sm_90a")
    out = bench_project.path / "out"
    result = bench_project.runpytest_subprocess("-n", "2", "--report-dir", str(out), "test_early.py")
    assert files["SERIAL_STARTED"].exists()
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()[-3000:]
    result.stdout.fnmatch_lines(["*bench phase: 1 bench cases, measured alone after the other cases, which took * s "
                                 "(started while those ran)*"])
    assert results(out)["counts"] == {"passed": 2}


def test_a_serial_process_never_told_go_ends_unmeasured(tmp_path):
    """A run that stops early (-x, an interrupt, other bench ids) ends its waiting processes: the
    pipe closed without GO and the process terminated, even one still compiling ahead."""
    read, go = os.pipe()
    waiting = subprocess.Popen([sys.executable, "-c", "import os, sys, time; time.sleep(60); "
                                f"sys.exit(0 if os.read({read}, 3) == b'go\\n' else 5)"], pass_fds=(read,))
    os.close(read)
    process = bench_phase._Process(None, ["test_bench"], tmp_path / "stream.jsonl", None, waiting, go)
    started = time.monotonic()
    bench_phase.SerialPhase.stop([process])
    assert waiting.returncode == -signal.SIGTERM and time.monotonic() - started < 30


# a serial process's cases, and an exit handler that would run in an interpreter's ordinary teardown
TORN_DOWN = """
import atexit, os, pathlib
import pytest

atexit.register(lambda: pathlib.Path(os.environ["TORN_DOWN"]).touch())

@pytest.mark.bench
def test_bench_measures():
    pass

@pytest.mark.bench
def test_bench_regressed():
    assert False, "slower"
"""


def test_the_serial_process_exits_with_its_status_once_its_reports_are_out(bench_project, tmp_path, monkeypatch):
    """The controller waits on it: it streams every report, removes its folders and exits with its
    session's status at once, skipping the interpreter's teardown (no exit handler runs)."""
    bench_project.makepyfile(test_torn=TORN_DOWN)
    monkeypatch.setenv("TORN_DOWN", str(tmp_path / "torn-down"))
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    stream = tmp_path / "stream.jsonl"
    result = bench_project.runpytest_subprocess("-p", "no:xdist", f"{bench_phase.STREAM_OPTION}={stream}", "test_torn.py")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    calls = [json.loads(line) for line in stream.read_text().splitlines()]
    assert {(c["nodeid"].split("::")[1], c["outcome"]) for c in calls if c["when"] == "call"} == {
        ("test_bench_measures", "passed"), ("test_bench_regressed", "failed")}
    assert not (tmp_path / "torn-down").exists(), "the interpreter's teardown ran"
    assert [p.name for p in (tmp_path / "tmp").iterdir() if p.name.startswith("cute-harness-")] == []


# a serial process's one measured case, and a probe of when pytest-benchmark's machine info is found
MACHINE_PROBE = """
import os, pathlib
import pytest

def note(what):
    with pathlib.Path(os.environ["SERIAL_LOG"]).open("a") as log:
        log.write(what + "\\n")

@pytest.hookimpl(tryfirst=True)
def pytest_benchmark_generate_machine_info(config):
    note("machine info")
    return {"machine": "probed"}
"""

MEASURED_ONCE = """
import pytest
from fixtures.bandwidth import measure as bench
from fixtures.bandwidth import timing
from fixtures.plugin import bench_plugin
from machine_probe import note

@pytest.mark.bench
def test_bench_measures(request, benchmark):
    note("case")
    bench.feed_benchmark(benchmark, timing.Measurement([1e-3, 2e-3, 3e-3]), {"case": "naive-bf16"})
    bench_plugin.gate_of(request.config).keep(benchmark.stats)
"""


def test_the_serial_process_finds_its_documents_machine_info_before_its_cases(bench_project, tmp_path, monkeypatch):
    """pytest-benchmark's machine info (py-cpuinfo: about a second) is found once the serial
    process has collected, while an early one waits for GO; the gate's end, which waits for this
    process after its last case, no longer does (1.7 s between the last case and the end on an H100)."""
    bench_project.makepyfile(machine_probe=MACHINE_PROBE, test_measured=MEASURED_ONCE)
    log = tmp_path / "serial.log"
    monkeypatch.setenv("SERIAL_LOG", str(log))
    stream = tmp_path / "stream.jsonl"
    result = bench_project.runpytest_subprocess("-p", "no:xdist", "-p", "machine_probe", f"{bench_phase.STREAM_OPTION}={stream}",
                                                "test_measured.py")
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()[-3000:]
    assert log.read_text().splitlines() == ["machine info", "case"]
    document = json.loads(bench_phase.document_path(stream).read_text())
    assert document["machine_info"]["machine"] == "probed"
    assert [b["extra_info"]["case"] for b in document["benchmarks"]] == ["naive-bf16"]


# on the controller: what it had frozen and imported when the bench phase's first report came back
END_PROBE = """
import gc, json, os, pathlib, sys

def pytest_runtest_logreport(report):
    probe = pathlib.Path(os.environ["END_PROBE"])
    if getattr(report, "cute_harness_process", "") == "bench" and not probe.exists():
        names = ("matplotlib.figure", "hypothesis.internal.observability")
        probe.write_text(json.dumps({"frozen": gc.get_freeze_count() > 0, "imported": [n for n in names if n in sys.modules]}))
"""


def test_the_controller_gets_ready_for_its_end_while_the_bench_phase_measures(bench_project, tmp_path, monkeypatch):
    """Once the workers are done, the controller waits on the bench phase: it freezes what it
    holds and imports what its end imports (the plots, Hypothesis's terminal summary) then, not
    after the last measurement."""
    bench_project.makepyfile(test_mixed=BENCH, end_probe=END_PROBE)
    probe = tmp_path / "probe.json"
    monkeypatch.setenv("END_PROBE", str(probe))
    monkeypatch.setenv("PYTEST_ADDOPTS", os.environ["PYTEST_ADDOPTS"] + " -p end_probe")
    result = bench_project.runpytest_subprocess("-n", "2", "--report-dir", str(bench_project.path / "out"), "test_mixed.py")
    assert result.ret == pytest.ExitCode.TESTS_FAILED, result.stdout.str()[-3000:]
    assert json.loads(probe.read_text()) == {"frozen": True, "imported": ["matplotlib.figure", "hypothesis.internal.observability"]}


def test_bench_cases_the_serial_phase_never_reported_fail(bench_project):
    """A serial phase that dies leaves no gap: each case it did not report fails, saying why."""
    bench_project.makepyfile(test_dies=SERIAL_PHASE_DIES)
    out = bench_project.path / "out"
    result = bench_project.runpytest_subprocess("-n", "2", "--report-dir", str(out), "test_dies.py")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    cases = {c["nodeid"].split("::")[1]: c for c in results(out)["cases"]}
    assert {name: c["outcome"] for name, c in cases.items()} == {"test_bench_first": "failed", "test_bench_second": "failed"}
    assert cases["test_bench_second"]["message"].startswith("bench phase: this case was not measured (the serial bench "
                                                            "process exited 1")


def test_a_parallel_run_started_in_a_kernel_authors_folder_measures_its_bench_cases(bench_project, tmp_path):
    """The serial phase starts in the harness's folder: it imports the run's ``--stage-module``
    from the folder the run imported it from (it exited 4 on a module it could not import)."""
    kernels = bench_project.path / "kernels"
    kernels.mkdir()
    (kernels / "my_stages.py").write_text("from fixtures.dsl.kernels import register, vectorized\n\n"
                                          "register('my_vec')(vectorized.vectorized_elementwise_add)\n")
    bench_project.makepyfile(test_bench="import pytest\n\n@pytest.mark.bench\ndef test_bench():\n    pass\n")
    out = tmp_path / "out"
    done = subprocess.run([sys.executable, "-m", "pytest", "-n", "1", "--stage-module", "my_stages", f"--report-dir={out}",
                           "../test_bench.py"], cwd=kernels, env={**os.environ, "PYTHONPATH": str(bench_project.path)},
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == pytest.ExitCode.OK, done.stdout[-3000:]
    assert results(out)["counts"] == {"passed": 1}


# a stage module the controller imports and its xdist workers cannot (on issue 49's H100 run of
# two stage modules under --sanitize, every worker went down at start and the run said NOTHING RAN)
WORKERS_CANNOT_IMPORT = """
import os

if "PYTEST_XDIST_WORKER" in os.environ:
    raise ImportError("not on this worker's path")

from fixtures.dsl.kernels import register, vectorized

register("my_vec")(vectorized.vectorized_elementwise_add)  # the controller's: a module must register a stage
"""


def test_workers_that_cannot_start_are_named_not_taken_for_an_empty_selection(project, monkeypatch):
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)  # this test's own worker's: the module tells workers by it
    project.makepyfile(worker_only_fails=WORKERS_CANNOT_IMPORT, test_one=ONE_CASE)
    out = project.path / "out"
    result = project.runpytest_subprocess("-n", "1", "--max-worker-restart", "1", "--stage-module", "worker_only_fails",
                                          "--report-dir", str(out), "test_one.py")
    assert result.ret == pytest.ExitCode.INTERNAL_ERROR, result.stdout.str()[-3000:]
    data = results(out)
    assert (data["status"], data["exit_status"], data["cases"]) == ("internal error", 3, [])
    result.stdout.fnmatch_lines(["INTERNAL ERROR before any case ran: xdist worker gw0 could not start: UsageError: "
                                 "--stage-module worker_only_fails: ImportError: not on this worker's path "
                                 "(worker_only_fails.py:4) · ran: nothing *"])
    assert "NOTHING RAN" not in result.stdout.str()


BENCHMARKED = """
import pytest

@pytest.mark.bench
def test_measures(benchmark):
    assert not benchmark.disabled
    benchmark(lambda: None)
"""


def test_a_parallel_run_never_prints_pytest_benchmarks_xdist_warning_and_still_measures(bench_project, monkeypatch):
    """Every ``-n`` run opened with "Benchmarks are automatically disabled because xdist plugin is
    active": the parallel part never measures, its serial bench phase does."""
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)  # this test's own worker's: pytest-benchmark reads it
    bench_project.makepyfile(test_benchmarked=BENCHMARKED)
    out = bench_project.path / "out"
    result = bench_project.runpytest_subprocess("-n", "1", "--report-dir", str(out), "test_benchmarked.py")
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()[-3000:]
    assert "automatically disabled" not in result.stdout.str() + result.stderr.str()
    assert results(out)["counts"] == {"passed": 1}


def test_without_a_gpu_a_parallel_runs_bench_cases_skip_for_that_reason(project):
    """No GPU: the serial phase skips them as a worker would, and the verdict says bandwidth was not measured."""
    project.makepyfile(test_mixed=BENCH)
    out = project.path / "out"
    result = project.runpytest_subprocess("-n", "2", "--report-dir", str(out), "test_mixed.py")
    assert result.ret == pytest.ExitCode.OK
    data = results(out)
    assert data["counts"] == {"passed": 1, "skipped": 2}
    verdict = (out / "summary.md").read_text().splitlines()[2]
    assert "not run: bench (2 skipped: no CUDA device" in verdict
    assert "bandwidth: not measured" in verdict


def test_the_serial_phase_saves_a_baseline_without_losing_a_case(bench_project):
    """``--bandwidth-save`` takes an optional path: passed on bare, it would swallow the first
    case id (seen on an H100: the copy ceiling went unmeasured and the baseline was written
    to a file named after it)."""
    bench_project.makepyfile(test_mixed=BENCH)
    out = bench_project.path / "out"
    result = bench_project.runpytest_subprocess("-n", "2", "--bandwidth-save", "--report-dir", str(out), "test_mixed.py")
    outcomes = {c["nodeid"].split("::")[1]: c["outcome"] for c in results(out)["cases"]}
    assert outcomes == {"test_host": "passed", "test_bench_measures": "passed", "test_bench_regressed": "failed"}
    result.stdout.fnmatch_lines(["baseline not saved: 1 bench cases failed (*reports/baselines/*.json unchanged)"])


class _FullDisk:
    """A file on a full disk: a write stores part of its bytes, then fails as the disk fills."""

    def __init__(self, file):
        self.file = file

    def write(self, data):
        self.file.write(data[: len(data) // 2])
        self.file.flush()
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    def __getattr__(self, name):
        return getattr(self.file, name)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.file.close()


@pytest.fixture
def full_disk(monkeypatch):
    """``full_disk(folder, whole)``: the disk under ``folder`` fills after ``whole`` files were
    written there (through ``os.fdopen``, as the report writer writes)."""
    real = os.fdopen

    def fill(folder, whole):
        written = []

        def fdopen(fd, *args, **kwargs):
            file = real(fd, *args, **kwargs)
            if not os.readlink(f"/proc/self/fd/{fd}").startswith(f"{folder}/"):
                return file
            written.append(fd)
            return file if len(written) <= whole else _FullDisk(file)

        monkeypatch.setattr(os, "fdopen", fdopen)

    return fill


@pytest.mark.parametrize(("whole", "unwritten"), [(0, "results.json"), (1, "junit.xml")])
def test_a_full_disk_still_ends_with_the_verdict_exit_3_and_no_torn_file(project, full_disk, whole, unwritten):
    """A 64 KiB report folder once ended a run with a 71-line traceback, exit 1 (the install's
    fault, by the README's table), no verdict and a half-written junit.xml."""
    project.makepyfile(test_one="import pytest\n\n@pytest.mark.host\ndef test_one():\n    pass\n")
    out = project.path / "out"
    full_disk(out, whole)
    result = project.runpytest_inprocess("--report-dir", str(out), "test_one.py")
    assert result.ret == pytest.ExitCode.INTERNAL_ERROR
    output = result.stdout.str() + result.stderr.str()
    assert "Traceback" not in output and "INTERNALERROR" not in output
    result.stdout.fnmatch_lines([f"REPORT NOT WRITTEN: {out / unwritten}: No space left on device · PASSED: 1 cases ran · *",
                                 f"reports: {out} (incomplete)"])
    assert sorted(p.name for p in out.iterdir()) == ["results.json"][:whole]
    if whole:
        assert results(out)["cases"][0]["outcome"] == "passed"
    assert not (project.path / ".out.claim").exists()


def test_a_process_knows_when_it_began():
    """The timeline's controller start-up: this process's start from /proc, before now and after
    a child started later."""
    from fixtures.plugin.collector import process_started

    mine = process_started()
    assert mine is not None and mine < time.time()
    child = subprocess.run([sys.executable, "-c", "from fixtures.plugin.collector import process_started; print(process_started())"],
                           capture_output=True, text=True, check=True, cwd=os.path.dirname(os.path.dirname(__file__)))
    started = float(child.stdout)
    assert mine < started <= time.time() and time.time() - started < 60


LEAVES_ITS_PID = """
import os
import pathlib

import pytest

@pytest.mark.host
@pytest.mark.parametrize("n", range(4))
def test_leaves_its_pid(n):
    pathlib.Path(os.environ["PIDS"], f"{os.getpid()}.pid").write_text(str(os.getpid()))
"""

# in the controller, before xdist tears its workers down: whether each worker's process has ended
WATCHES_THE_WORKERS = """
import json
import os
import pathlib
import time

import pytest


def ended(pid):
    try:
        state = pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(") ", 1)[1][0]
    except FileNotFoundError:
        return True
    return state in "ZX"  # a zombie: exited, not yet reaped by the controller


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session):
    if hasattr(session.config, "workerinput"):
        return
    folder = pathlib.Path(os.environ["PIDS"])
    pids = [int(p.read_text()) for p in folder.glob("*.pid")]
    deadline = time.monotonic() + 30
    while not all(ended(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    (folder / "ended.json").write_text(json.dumps({pid: ended(pid) for pid in pids}))
"""


def test_a_worker_exits_once_its_session_is_done_not_when_the_controller_ends(project, tmp_path, monkeypatch):
    """Each worker's process ends as soon as its output is with the controller, before the
    controller's own end tears the workers down (their teardowns were seconds of the gate's end,
    after the bench phase); the run's report and status are whole, and nothing says a worker fell."""
    project.makepyfile(test_pids=LEAVES_ITS_PID, watches=WATCHES_THE_WORKERS)
    monkeypatch.setenv("PIDS", str(tmp_path))
    out = project.path / "out"
    result = project.runpytest_subprocess("-n", "2", "-p", "watches", "--report-dir", str(out), "test_pids.py")
    assert result.ret == pytest.ExitCode.OK
    ended = json.loads((tmp_path / "ended.json").read_text())
    assert len(ended) == 2 and all(ended.values()), ended
    assert results(out)["counts"] == {"passed": 4}
    assert "node down" not in result.stdout.str() + result.stderr.str()


def test_a_process_freezes_what_it_collected_and_collects_what_its_cases_make(project):
    """Full collections during the run then pass over torch, the DSL and the items; garbage a
    case makes is still collected."""
    project.makepyfile(test_frozen="""
import gc

import pytest

class Cycle:
    def __init__(self):
        self.me = self

@pytest.mark.host
def test_frozen():
    assert gc.get_freeze_count() > 0
    Cycle()
    assert gc.collect() > 0
""")
    result = project.runpytest_subprocess("-p", "no:xdist", "test_frozen.py")
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()


def test_the_controller_freezes_its_objects_before_pytests_closing_collections():
    """It runs no case: pytest's five closing collections (for unraisable exceptions) and the
    interpreter's teardown then pass over none of its objects."""
    import gc

    from fixtures.plugin import interpreter

    gc.unfreeze()  # this process froze what it collected (interpreter.FreezeCollected)
    try:
        assert gc.get_freeze_count() == 0
        interpreter.ControllerEnd().pytest_unconfigure()
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()
