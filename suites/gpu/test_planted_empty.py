"""The empty family proves itself: a kernel that writes a tensor's first element unchecked is
exact on every case that has one and caught, as a write outside the tensors, on an empty one
(``_planted_classes.PLANTED_EMPTY``)."""

import pytest

from fixtures.cases import failures
from suites.gpu._planted_classes import PLANTED_EMPTY

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in PLANTED_EMPTY.cases(PLANTED_EMPTY.caught)])
def test_a_kernel_that_writes_an_empty_tensor_is_caught(case, run_case):
    with pytest.raises(failures.OutOfBoundsWrite, match=case.id):
        run_case(case)


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in PLANTED_EMPTY.cases(PLANTED_EMPTY.passes)])
def test_a_kernel_that_writes_an_empty_tensor_passes_the_others(case, run_case):
    run_case(case)
