"""Known kernel faults: one canary per limitation whose kernels fault, run in a subprocess that
must fail with that fault (``fixtures.plugin.canary`` says why)."""

import pytest

from fixtures.plugin import canary

pytestmark = pytest.mark.gpu

# what CUDA (or, for a write outside the tensors that did not fault, the harness) says, per Limitation.fails_as
FAULT_TEXT = {
    "misaligned_address": ("misaligned address",),
    "wild_write": ("illegal memory access", "out-of-bounds write", "was modified by the kernel"),
}


@pytest.mark.timeout(canary.TIMEOUT_S + 30)
@pytest.mark.parametrize(("case", "limitation"), canary.params("gpu", tuple(FAULT_TEXT), "no known kernel fault in this release"))
def test_known_fault_still_faults(case, limitation):
    proc = canary.run_alone("run_one", "gpu", case)
    output = proc.stdout + proc.stderr
    assert proc.returncode != 0, f"{case.id} conforms: this release no longer has '{limitation.reason}'; narrow its releases"
    expected = FAULT_TEXT[limitation.fails_as]
    assert any(text in output for text in expected), f"{case.id} failed, but not with any of {expected}:\n{output[-1500:]}"
