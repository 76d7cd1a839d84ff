"""The empty family proves itself: a kernel that writes a tensor's first element unchecked is
exact on every case that has one and caught on an empty one (``_planted_classes.PLANTED_EMPTY``).
An empty tensor's pointer is null, so the write faults: the empty case runs in a process of its
own (a fault poisons its process's CUDA context), launching in the machine's fault turn
(``fixtures.dsl.fault_turn``). A kernel whose transposing path (A read down its columns, C by rows)
launches an empty grid when there is no column passes the empty cases the plan drew before and is
caught by the plan's empty cases laid out that way (``PLANTED_EMPTY_LAYOUTS``)."""

import pytest

from fixtures.dsl import compat
from fixtures.plugin import canary
from suites.gpu._planted_classes import PLANTED_EMPTY, PLANTED_EMPTY_LAYOUTS
from suites.gpu._run_planted import run_alone

pytestmark = pytest.mark.gpu

# what the null write shows as: a fault, or (had the pointer been real) the guard bands
CAUGHT_AS = ("illegal memory access", "illegal address", "out-of-bounds write")


@pytest.mark.slow
@pytest.mark.timeout(canary.TIMEOUT_S + 30)
def test_a_kernel_that_writes_an_empty_tensor_is_caught():
    for case in PLANTED_EMPTY.cases(PLANTED_EMPTY.caught):
        output = run_alone(case.id)
        assert any(text in output for text in CAUGHT_AS), f"{case.id} failed, but not as a write:\n{output[-1500:]}"


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in PLANTED_EMPTY.cases(PLANTED_EMPTY.passes)])
def test_a_kernel_that_writes_an_empty_tensor_passes_the_others(case, run_case):
    run_case(case)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in PLANTED_EMPTY_LAYOUTS.cases(PLANTED_EMPTY_LAYOUTS.caught)])
def test_a_kernel_that_launches_an_empty_grid_for_a_transposed_operand_is_caught(case, run_case):
    # the gpu plan's empty cases of its class: CUDA refuses the empty grid at launch (no fault)
    with pytest.raises(compat.resolve("DSLBaseError")):
        run_case(case)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in PLANTED_EMPTY_LAYOUTS.cases(PLANTED_EMPTY_LAYOUTS.passes)])
def test_a_kernel_that_launches_an_empty_grid_for_a_transposed_operand_passes_the_others(case, run_case):
    run_case(case)
