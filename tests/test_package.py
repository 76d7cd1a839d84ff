"""The harness as a package: installed, it claims one import name, ``cute_dsl_harness``, and
registers no pytest plugin; its plugin is loaded by one name, ``fixtures.plugin.hooks``, whether
the root ``conftest.py`` names it (the checkout), ``-p cute_dsl_harness`` does (a run outside the
checkout, the install's opt-in), or ``-p fixtures.plugin.hooks`` does (the checkout on ``PYTHONPATH``)."""

import ast
import fnmatch
import json
import os
import re
import subprocess
import sys
import tomllib

import pytest

from tests.conftest import ROOT

pytestmark = pytest.mark.harness

PLUGIN = "fixtures.plugin.hooks"


def test_the_install_claims_one_import_name_and_no_plugin():
    """What ``pip install`` puts on ``sys.path`` is ``cute_dsl_harness`` alone (``fixtures`` and
    ``reports`` are names other projects use), and no ``pytest11`` entry point loads the harness
    into another project's runs; every way in loads the plugin by one module name (loaded once)."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "entry-points" not in project["project"] and "scripts" not in project["project"]
    assert project["tool"]["setuptools"] == {"py-modules": ["cute_dsl_harness"], "packages": []}
    (assign,) = ast.parse((ROOT / "conftest.py").read_text()).body
    assert PLUGIN in ast.literal_eval(assign.value)
    opt_in = {node.targets[0].id: node.value for node in ast.parse((ROOT / "cute_dsl_harness.py").read_text()).body
              if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name)}
    assert ast.literal_eval(opt_in["pytest_plugins"]) == [PLUGIN]
    assert f'"-p", "{PLUGIN}"' in (ROOT / "fixtures" / "plugin" / "bench_phase.py").read_text()  # the serial bench phase's


def test_its_dependencies_are_declared_where_pip_reads_them():
    """``requirements.txt`` installs the harness editable and tox; what the harness needs is
    ``pyproject.toml``'s, which the run's install check reads too."""
    lines = [line.split("#", 1)[0].strip() for line in (ROOT / "requirements.txt").read_text().splitlines()]
    assert [line for line in lines if line] == ["-e .", "-r requirements-tox.txt"]
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    assert {d.split(">")[0].split("=")[0] for d in declared} >= {"nvidia-cutlass-dsl", "torch", "pytest", "pytest-xdist"}


@pytest.mark.parametrize("plugin,conftest", [("cute_dsl_harness", False), ("cute_dsl_harness", True), (PLUGIN, False)],
                         ids=["opt-in", "opt-in-and-conftest", "p-option"])
def test_a_run_outside_the_checkout_loads_the_plugin_by_its_name(tmp_path, plugin, conftest):
    """From a folder of its own: ``-p cute_dsl_harness`` (the installed opt-in: a link to the
    checkout's module, as the editable install maps it) or ``-p fixtures.plugin.hooks`` with the
    checkout on ``PYTHONPATH``: a full run with its report; with a ``conftest.py`` naming the
    plugin too (as the checkout's does), loaded once."""
    (tmp_path / "test_one.py").write_text("import pytest\n\n\n@pytest.mark.host\ndef test_one():\n    pass\n")
    if conftest:
        (tmp_path / "conftest.py").write_text((ROOT / "conftest.py").read_text())
    site = tmp_path / "site"
    site.mkdir()
    (site / "cute_dsl_harness.py").symlink_to(ROOT / "cute_dsl_harness.py")
    path = str(site) if plugin == "cute_dsl_harness" else str(ROOT)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([path, *[p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep)
                                                               if p and p != str(ROOT)]])}
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", plugin, "--strict-markers", "-p", "no:randomly",
                           "--report-dir=report", "test_one.py"], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    run = json.loads((tmp_path / "report" / "results.json").read_text())
    assert [(c["nodeid"], c["outcome"], c["tier"]) for c in run["cases"]] == [("test_one.py::test_one", "passed", "host")]


def test_the_readme_is_a_newcomers_page_whose_layout_names_every_top_level_entry():
    """At most 200 lines (figures and their history live in docs/), and its layout section names
    each file and folder the checkout tracks at its top."""
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 200
    layout = readme.split("## Layout", 1)[1]
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    top = {name.split("/")[0] for name in tracked} - {".gitignore", "README.md"}
    named = re.findall(r"`([^`]+)`", layout)  # a folder as `suites/` or by a file in it (`.ci/run`); files by glob too
    assert [name for name in sorted(top) if not any(fnmatch.fnmatch(name, token) or token.startswith(f"{name}/")
                                                    for token in named)] == []
