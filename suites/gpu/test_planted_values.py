"""The harness proves its edge values: a stage that is wrong on one value class only (wraps,
signed zeros, NaN, infinities, subnormals, rounding ties) is caught in every layout, and the
mismatch names that class. The right stages staying green is the rest of the gpu tier."""

import pytest

from fixtures.cases import failures
from fixtures.cases.dtypes import DTYPES
from fixtures.cases.matrix import Case
from fixtures.plugin.params import limitation_marks
from suites.gpu._planted_values import PLANTED

pytestmark = pytest.mark.gpu

# (alignment, layout, shape): every layout once, odd and one-row and one-column shapes among them
PLACEMENTS = (
    ("align16", "static", (128, 2048)),
    ("natural", "dynamic", (97, 101)),
    ("align16", "compact", (1, 4096)),
    ("natural", "colmajor", (64, 1003)),
    ("offset", "strided", (4096, 1)),
    ("natural", "bcast", (97, 101)),
)

# a planted stage is the predicated stage: where a known limitation stops that stage from being
# built or run (DSL 4.3 with dynamic shapes), its planted cases carry the limitation's mark
# each class meets every placement and every dtype it is wrong on, row i pairing the i-th of each
# (both cycled): 36 cases where the cross product is 126 (49 s of an H100 gate's worker time)
CASES = [
    pytest.param(planted, case, id=case.id, marks=limitation_marks(case, "gpu"))
    for planted in PLANTED
    for i in range(max(len(planted.dtypes), len(PLACEMENTS)))
    for align, layout, shape in (PLACEMENTS[i % len(PLACEMENTS)],)
    for case in (Case(planted.stage, DTYPES[planted.dtypes[i % len(planted.dtypes)]], align, layout, shape, "planted"),)
]


@pytest.mark.parametrize(("planted", "case"), CASES)
def test_a_stage_wrong_on_one_value_class_is_caught(planted, case, run_case):
    with pytest.raises(failures.Mismatch, match=rf"; by class: .*\b{planted.caught_as} \d+"):
        run_case(case)
