"""Known DSL crashes: one canary per limitation that kills the compiler, compiled in a subprocess
that must die by a signal (``fixtures.plugin.canary`` says why)."""

import pytest

from fixtures.plugin import canary

pytestmark = pytest.mark.compile


@pytest.mark.timeout(canary.TIMEOUT_S + 30)
@pytest.mark.canary("compile", "crash", empty="no known compiler crash in this release")
def test_known_crash_still_crashes(case, limitation):
    canary.assert_killed(canary.run_alone("compile_one", "compile", case), case, limitation)
