"""Known DSL crashes: one canary per limitation that kills the compiler, compiled in a subprocess
that must die by a signal.

The matrix skips such a limitation's cases, since running one would take the whole run down;
the canary keeps the skip honest: on a release that no longer crashes it fails, and the
limitation's release range must be narrowed.
"""

import subprocess
import sys
from pathlib import Path

import pytest

from fixtures.cases import limitations, matrix

pytestmark = pytest.mark.compile

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT_S = 240


def _canaries() -> list:
    """The first compile-plan case of each crash limitation this release has."""
    params = []
    for lim in limitations.KNOWN_LIMITATIONS:
        if lim.fails_as != "crash":
            continue
        covered = [c for c in matrix.cases("compile") if lim.covers(c, "compile")]
        if covered:
            params.append(pytest.param(covered[0], lim.reason, id=covered[0].id))
    none = pytest.mark.skip(reason="no known compiler crash in this release")
    return params or [pytest.param(None, None, id="none", marks=none)]


@pytest.mark.timeout(TIMEOUT_S + 30)
@pytest.mark.parametrize(("case", "reason"), _canaries())
def test_known_crash_still_crashes(case, reason):
    proc = subprocess.run(
        [sys.executable, "-m", "fixtures.dsl.compile_one", "compile", case.id],
        cwd=ROOT, capture_output=True, text=True, timeout=TIMEOUT_S,
    )
    tail = (proc.stdout + proc.stderr)[-1500:]
    assert proc.returncode != 0, f"{case.id} compiled: this release no longer has '{reason}'; narrow the limitation's releases"
    assert proc.returncode < 0, f"{case.id} failed without crashing (exit {proc.returncode}), not as '{reason}':\n{tail}"
