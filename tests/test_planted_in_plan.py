"""The planted stages of issue 48's classes are caught by the gpu plan itself: a run with one of
them registered draws the cases its defect shows on (run on a GPU by ``suites/gpu/test_planted_*``),
and the cases it must pass are ones the plan drew before or beside them."""

import pytest

from fixtures.cases import matrix
from fixtures.cases.stages import with_registered
from suites.gpu._planted_classes import KEYED_TRIPLE, PLANTED_EMPTY_LAYOUTS, PLANTED_LARGE, PLANTED_TRIPLE

pytestmark = pytest.mark.harness

INT32_OFF_CONTIGUOUS = PLANTED_LARGE[2]


def _plan_ids(planted) -> set[str]:
    return {c.id for c in matrix.cases("gpu", with_registered([planted.stage])) if c.stage is planted.stage}


@pytest.mark.parametrize("planted", [PLANTED_TRIPLE, INT32_OFF_CONTIGUOUS, PLANTED_EMPTY_LAYOUTS], ids=lambda p: p.stage.name)
def test_the_gpu_plan_draws_the_cases_each_planted_defect_shows_on(planted):
    caught = planted.cases(planted.caught)
    assert caught, f"the gpu plan draws no case {planted.stage.name} is wrong on"
    assert {c.id for c in caught} <= _plan_ids(planted)


def test_the_triple_stage_is_caught_only_on_its_triple():
    (case,) = PLANTED_TRIPLE.cases(PLANTED_TRIPLE.caught)
    assert tuple(case.operand_layout(op) for op in "abc") == KEYED_TRIPLE and case.shape[0] > 1
    for other in PLANTED_TRIPLE.cases(PLANTED_TRIPLE.passes):
        assert tuple(other.operand_layout(op) for op in "abc") != KEYED_TRIPLE or other.shape[0] == 1, other.id


def test_the_int32_stage_is_caught_past_2_31_laid_out_otherwise_and_passes_its_row_major_cases_there():
    assert {c.shape for c in INT32_OFF_CONTIGUOUS.cases(INT32_OFF_CONTIGUOUS.caught)} == {matrix.HUGE}
    assert all(c.operands for c in INT32_OFF_CONTIGUOUS.cases(INT32_OFF_CONTIGUOUS.caught))
    passing_huge = [c for c in INT32_OFF_CONTIGUOUS.cases(INT32_OFF_CONTIGUOUS.passes) if c.shape == matrix.HUGE]
    assert {c.alias for c in passing_huge} == {None, "c_is_a", "c_is_b"} and not any(c.operands for c in passing_huge)


def test_the_empty_layout_stage_is_caught_on_empty_cases_with_no_column_and_passes_the_old_empty_plan():
    assert {c.shape[1] for c in PLANTED_EMPTY_LAYOUTS.cases(PLANTED_EMPTY_LAYOUTS.caught)} == {0}
    old = [c for c in PLANTED_EMPTY_LAYOUTS.cases(PLANTED_EMPTY_LAYOUTS.passes) if 0 in c.shape]
    assert len(old) >= 15 and all(c.dtype.id == "fp16" and not c.operands for c in old)
