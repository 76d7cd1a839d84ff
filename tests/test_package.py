"""The harness as a package: its plugin is loaded by one name, ``fixtures.plugin.hooks``, whether
the root ``conftest.py`` names it (the checkout), the ``pytest11`` entry point does (installed),
both do (installed, run in the checkout), or ``-p`` does (a run outside the checkout)."""

import ast
import json
import os
import subprocess
import sys
import tomllib

import pytest

from tests.conftest import ROOT

pytestmark = pytest.mark.harness

PLUGIN = "fixtures.plugin.hooks"


def test_the_entry_point_is_named_as_the_module_the_conftest_loads():
    """pytest registers an entry point's plugin under the entry point's name and skips a
    ``pytest_plugins`` module already registered under its module name: the two names must be
    one, or an installed harness run in its checkout stops at "Plugin already registered"."""
    entry_points = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["entry-points"]["pytest11"]
    assert entry_points == {PLUGIN: PLUGIN}
    (assign,) = ast.parse((ROOT / "conftest.py").read_text()).body
    assert PLUGIN in ast.literal_eval(assign.value)
    assert f'"-p", "{PLUGIN}"' in (ROOT / "fixtures" / "plugin" / "bench_phase.py").read_text()  # the serial bench phase's


@pytest.mark.parametrize("conftest", [False, True], ids=["p-option", "p-option-and-conftest"])
def test_a_run_outside_the_checkout_loads_the_plugin_by_its_name(tmp_path, conftest):
    """From a folder of its own, the package on ``PYTHONPATH`` and ``-p fixtures.plugin.hooks``
    (the entry point's name): a full run with its report; with a ``conftest.py`` naming the plugin
    too (as the checkout's does, where the entry point has loaded it), loaded once."""
    (tmp_path / "test_one.py").write_text("import pytest\n\n\n@pytest.mark.host\ndef test_one():\n    pass\n")
    if conftest:
        (tmp_path / "conftest.py").write_text((ROOT / "conftest.py").read_text())
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", PLUGIN, "--strict-markers", "-p", "no:randomly",
                           "--report-dir=report", "test_one.py"], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    run = json.loads((tmp_path / "report" / "results.json").read_text())
    assert [(c["nodeid"], c["outcome"], c["tier"]) for c in run["cases"]] == [("test_one.py::test_one", "passed", "host")]
