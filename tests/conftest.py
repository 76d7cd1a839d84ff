"""What the harness's own tests share: a throwaway copy of the project to run the plugin in, a
synthetic stage, a user's add kernel, and a reproducer run alone."""

import json
import os
import subprocess
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

import pytest

from fixtures.cases.stages import BUILT_IN_STAGES

ROOT = Path(__file__).resolve().parents[1]
FAKE_NVML = Path(__file__).parent / "data" / "fake_pynvml.py"  # a stand-in pynvml: the GPUs it lists are FAKE_NVML_GPUS

# a stage whose threads each hold 4 rows of one 16-byte vector (the tuned stage's shape before it
# went to one row): its column-major run, 4 elements, is shorter than a vector for most types
# a user's module's start, as a kernel author writes one: a flat-indexed add kernel (the stage
# modules the tests write append their host functions and registrations)
ADD_KERNEL = '''
import cuda.bindings.driver as cuda
import cutlass.cute as cute


@cute.kernel
def _add_kernel(gA: cute.Tensor, gB: cute.Tensor, gC: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    bidx, _, _ = cute.arch.block_idx()
    i = bidx * 256 + tidx
    m, n = gC.shape
    if i < m * n:
        gC[i // n, i % n] = gA[i // n, i % n] + gB[i // n, i % n]
'''


def carried_kernel_alone(folder: Path, script: str, show: str) -> list[str]:
    """A reproducer ``script`` run alone from ``folder`` (outside the repo, an empty environment:
    nothing of the harness), its carried kernel as ``kernel``: what ``show`` (an expression of
    ``kernel``) prints, split into words."""
    (folder / "script.py").write_text(script)
    probe = ("import sys, tempfile\n"
             "sys.path.insert(0, '.')\n"
             "import script\n"
             "kernel = script.carried_kernel(script.SPEC, script.SOURCES, tempfile.mkdtemp())\n"
             f"print({show})\n")
    done = subprocess.run([sys.executable, "-I", "-c", probe], cwd=folder, env={"PATH": "/usr/bin:/bin"},
                          capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.split()


FOUR_ROWS = replace(BUILT_IN_STAGES["tuned"], name="four_rows", tile=lambda d: (4, 2048),
                    values_per_thread=lambda d: 4 * d.vector, rows_per_thread=4)


@pytest.fixture
def project(pytester, monkeypatch):
    """The project's plugin and config (``conftest.py``, ``tox.ini``, ``requirements.txt``; ``fixtures/`` and
    ``reports/`` linked) in a fresh folder, for end-to-end runs: in this process
    (``runpytest_inprocess``) unless what is tested needs a process of its own (xdist, signals,
    what a process imported), since each process pays 3-6 s for torch and the DSL. Temporary
    folders of those runs go to ``tmp/`` in it, so a test can see what a run leaves behind."""
    for name in ("conftest.py", "tox.ini", "requirements.txt"):
        (pytester.path / name).write_bytes((ROOT / name).read_bytes())
    for name in ("fixtures", "reports"):
        (pytester.path / name).symlink_to(ROOT / name, target_is_directory=True)
    (pytester.path / "tmp").mkdir()
    monkeypatch.setenv("TMPDIR", str(pytester.path / "tmp"))
    monkeypatch.setattr(tempfile, "tempdir", str(pytester.path / "tmp"))  # for runs in this process
    environ = dict(os.environ)  # a run in this process sets the DSL's variables (fixtures.dsl.settings)
    yield pytester
    os.environ.clear()
    os.environ.update(environ)


def call_reports(project, *args: str) -> tuple[pytest.RunResult, dict[str, pytest.TestReport]]:
    """The project's run with ``args`` in this process, and its call phases' reports by test name."""
    reports = []

    class Keep:
        def pytest_runtest_logreport(self, report):
            if report.when == "call":
                reports.append(report)

    result = project.runpytest_inprocess(*args, plugins=[Keep()])
    return result, {r.nodeid.split("::")[-1]: r for r in reports}


@pytest.fixture
def fake_gpus(project, monkeypatch):
    """``fake_gpus([model, ...])``: the project's runs see these GPUs through the stand-in NVML
    (none through ``CUDA_VISIBLE_DEVICES``): what GPU selection and health are judged by."""
    (project.path / "pynvml.py").write_bytes(FAKE_NVML.read_bytes())
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    return lambda models: monkeypatch.setenv("FAKE_NVML_GPUS", json.dumps(models))


@pytest.fixture
def usage_error(project):
    """Run the plugin with some arguments; the run must stop at start with exit 4 and exactly
    one line on stderr, which is returned. In this process; ``own_process=True`` where what the
    process imported is the point."""

    def run(*args: str, own_process: bool = False) -> str:
        result = project.runpytest_subprocess(*args) if own_process else project.runpytest_inprocess(*args)
        assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str()[-2000:]
        (line,) = [line for line in result.errlines if line.strip()]
        return line

    return run
