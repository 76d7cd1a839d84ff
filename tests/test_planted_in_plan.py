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


# --- the gate's sample (--plan-sample gate) keeps every planted class the full gpu plan catches

from fixtures.cases.stages import Stage  # noqa: E402
from suites.gpu._planted_classes import PLANTED_CLASSES, PLANTED_EMPTY, PlantedClass  # noqa: E402
from suites.gpu._planted_reads import PLANTED_READS  # noqa: E402
from suites.gpu._planted_values import PLANTED as PLANTED_VALUES  # noqa: E402

# every class of wrong kernel the harness plants, run as a user's stage (the gpu plan's cases)
IN_THE_PLAN = (*PLANTED_CLASSES, PLANTED_TRIPLE, *PLANTED_LARGE, PLANTED_EMPTY, PLANTED_EMPTY_LAYOUTS)
# a wrong value class shows on every case of its dtypes: the edge values are in every case
VALUE_CLASSES = tuple(PlantedClass(p.stage, p.caught_as, (), (), shows=lambda case, d=p.dtypes: case.dtype.id in d)
                      for p in PLANTED_VALUES)


def _mine(stage: Stage, sample: str) -> list:
    return [c for c in matrix.cases("gpu", with_registered([stage]), sample) if c.stage is stage]


def lost(planted: tuple[PlantedClass, ...], sample: str) -> list[str]:
    """The planted classes the full gpu plan catches and ``sample`` of it does not, by stage name."""
    return [p.stage.name for p in planted
            if any(map(p.shows, _mine(p.stage, "all"))) and not any(map(p.shows, _mine(p.stage, sample)))]


@pytest.mark.parametrize("planted", IN_THE_PLAN + PLANTED_READS, ids=lambda p: p.stage.name)
def test_where_a_planted_class_shows_is_where_the_gpu_catches_it(planted):
    """``shows`` is held against the cases the gpu tier runs the planted stage on: caught where it
    says, and (a read aside: its ``passes`` are the ordinary tier's, which never sees reads) nowhere else."""
    assert all(map(planted.shows, planted.cases(planted.caught)))
    if planted not in PLANTED_READS:
        assert not any(map(planted.shows, planted.cases(planted.passes)))


def test_the_full_gpu_plan_catches_every_planted_class():
    assert not [p.stage.name for p in IN_THE_PLAN + VALUE_CLASSES if not any(map(p.shows, _mine(p.stage, "all")))]


def test_the_gates_sample_loses_no_planted_class_and_the_pairs_sample_did():
    """What the gate runs keeps every class the full plan catches; the strength-2 sample it ran
    before lost the layout triple and the 32-bit offsets past 2**31 laid out otherwise (issue 67)."""
    assert lost(IN_THE_PLAN + VALUE_CLASSES, "gate") == []
    assert {PLANTED_TRIPLE.stage.name, INT32_OFF_CONTIGUOUS.stage.name} <= set(lost(IN_THE_PLAN, "pairs"))


@pytest.mark.parametrize("planted", [PLANTED_TRIPLE, INT32_OFF_CONTIGUOUS, PLANTED_EMPTY_LAYOUTS], ids=lambda p: p.stage.name)
def test_removing_the_sample_cases_a_class_shows_on_loses_it(planted):
    """The check above can fail: the gate's cases of the stage where the class shows, taken out one
    at a time, each name a case the sample holds it by; taken out together, the class is lost."""
    sample = _mine(planted.stage, "gate")
    showing = [c for c in sample if planted.shows(c)]
    assert showing
    assert not any(map(planted.shows, [c for c in sample if c not in showing]))


def test_the_gates_memcheck_sample_keeps_every_planted_read():
    """Each planted read shows on some case of the gate's memcheck sample of its stage (a narrow
    type's word read at the offset class's 1- and 2-byte widths); the sample before (one dtype a
    class, in turn) lost the word read."""
    for planted in PLANTED_READS:
        assert any(map(planted.shows, matrix.gate_sanitize_cases({planted.stage.name: planted.stage}))), planted.stage.name
    word_read = PLANTED_READS[-1]
    one_dtype_a_class = [c for c in matrix.gate_sanitize_cases({word_read.stage.name: word_read.stage})
                         if c.dtype.bytes >= 4 or matrix.placement_class(c) != "offset"]
    assert not any(map(word_read.shows, [c for c in one_dtype_a_class if matrix.placement_class(c) == "offset"]))
