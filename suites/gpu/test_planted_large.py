"""The large family proves itself: a kernel with a flat Int32 element index and one with rows on
``gridDim.y`` are exact on every layout of the plan below those limits (``BEFORE``), and fail on
the large shape that crosses theirs (``_planted_large.py``)."""

import dataclasses

import pytest

from fixtures.cases import failures, matrix
from fixtures.dsl import compat
from suites.gpu._planted_classes import BEFORE
from suites.gpu._planted_large import FLAT_INT32_INDEX, ROWS_ON_GRID_Y

pytestmark = pytest.mark.gpu


def _case(stage, text):
    return dataclasses.replace(matrix.case_from_id(text.format(stage="naive")), stage=stage)


# past 2**31 elements, and past 65,535 rows
CAUGHT = [
    pytest.param(case, id=case.id)
    for case in (_case(FLAT_INT32_INDEX, "{stage}-i8-align16-static-32832x65536"),
                 _case(ROWS_ON_GRID_Y, "{stage}-fp16-align16-static-65600x1024"))
]
PASSES = [pytest.param(_case(stage, text), id=_case(stage, text).id) for stage in (FLAT_INT32_INDEX, ROWS_ON_GRID_Y) for text in BEFORE]


@pytest.mark.parametrize("case", CAUGHT)
def test_a_kernel_wrong_past_a_32_bit_limit_is_caught_there(case, run_case):
    # a wrong result, or the launch refused by the DSL (a grid's y past 65,535)
    with pytest.raises((failures.ConformanceError, compat.resolve("DSLBaseError"))):
        run_case(case)


@pytest.mark.parametrize("case", PASSES)
def test_a_kernel_wrong_past_a_32_bit_limit_passes_below_it(case, run_case):
    run_case(case)
