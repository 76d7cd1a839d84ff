"""Installed as the README says, the harness is a guest: another project's pytest run in the same
environment imports, prints, writes and changes nothing, and uninstalling the harness removes only
its own files.

Two throwaway environments hold this one's packages (torch, the DSL, pytest and its plugins) as
links, so a harness that loaded itself could import all of them; one of the two has the
harness installed editable (``pip install -e``, the line ``requirements.txt`` holds). An unrelated
project runs in each, interleaved: its own ``reports.py``, a ``tests/fixtures/`` package, a ``gpu``
marker, a ``--gpus`` option, and a second project whose tests all skip."""

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from tests.conftest import ROOT

pytestmark = pytest.mark.harness

# the import names a loaded harness would bring (its own, and what it imports at start)
WATCHED = ("cute_dsl_harness", "fixtures", "reports", "torch", "cutlass", "numpy", "tvm_ffi")

OTHER_PROJECT = {
    "reports.py": "MINE = True\n",
    "tests/fixtures/__init__.py": "",
    "tests/fixtures/data.py": "VALUE = 42\n",
    "pytest.ini": "[pytest]\nmarkers =\n    gpu: this project's own GPU tests\naddopts = --strict-markers\n",
    "conftest.py": (
        "import json, os, sys\n\n\n"
        "def pytest_addoption(parser):\n"
        "    parser.addoption('--gpus', default='all')\n\n\n"
        "def pytest_unconfigure(config):\n"
        f"    watched = {WATCHED!r}\n"
        "    loaded = sorted(m for m in sys.modules if m.split('.')[0] in watched)\n"
        "    with open(os.environ['GUEST_PROBE'], 'w') as probe:\n"
        "        json.dump({'modules': loaded, 'plugins': sorted(name for name, _ in config.pluginmanager.list_name_plugin()\n"
        "                                                         if not name.isdigit()),\n"
        "                   'top_modules': sorted({m.split('.')[0] for m in sys.modules})}, probe)\n"),
    "tests/test_other.py": (
        "import pytest\nimport reports\nfrom fixtures.data import VALUE\n\n\n"
        "def test_its_own_reports():\n    assert reports.MINE\n\n\n"
        "def test_its_own_fixtures_package():\n    assert VALUE == 42\n\n\n"
        "@pytest.mark.gpu\ndef test_its_own_gpu_marker():\n    pass\n\n\n"
        "def test_its_own_gpus_option(request):\n    assert request.config.getoption('--gpus') == 'all'\n"),
}
ALL_SKIPPED_PROJECT = {
    "tests/test_quiet.py": "import pytest\n\n\n@pytest.mark.skip(reason='not here')\ndef test_a():\n    pass\n\n\n"
                           "@pytest.mark.skip(reason='not here')\ndef test_b():\n    pass\n",
}
# another distribution whose import names the harness's folders share
NAMESAKE_PACKAGE = {
    "pyproject.toml": ('[build-system]\nrequires = ["setuptools>=64"]\nbuild-backend = "setuptools.build_meta"\n'
                       '[project]\nname = "namesake"\nversion = "1.0"\n'
                       '[tool.setuptools]\npackages = ["reports", "fixtures"]\n'),
    "reports/__init__.py": "OWNER = 'namesake'\n",
    "fixtures/__init__.py": "OWNER = 'namesake'\n",
}


def write_tree(folder: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    return folder


def purelib(python: Path) -> Path:
    return Path(subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               check=True, capture_output=True, text=True).stdout.strip())


def environment(folder: Path) -> Path:
    """A new virtual environment (its own pip and setuptools) holding links to this one's packages,
    the harness's own install and every ``.pth`` hook left out: its python."""
    subprocess.run([sys.executable, "-m", "venv", str(folder)], check=True, capture_output=True)
    python = folder / "bin" / "python"
    site = purelib(python)
    own = {p.name.split("-")[0] for p in site.iterdir()}
    for entry in Path(sysconfig.get_paths()["purelib"]).iterdir():
        if not (entry.suffix == ".pth" or entry.name.split("-")[0] in own
                or entry.name.startswith(("cute_dsl_harness", "__editable__", "__pycache__"))):
            (site / entry.name).symlink_to(entry)
    return python


def pip(python: Path, *args: str) -> None:
    done = subprocess.run([python, "-m", "pip", "--disable-pip-version-check", "--no-input", *args],
                          capture_output=True, text=True)
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]


