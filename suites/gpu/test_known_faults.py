"""Known kernel faults: one canary per limitation whose kernels fault, run in a subprocess that
must fail with that fault.

The matrix skips such a limitation's cases, since a fault poisons the CUDA context of the
process that hits it; the canary keeps the skip honest: on a release whose kernel no longer
faults it fails, and the limitation's release range must be narrowed.
"""

import subprocess
import sys
from pathlib import Path

import pytest

from fixtures.cases import limitations, matrix

pytestmark = pytest.mark.gpu

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT_S = 240
FAULT_TEXT = {"misaligned_address": "misaligned address"}  # what CUDA says, per Limitation.fails_as


def _canaries() -> list:
    """The first gpu-plan case of each faulting limitation this release has."""
    params = []
    for lim in limitations.KNOWN_LIMITATIONS:
        if lim.fails_as not in FAULT_TEXT:
            continue
        covered = [c for c in matrix.cases("gpu") if lim.covers(c, "gpu")]
        if covered:
            params.append(pytest.param(covered[0], lim, id=covered[0].id))
    none = pytest.mark.skip(reason="no known kernel fault in this release")
    return params or [pytest.param(None, None, id="none", marks=none)]


@pytest.mark.parametrize(("case", "limitation"), _canaries())
def test_known_fault_still_faults(case, limitation):
    proc = subprocess.run(
        [sys.executable, "-m", "fixtures.dsl.run_one", "gpu", case.id],
        cwd=ROOT, capture_output=True, text=True, timeout=TIMEOUT_S,
    )
    output = proc.stdout + proc.stderr
    assert proc.returncode != 0, f"{case.id} conforms: this release no longer has '{limitation.reason}'; narrow its releases"
    expected = FAULT_TEXT[limitation.fails_as]
    assert expected in output, f"{case.id} failed, but not with '{expected}':\n{output[-1500:]}"
