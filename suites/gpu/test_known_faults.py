"""Known kernel faults and launch crashes: one canary per limitation whose launches fault or kill
the process, run in a subprocess that must fail that way (``fixtures.plugin.canary`` says why)."""

import pytest

from fixtures.plugin import canary

pytestmark = pytest.mark.gpu

# what CUDA (or, for a write outside the tensors that did not fault, the harness) says, per Limitation.fails_as
# of the canary below (its marker spells them: declared marks are read from the source)
FAULT_TEXT = {
    "misaligned_address": ("misaligned address",),
    "wild_write": ("illegal memory access", "out-of-bounds write", "was modified by the kernel"),
}


@pytest.mark.slow
@pytest.mark.timeout(canary.TIMEOUT_S + 30)
@pytest.mark.canary("gpu", "misaligned_address", "wild_write", empty="no known kernel fault in this release")
def test_known_fault_still_faults(case, limitation):
    proc = canary.run_alone("run_one", "gpu", case)
    output = proc.stdout + proc.stderr
    assert proc.returncode != 0, f"{case.id} conforms: this release no longer has '{limitation.reason}'; narrow its releases"
    expected = FAULT_TEXT[limitation.fails_as]
    assert any(text in output for text in expected), f"{case.id} failed, but not with any of {expected}:\n{output[-1500:]}"


@pytest.mark.slow
@pytest.mark.timeout(canary.TIMEOUT_S + 30)
@pytest.mark.canary("gpu", "launch_crash", empty="no known crash at launch in this release")
def test_known_launch_crash_still_crashes(case, limitation):
    canary.assert_killed(canary.run_alone("run_one", "gpu", case), case, limitation)
