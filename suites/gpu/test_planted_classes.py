"""The harness proves its new input classes: a kernel that reads A through C's layout, one that
is exact out of place but wrong when C is B, and one wrong on a single (A, B, C) layout triple
(caught by the gpu plan's own case of that triple), each pass every case the plan drew before
and are caught on their class, the failure naming it (``_planted_classes.py``)."""

import pytest

from fixtures.cases import failures
from suites.gpu._planted_classes import PLANTED_CLASSES, PLANTED_TRIPLE

pytestmark = pytest.mark.gpu

CAUGHT = [
    pytest.param(planted, case, id=case.id)
    for planted in (*PLANTED_CLASSES, PLANTED_TRIPLE)
    for case in planted.cases(planted.caught)
]
PASSES = [
    pytest.param(case, id=case.id)
    for planted in (*PLANTED_CLASSES, PLANTED_TRIPLE)
    for case in planted.cases(planted.passes)
]


@pytest.mark.parametrize(("planted", "case"), CAUGHT)
def test_a_stage_wrong_on_one_input_class_is_caught_there(planted, case, run_case):
    with pytest.raises(failures.ConformanceError, match=rf"-{planted.word}-"):
        run_case(case)


@pytest.mark.parametrize("case", PASSES)
def test_a_stage_wrong_on_one_input_class_passes_the_others(case, run_case):
    run_case(case)
