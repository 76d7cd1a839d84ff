"""The large family proves itself: a kernel with a flat Int32 element index, one with rows on
``gridDim.y`` and one 64-bit safe only where every operand is compact row-major are exact on
every layout of the plan below those limits (the last on the plan's row-major and in-place
cases past 2**31 elements too), and fail on the large cases that cross theirs: the last on the
plan's own large cases laid out otherwise (``_planted_classes.PLANTED_LARGE``)."""

import pytest

from fixtures.cases import failures, matrix
from fixtures.dsl import compat
from fixtures.plugin import canary
from suites.gpu._planted_classes import PLANTED_LARGE
from suites.gpu._run_planted import run_alone

pytestmark = pytest.mark.gpu

CAUGHT = [pytest.param(case, id=case.id) for planted in PLANTED_LARGE for case in planted.cases(planted.caught)]
PASSES = [pytest.param(case, id=case.id) for planted in PLANTED_LARGE for case in planted.cases(planted.passes)]


# past 2**31 elements a wrapped 32-bit index lands 2 GiB before the operand: in another allocation
# (a wrong value) or in none (an illegal memory access, which poisons its process: seen on an H100
# with 4.8.1, where earlier starts had the wrong value), so those cases run in a process of their
# own, launching in the machine's fault turn, and either counts as caught
CAUGHT_AS = ("fixtures.cases.failures.", "illegal memory access", "illegal address")


@pytest.mark.timeout(canary.TIMEOUT_S + 30)
@pytest.mark.parametrize("case", CAUGHT)
def test_a_kernel_wrong_past_a_32_bit_limit_is_caught_there(case, run_case):
    if case.shape != matrix.HUGE:
        # a wrong result, or the launch refused by the DSL (a grid's y past 65,535)
        with pytest.raises((failures.ConformanceError, compat.resolve("DSLBaseError"))):
            run_case(case)
        return
    output = run_alone(case.id)
    assert any(text in output for text in CAUGHT_AS), f"{case.id} failed, but not as a wrong value or a fault:\n{output[-1500:]}"


@pytest.mark.parametrize("case", PASSES)
def test_a_kernel_wrong_past_a_32_bit_limit_passes_below_it(case, run_case):
    run_case(case)
