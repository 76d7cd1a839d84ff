"""Reads the guard bands cannot see: a sample of the gpu plan (``matrix.sanitize_cases``: every
stage x dtype x layout class) run case by case under compute-sanitizer, each operand in an
allocation that ends with it (``fixtures.plugin.sanitize``). Only with ``--sanitize[=TOOLS]``."""

import pytest

from fixtures.cases import limitations, matrix
from fixtures.plugin import canary, sanitize
from fixtures.plugin import run_state

pytestmark = [pytest.mark.gpu, pytest.mark.sanitize]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    state = run_state.of(metafunc.config)
    if not state.sanitize:
        params = [pytest.param(None, None, id="not-asked", marks=pytest.mark.skip(reason="not asked for (--sanitize)"))]
    else:
        cases = [c for c in matrix.sanitize_cases(state.stages) if not limitations.known(c, "gpu")]
        params = [pytest.param(tool, case, id=f"{tool}-{case.id}") for tool in state.sanitize for case in cases]
    metafunc.parametrize(("tool", "case"), params)


@pytest.mark.timeout(canary.TIMEOUT_S + 30)
def test_sanitizer_finds_nothing(tool, case, pytestconfig):
    state = run_state.of(pytestconfig)
    if state.sanitizer_missing:
        pytest.skip(state.sanitizer_missing)
    sanitize.run(case.id, tool, pytestconfig.getoption("--stage-module"), pytestconfig.getoption("--require-gpu"))
