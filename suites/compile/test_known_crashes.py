"""Known DSL crashes: one canary per limitation that kills the compiler, compiled in a subprocess
that must die by a signal (``fixtures.plugin.canary`` says why)."""

import pytest

from fixtures.plugin import canary

pytestmark = pytest.mark.compile


@pytest.mark.timeout(canary.TIMEOUT_S + 30)
@pytest.mark.parametrize(("case", "limitation"), canary.params("compile", ("crash",), "no known compiler crash in this release"))
def test_known_crash_still_crashes(case, limitation):
    proc = canary.run_alone("compile_one", "compile", case)
    tail = (proc.stdout + proc.stderr)[-1500:]
    assert proc.returncode != 0, f"{case.id} compiled: this release no longer has '{limitation.reason}'; narrow its releases"
    assert proc.returncode < 0, f"{case.id} failed without crashing (exit {proc.returncode}), not as '{limitation.reason}':\n{tail}"
