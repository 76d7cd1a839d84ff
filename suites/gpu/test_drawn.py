"""Cases the harness draws itself, between the plan's fixed ones: shapes (odd, unit, prime),
each operand's layout, base offsets, static or dynamic, in place, from each stage's domain
(``fixtures.cases.drawn``); a failure is shrunk to the smallest case that still fails and
printed with the command that reruns exactly it (``--drawn-case``). The drawn search also
finds a kernel that reads A through C's layout (``_planted_classes.py``)."""

import re

import pytest

from fixtures.cases import drawn, failures, matrix
from fixtures.plugin import run_state
from suites.gpu._planted_classes import PLANTED_CLASSES

pytestmark = pytest.mark.gpu


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """A search in each of the run's stages; ``--drawn-case ID``: one test per id given (none without the option)."""
    state = run_state.of(metafunc.config)
    if "stage" in metafunc.fixturenames:
        metafunc.parametrize("stage", list(state.stages.values()), ids=lambda s: f"drawn-{s.name}")
    if "drawn_case" in metafunc.fixturenames:
        params = [pytest.param(matrix.case_from_id(i, "drawn", state.stages), id=i) for i in state.drawn_cases]
        metafunc.parametrize("drawn_case", params or [pytest.param(None, id="none", marks=pytest.mark.skip(
            reason="no --drawn-case given: this test reruns the drawn cases it names (as a drawn failure prints it)"))])


def _draws(config: pytest.Config) -> drawn.DrawSettings:
    explore = run_state.of(config).explore
    return drawn.GATE if explore is None else drawn.DrawSettings(explore, derandomize=False)


@pytest.mark.slow
def test_drawn_cases_match_torch(stage, compiler, pytestconfig):
    from fixtures.dsl.search import search

    search(stage, compiler, _draws(pytestconfig))


def test_drawn_case(drawn_case, compiler):
    from fixtures.dsl.search import run_drawn

    run_drawn(drawn_case, compiler)


@pytest.mark.slow
def test_drawn_cases_find_a_stage_that_reads_a_through_c_layout(compiler):
    """The search, not the plan, must find the planted layout bug and shrink it to a case whose
    A is laid out unlike C. Drawn with a row-major C and an A that is no broadcast, so the planted
    reads stay inside A's span (a read past it could fault)."""
    from fixtures.dsl.search import search

    planted = PLANTED_CLASSES[0].stage
    inside_a = drawn.cases_for(planted).filter(
        lambda c: c.operand_layout("c") == "rowmajor" and c.operand_layout("a") not in matrix.INPUT_ONLY_LAYOUTS
    )
    with pytest.raises(failures.Mismatch, match="--drawn-case") as caught:
        search(planted, compiler, drawn.DrawSettings(60, derandomize=True), inside_a)
    assert re.match(rf"{planted.name}-\w+-\w+-\w+-a_(colmajor|strided)-", str(caught.value)), str(caught.value)
