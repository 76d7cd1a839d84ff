"""Issue 49's ``suites/gpu -m sanitize --sanitize=memcheck --require-gpu -n 4 --stage-module A
--stage-module B -k ...`` (two registered read-defect stages; ``-n 2`` here), on the CPU with
the GPU stubbed at its boundary and compute-sanitizer replaced by a script that runs the
harness's child up to its launch: each worker collects both modules' sanitizer cases, each case
runs, and each child is handed both modules and imports them from where the run did (the run's
folder, not the harness's, which is the child's working folder)."""

import importlib
import json
import os
import stat
import subprocess
import sys

import pytest

from fixtures.cases import matrix
from fixtures.cases.stages import with_registered
from fixtures.dsl.kernels import registered_in
from tests.conftest import ROOT

pytestmark = pytest.mark.harness

STAGE_MODULES = {
    "tail_reads": "from fixtures.dsl.kernels import register\nfrom suites.gpu._planted_reads import tail_overread\n\n"
                  "register('tail_reader')(tail_overread)\n",
    "head_reads": "from fixtures.dsl.kernels import register\nfrom suites.gpu._planted_reads import head_underread\n\n"
                  "register('head_reader')(head_underread)\n",
}

# the GPU as the harness sees it, stubbed at its one boundary
FAKE_GPU = "from fixtures.dsl import device\n\ndevice.gpu_unavailable = lambda: None\n"

# compute-sanitizer's stand-in: the child it is handed (``python -m fixtures.dsl.sanitize_one
# IDS... --stage-module M...``) run in its process as ``-m`` would, cwd first on its path, with
# the extents and the launch replaced by a line naming each case it resolved; nothing found
FAKE_TOOL = """#!{python}
import os
import sys

TOOL_ARGS = 9  # the script, then --tool T --report-api-errors no --print-limit N --error-exitcode E
python, flag, module, *child = sys.argv[TOOL_ARGS:]
assert (flag, module) == ("-m", "fixtures.dsl.sanitize_one"), sys.argv
sys.path[0] = os.getcwd()
from fixtures.dsl import sanitize_one

sanitize_one.Extents = lambda tool: None
with open(os.environ["FAKE_SANITIZER_LOG"], "a") as log:
    sanitize_one.run = lambda case, extents, compiler: log.write(case.id + " " + " ".join(child) + "\\n")
    sanitize_one.main(child)
print("========= ERROR SUMMARY: 0 errors")
"""


@pytest.fixture
def kernels(project, tmp_path):
    """A kernel author's folder in the project, holding both stage modules: the run starts there
    (its folder is on the run's import path, not on PYTHONPATH), the GPU stubbed, the tool's
    stand-in first on PATH. Returns the folder and the run's environment."""
    folder = project.path / "kernels"
    folder.mkdir()
    for name, text in STAGE_MODULES.items():
        (folder / f"{name}.py").write_text(text)
    project.makepyfile(fake_gpu=FAKE_GPU)
    (project.path / "suites").symlink_to(ROOT / "suites", target_is_directory=True)
    tool = tmp_path / "bin" / "compute-sanitizer"
    tool.parent.mkdir()
    tool.write_text(FAKE_TOOL.format(python=sys.executable))
    tool.chmod(tool.stat().st_mode | stat.S_IEXEC)
    env = {**os.environ, "PATH": f"{tool.parent}:/usr/bin:/bin", "PYTHONPATH": str(project.path),
           "PYTEST_ADDOPTS": "-p fake_gpu --arch sm_90a", "FAKE_SANITIZER_LOG": str(tmp_path / "children.log")}
    return folder, env


def sanitizer_cases(*modules: str) -> list[str]:
    """The sanitizer sample's ids of the registered stages ``modules`` hold, as the run names them."""
    registered = [s for m in modules for s in registered_in(importlib.import_module(m))]
    return [f"memcheck-{c.id}" for c in matrix.sanitize_cases(with_registered(registered)) if c.stage in registered]


def test_two_stage_modules_each_run_their_sanitizer_cases_in_a_child_that_imports_both(kernels, tmp_path, monkeypatch):
    folder, env = kernels
    monkeypatch.syspath_prepend(str(folder))
    expected = sanitizer_cases("tail_reads", "head_reads")
    assert {i.split("-")[1] for i in expected} == {"tail_reader", "head_reader"}
    # one case a stage: each child starts torch and the DSL (the selection's size is not what is tested)
    chosen = [i for i in expected if i.endswith("-97x101")]
    out = tmp_path / "out"
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "../suites/gpu", "-m", "sanitize", "--sanitize=memcheck", "--require-gpu",
         "-n", "2", "-p", "no:randomly", "--stage-module", "tail_reads", "--stage-module", "head_reads",
         "-k", "reader and 97x101", f"--report-dir={out}"],
        cwd=folder, env=env, capture_output=True, text=True, timeout=600,
    )
    assert done.returncode == pytest.ExitCode.OK, done.stdout[-3000:] + done.stderr[-2000:]
    cases = json.loads((out / "results.json").read_text())["cases"]
    assert sorted(c["nodeid"].partition("[")[2].rstrip("]") for c in cases if c["outcome"] == "passed") == sorted(chosen)
    children = (tmp_path / "children.log").read_text().splitlines()
    assert sorted(line.split()[0] for line in children) == sorted(i.removeprefix("memcheck-") for i in chosen)
    assert all(line.endswith("--stage-module tail_reads --stage-module head_reads") for line in children), children


def test_a_child_is_handed_the_folder_each_stage_module_came_from(tmp_path, monkeypatch):
    from fixtures.plugin.startup import stage_module_env

    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "my_reads.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path / "mine"))
    importlib.import_module("my_reads")
    env = stage_module_env(["my_reads"], {"PYTHONPATH": "/elsewhere", "HOME": "/root"})
    assert env == {"PYTHONPATH": f"{tmp_path / 'mine'}:/elsewhere", "HOME": "/root"}
    assert stage_module_env([], {"HOME": "/root"}) == {"HOME": "/root"}
