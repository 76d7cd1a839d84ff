"""The sanitizer proves itself: a kernel that loads whole vectors past a row's tail and stores
only what lies inside, and one that reads a misaligned tensor's first element through the aligned
pair that holds it, pass the ordinary gpu tier (the stray read lands in a guard band and is
dropped) and fail under compute-sanitizer (``--sanitize``) with the read named, past the end or
before the start of the operand (``_planted_reads.py``). The gate's own sample, without
``--sanitize``, catches the read before an operand at an offset placement."""

import pytest

from fixtures.cases import failures, matrix
from fixtures.dsl import sanitizer
from fixtures.plugin import canary, sanitize
from fixtures.plugin import run_state
from suites.gpu._planted_reads import PLANTED_READS

HEAD_UNDERREAD = next(p for p in PLANTED_READS if p.stage.name == "planted_head_underread")

pytestmark = pytest.mark.gpu

ALL_CASES = [
    pytest.param(planted, case, id=case.id)
    for planted in PLANTED_READS
    for case in planted.cases(planted.caught + planted.passes)
]
CAUGHT = [pytest.param(planted, case, id=case.id) for planted in PLANTED_READS for case in planted.cases(planted.caught)]


@pytest.mark.parametrize(("planted", "case"), ALL_CASES)
def test_a_kernel_that_reads_past_its_tensors_passes_the_ordinary_tier(planted, case, run_case):
    run_case(case)


@pytest.mark.sanitize
@pytest.mark.timeout(canary.TIMEOUT_S + 30)
@pytest.mark.parametrize(("planted", "case"), CAUGHT)
def test_a_kernel_that_reads_past_its_tensors_is_caught_by_the_sanitizer(planted, case, pytestconfig):
    state = run_state.of(pytestconfig)
    if "memcheck" not in state.sanitize:
        pytest.skip("not asked for (--sanitize with memcheck)")
    if state.sanitizer_missing:
        pytest.skip(state.sanitizer_missing)
    with pytest.raises(failures.SanitizerFinding, match=rf"memcheck: {planted.word} in .*(past the end|before the start) of operand [ab]"):
        sanitize.run(case.id, "memcheck", [], pytestconfig.getoption("--require-gpu"), lookup="suites.gpu._planted_reads")


@pytest.mark.timeout(canary.TIMEOUT_S + 30)
def test_the_gates_memcheck_sample_catches_a_read_before_an_offset_operand(pytestconfig):
    """The default command's sample of a stage that reads the element before A wherever A's base
    is one element past a 16-byte boundary: its offset case fails, named, and only that case."""
    if sanitizer.find_tool() is None:
        pytest.skip("compute-sanitizer not found on PATH or in /usr/local/cuda: the gate's sanitizer sample does not run")
    sample = matrix.gate_sanitize_cases({HEAD_UNDERREAD.stage.name: HEAD_UNDERREAD.stage})
    assert {matrix.placement_class(c) for c in sample} == set(matrix.GATE_SANITIZE_CLASSES)
    (offset,) = [c for c in sample if matrix.placement_class(c) == "offset"]
    with pytest.raises(failures.SanitizerFinding) as found:
        sanitize.run([c.id for c in sample], "memcheck", [], required=False, lookup="suites.gpu._planted_reads")
    assert str(found.value).startswith(f"{offset.id}: memcheck: out-of-bounds read"), found.value
    assert "before the start of operand a" in str(found.value) and "operand b" not in str(found.value).split("\n")[0]