def run_pytest(python: Path, project: Path, probe: Path, *args: str) -> dict:
    """One ``python -m pytest`` run of ``project``: its status, output (timings and paths made
    neutral), files, loaded modules (the watched ones, and every top-level name) and plugins."""
    for cache in [project / ".pytest_cache", *project.rglob("__pycache__")]:
        shutil.rmtree(cache, ignore_errors=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST", "PYTHONPATH", "CUTE_DSL_"))}
    done = subprocess.run([python, "-m", "pytest", "-p", "no:randomly", *args], cwd=project, capture_output=True,
                          text=True, env={**env, "GUEST_PROBE": str(probe)}, timeout=300)
    output = re.sub(r"\d+\.\d+s", "Ts", (done.stdout + done.stderr).replace(str(project), "PROJECT"))
    files = sorted(str(p.relative_to(project)) for p in project.rglob("*")
                   if "__pycache__" not in p.parts and ".pytest_cache" not in p.parts)
    return {"status": done.returncode, "output": output, "files": files, **json.loads(probe.read_text())}


def differences(without: dict, with_harness: dict) -> list[str]:
    return [f"{key}: {without[key]!r} -> {with_harness[key]!r}"
            for key in ("status", "output", "files", "modules", "plugins") if without[key] != with_harness[key]]


def file_hashes(root: Path, names: list[str]) -> dict[str, str]:
    return {name: hashlib.sha256((root / name).read_bytes()).hexdigest() for name in names if (root / name).is_file()}


def compare_projects(tmp_path: Path, harness: Path) -> tuple[dict, set, Path]:
    """Each project run in an environment without the harness and in one with ``harness`` installed
    editable: (differences per project, the top-level modules only the hosted runs loaded, the
    hosting environment's python)."""
    bare = environment(tmp_path / "bare")
    hosted = environment(tmp_path / "hosted")
    pip(hosted, "install", "--no-deps", "-e", str(harness))
    projects = {"other": write_tree(tmp_path / "other", OTHER_PROJECT),
                "all-skipped": write_tree(tmp_path / "quiet", ALL_SKIPPED_PROJECT)}
    (tmp_path / "quiet" / "conftest.py").write_text(OTHER_PROJECT["conftest.py"].replace("    parser.addoption('--gpus', default='all')\n", "    pass\n"))
    found, only_hosted = {}, set()
    for name, project in projects.items():
        without, with_harness = (run_pytest(python, project, tmp_path / "probe.json", "-q") for python in (bare, hosted))
        found[name] = differences(without, with_harness)
        only_hosted |= set(with_harness["top_modules"]) ^ set(without["top_modules"])
    return found, only_hosted, hosted


def test_another_projects_run_is_the_same_with_the_harness_installed(tmp_path):
    found, only_hosted, hosted = compare_projects(tmp_path, ROOT)
    assert found == {"other": [], "all-skipped": []}
    # nothing of the harness runs: the one module more is the editable install's finder, which its .pth loads
    assert len(only_hosted) == 1 and next(iter(only_hosted)).startswith("__editable__"), only_hosted

    # uninstalling it, over another distribution that owns packages named as its folders, leaves those whole
    namesake = write_tree(tmp_path / "namesake", NAMESAKE_PACKAGE)
    pip(hosted, "install", "--no-deps", str(namesake))
    site = purelib(hosted)
    owned = ["reports/__init__.py", "fixtures/__init__.py"]
    before = file_hashes(site, owned)
    assert len(before) == 2
    for install in (["-e", str(ROOT)], [str(ROOT)]):  # editable, as requirements.txt does, and from a wheel
        pip(hosted, "install", "--no-deps", "--force-reinstall", *install)
        assert file_hashes(site, owned) == before
        pip(hosted, "uninstall", "--yes", "cute-dsl-harness")
        assert file_hashes(site, owned) == before
    shutil.rmtree(ROOT / "build", ignore_errors=True)  # the wheel's build folder (ignored by git)


def test_a_harness_that_registers_itself_is_caught(tmp_path):
    """The planted defect: the harness as it was, a ``pytest11`` entry point and its folders
    installed as packages: the other project's run differs (it cannot even load its plugins)."""
    planted = tmp_path / "planted"
    shutil.copytree(ROOT, planted, ignore=shutil.ignore_patterns(".git", ".tox", "runs", "build", "*.egg-info",
                                                                 "__pycache__", "suites", "tests", "docs"))
    pyproject = (planted / "pyproject.toml").read_text()
    pyproject = pyproject.replace('py-modules = ["cute_dsl_harness"]\npackages = []\n',
                                  'packages = ["fixtures", "fixtures.plugin", "reports"]\n')
    (planted / "pyproject.toml").write_text(pyproject + '[project.entry-points.pytest11]\n'
                                            '"fixtures.plugin.hooks" = "fixtures.plugin.hooks"\n')
    found, _, _ = compare_projects(tmp_path, planted)
    assert found["other"] and found["all-skipped"], found


def test_a_harness_that_imports_at_start_is_caught(tmp_path, monkeypatch):
    """The planted defect: the install adds a ``.pth`` that imports a module at every start, which
    changes no output, file or plugin of the other project's run: only the modules tell."""
    def install_with_a_hook(python: Path, *args: str) -> None:
        pip_as_is(python, *args)
        (purelib(python) / "zz_planted.pth").write_text("import colorsys\n")

    pip_as_is = pip
    monkeypatch.setitem(globals(), "pip", install_with_a_hook)
    found, only_hosted, _ = compare_projects(tmp_path, ROOT)
    assert found == {"other": [], "all-skipped": []} and "colorsys" in only_hosted, (found, only_hosted)
