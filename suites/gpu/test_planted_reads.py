"""The sanitizer proves itself: a kernel that loads whole vectors past a row's tail and stores
only what lies inside, and one that reads a misaligned tensor's first element through the aligned
pair that holds it, pass the ordinary gpu tier (the stray read lands in a guard band and is
dropped) and fail under compute-sanitizer (``--sanitize``) with the read named, past the end or
before the start of the operand (``_planted_reads.py``). The gate's own sample, without
``--sanitize``, catches the read before an operand at an offset placement, and a narrow type's
element read through the aligned word that holds it."""

import pytest

from fixtures.cases import failures, matrix
from fixtures.dsl import sanitizer
from fixtures.plugin import canary, sanitize
from fixtures.plugin import run_state
from suites.gpu._planted_reads import PLANTED_READS

HEAD_UNDERREAD = next(p for p in PLANTED_READS if p.stage.name == "planted_head_underread")
WORD_READ = next(p for p in PLANTED_READS if p.stage.name == "planted_word_read")

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


@pytest.mark.slow
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


def _gate_sample_under_memcheck(planted) -> tuple[list, str]:
    """The gate's memcheck sample of ``planted``'s stage, run as the default command runs it: the
    sample, and the first line of what the tool found."""
    if sanitizer.find_tool() is None:
        pytest.skip("compute-sanitizer not found on PATH or in /usr/local/cuda: the gate's sanitizer sample does not run")
    sample = matrix.gate_sanitize_cases({planted.stage.name: planted.stage})
    assert {matrix.placement_class(c) for c in sample} == set(matrix.GATE_SANITIZE_CLASSES)
    with pytest.raises(failures.SanitizerFinding) as found:
        sanitize.run([c.id for c in sample], "memcheck", [], required=False, lookup="suites.gpu._planted_reads")
    return sample, str(found.value)


@pytest.mark.slow
@pytest.mark.timeout(canary.TIMEOUT_S + 30)
def test_the_gates_memcheck_sample_catches_a_read_before_an_offset_operand():
    """The default command's sample of a stage that reads the element before A wherever A's base
    is one element past a 16-byte boundary: its first offset case fails, named."""
    sample, found = _gate_sample_under_memcheck(HEAD_UNDERREAD)
    offset = next(c for c in sample if matrix.placement_class(c) == "offset")
    assert found.startswith(f"{offset.id}: memcheck: out-of-bounds read"), found
    assert "before the start of operand a" in found and "operand b" not in found.split("\n")[0]


@pytest.mark.slow
@pytest.mark.timeout(canary.TIMEOUT_S + 30)
def test_the_gates_memcheck_sample_catches_a_narrow_type_read_through_its_word():
    """A stage reading each A element through its aligned 32-bit word: the sample's offset class
    at a 1-byte width shows the word before A (at 4 or 8 bytes it is exact)."""
    sample, found = _gate_sample_under_memcheck(WORD_READ)
    narrow = next(c for c in sample if matrix.placement_class(c) == "offset" and c.dtype.bytes == 1)
    assert found.startswith(f"{narrow.id}: memcheck: out-of-bounds read"), found
    assert "operand a" in found.split("\n")[0]
