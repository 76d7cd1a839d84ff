"""The drawn cases' strategies on the CPU: every draw is a case its stage claims, outside every
known limitation, with one layout per shared tensor, and its id reruns exactly it."""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fixtures.cases import drawn, limitations, matrix
from fixtures.cases.stages import BUILT_IN_STAGES
from tests.conftest import ROOT

pytestmark = pytest.mark.harness


@pytest.mark.parametrize("stage", list(BUILT_IN_STAGES), ids=str)
@settings(max_examples=25, derandomize=True, database=None, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_a_drawn_case_is_inside_its_stage_and_its_id_names_it(stage, data):
    case = data.draw(drawn.cases_for(BUILT_IN_STAGES[stage]))
    assert matrix.outside_domain(case) is None and limitations.known(case, "gpu") is None
    assert case.shape[0] * case.shape[1] <= drawn.MAX_ELEMENTS
    for operand, same in case.shares_storage.items():
        assert case.operand_layout(operand) == case.operand_layout(same)
    assert case.operand_layout("c") not in matrix.INPUT_ONLY_LAYOUTS
    again = matrix.case_from_id(case.id)
    assert again is not None and again.signature == case.signature and again.alias == case.alias


def test_the_drawn_module_loads_no_hypothesis_until_a_strategy_is_made():
    """Every worker imports it to collect ``test_drawn.py``; Hypothesis, assertion-rewritten under
    pytest, is the few searching workers' cost, not each worker's collection."""
    import subprocess
    import sys

    probe = ("import sys; import fixtures.cases.drawn as d; print('hypothesis' in sys.modules); "
             "from fixtures.cases.stages import BUILT_IN_STAGES; d.cases_for(BUILT_IN_STAGES['tv']); "
             "print('hypothesis' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["False", "True"]
