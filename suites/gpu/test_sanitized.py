"""Reads the guard bands cannot see: a sample of the gpu plan (``matrix.sanitize_cases``: every
stage x dtype x layout class) run case by case under compute-sanitizer, each operand's exact
extent told to the tool (``fixtures.plugin.sanitize``), only with ``--sanitize[=TOOLS]``; and,
without it, the gate's own sample (``matrix.gate_sanitize_cases``: each stage's case of every
placement class, offset at every element width, strided, broadcast, column-major and in place
at the narrowest, a process every three stages under memcheck) wherever compute-sanitizer is installed."""

import pytest

from fixtures.cases import limitations, matrix
from fixtures.dsl import sanitizer
from fixtures.plugin import canary, sanitize
from fixtures.plugin import run_state

pytestmark = pytest.mark.gpu

# the gate's sample runs a process for this many stages: on an H100 a process under the tool took
# 13-18 s for one stage's 5 cases, about 9 s of it starting Python, torch and the DSL under the tool;
# a stage has 8 since the offset class runs at every width (two stages a process: 5 processes, 90 s of
# an H100 gate's worker time, 0.56 s a case past the start; three: 3 processes, about 22 s each)
GATE_STAGES_A_PROCESS = 3


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    state = run_state.of(metafunc.config)
    if "gate_cases" in metafunc.fixturenames:
        sample = matrix.gate_sanitize_cases(state.stages, ruled_out=lambda case: limitations.known(case, "gpu") is not None)
        names = [name for name in state.stages if any(c.stage.name == name for c in sample)]
        groups = [names[i:i + GATE_STAGES_A_PROCESS] for i in range(0, len(names), GATE_STAGES_A_PROCESS)]
        metafunc.parametrize("gate_cases", [pytest.param([c for c in sample if c.stage.name in group],
                                                         id="memcheck-" + "-".join(group)) for group in groups])
    if "tool" not in metafunc.fixturenames:
        return
    if not state.sanitize:
        params = [pytest.param(None, None, id="not-asked", marks=pytest.mark.skip(reason="not asked for (--sanitize)"))]
    else:
        cases = [c for c in matrix.sanitize_cases(state.stages) if not limitations.known(c, "gpu")]
        params = [pytest.param(tool, case, id=f"{tool}-{case.id}") for tool in state.sanitize for case in cases]
    metafunc.parametrize(("tool", "case"), params)


@pytest.mark.slow
@pytest.mark.sanitize
@pytest.mark.timeout(canary.TIMEOUT_S + 30)
def test_sanitizer_finds_nothing(tool, case, pytestconfig):
    state = run_state.of(pytestconfig)
    if state.sanitizer_missing:
        pytest.skip(state.sanitizer_missing)
    sanitize.run(case.id, tool, pytestconfig.getoption("--stage-module"), pytestconfig.getoption("--require-gpu"))


@pytest.mark.slow
@pytest.mark.timeout(canary.TIMEOUT_S + 30)
def test_the_gate_sample_under_memcheck_finds_nothing(gate_cases, pytestconfig):
    """Three stages' cases of each placement class, in one process (the tool's start is most of
    a case's cost; a process every three stages spreads them over the workers): a stray read before or past
    any operand fails the gate where the tool is installed. A tool that cannot run on this GPU
    skips it, --require-gpu or not: that is the runner's, not the install's."""
    state = run_state.of(pytestconfig)
    if state.sanitize:
        pytest.skip("--sanitize runs the whole sample instead")
    if sanitizer.find_tool() is None:
        pytest.skip("compute-sanitizer not found on PATH or in /usr/local/cuda: the gate's sanitizer sample did not run")
    sanitize.run([c.id for c in gate_cases], "memcheck", pytestconfig.getoption("--stage-module"), required=False)
