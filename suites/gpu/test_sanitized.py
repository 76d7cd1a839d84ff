"""Reads the guard bands cannot see: a sample of the gpu plan (``matrix.sanitize_cases``: every
stage x dtype x layout class) run case by case under compute-sanitizer, each operand's exact
extent told to the tool (``fixtures.plugin.sanitize``), only with ``--sanitize[=TOOLS]``; and,
without it, the gate's own sample (``matrix.gate_sanitize_cases``: each stage's case of every
placement class, offset, strided, broadcast, column-major and in place, a process a stage under
memcheck) wherever compute-sanitizer is installed."""

import pytest

from fixtures.cases import limitations, matrix
from fixtures.dsl import sanitizer
from fixtures.plugin import canary, sanitize
from fixtures.plugin import run_state

pytestmark = pytest.mark.gpu


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    state = run_state.of(metafunc.config)
    if "gate_cases" in metafunc.fixturenames:
        sample = matrix.gate_sanitize_cases(state.stages, ruled_out=lambda case: limitations.known(case, "gpu") is not None)
        by_stage = {name: [c for c in sample if c.stage.name == name] for name in state.stages}
        metafunc.parametrize("gate_cases", [pytest.param(cases, id=f"memcheck-{name}") for name, cases in by_stage.items() if cases])
    if "tool" not in metafunc.fixturenames:
        return
    if not state.sanitize:
        params = [pytest.param(None, None, id="not-asked", marks=pytest.mark.skip(reason="not asked for (--sanitize)"))]
    else:
        cases = [c for c in matrix.sanitize_cases(state.stages) if not limitations.known(c, "gpu")]
        params = [pytest.param(tool, case, id=f"{tool}-{case.id}") for tool in state.sanitize for case in cases]
    metafunc.parametrize(("tool", "case"), params)


@pytest.mark.sanitize
@pytest.mark.timeout(canary.TIMEOUT_S + 30)
def test_sanitizer_finds_nothing(tool, case, pytestconfig):
    state = run_state.of(pytestconfig)
    if state.sanitizer_missing:
        pytest.skip(state.sanitizer_missing)
    sanitize.run(case.id, tool, pytestconfig.getoption("--stage-module"), pytestconfig.getoption("--require-gpu"))


@pytest.mark.timeout(canary.TIMEOUT_S + 30)
def test_the_gate_sample_under_memcheck_finds_nothing(gate_cases, pytestconfig):
    """A stage's case of each placement class, in one process (the tool's start is most of a
    case's cost; one process a stage spreads them over the workers): a stray read before or past
    any operand fails the gate where the tool is installed. A tool that cannot run on this GPU
    skips it, --require-gpu or not: that is the runner's, not the install's."""
    state = run_state.of(pytestconfig)
    if state.sanitize:
        pytest.skip("--sanitize runs the whole sample instead")
    if sanitizer.find_tool() is None:
        pytest.skip("compute-sanitizer not found on PATH or in /usr/local/cuda: the gate's sanitizer sample did not run")
    sanitize.run([c.id for c in gate_cases], "memcheck", pytestconfig.getoption("--stage-module"), required=False)
