"""The large family proves itself: a kernel with a flat Int32 element index, one with rows on
``gridDim.y`` and one 64-bit safe only where every operand is compact row-major are exact on
every layout of the plan below those limits (the last on the plan's row-major and in-place
cases past 2**31 elements too), and fail on the large cases that cross theirs: the last on the
plan's own large cases laid out otherwise (``_planted_classes.PLANTED_LARGE``)."""

import pytest

from fixtures.cases import failures
from fixtures.dsl import compat
from suites.gpu._planted_classes import PLANTED_LARGE

pytestmark = pytest.mark.gpu

CAUGHT = [pytest.param(case, id=case.id) for planted in PLANTED_LARGE for case in planted.cases(planted.caught)]
PASSES = [pytest.param(case, id=case.id) for planted in PLANTED_LARGE for case in planted.cases(planted.passes)]


@pytest.mark.parametrize("case", CAUGHT)
def test_a_kernel_wrong_past_a_32_bit_limit_is_caught_there(case, run_case):
    # a wrong result, or the launch refused by the DSL (a grid's y past 65,535)
    with pytest.raises((failures.ConformanceError, compat.resolve("DSLBaseError"))):
        run_case(case)


@pytest.mark.parametrize("case", PASSES)
def test_a_kernel_wrong_past_a_32_bit_limit_passes_below_it(case, run_case):
    run_case(case)
