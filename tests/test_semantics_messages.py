"""What a semantics failure says, each on a planted wrong value (the reference's own results,
altered; no kernel runs): a reduction's element by its profile and the row or column it reduces, a
broadcast's by row and column, and a case whose known limitation no longer shows by what the
release computed, not only the limitation's text (a strict xfail passing would say just that)."""

import pytest

from fixtures.cases import releases
from fixtures.cases import semantics as sem
from fixtures.cases.failures import LimitationGone, Mismatch

pytestmark = pytest.mark.harness


def _planted(case_id: str, *changes):
    """The case's operands, its reference, and the reference with ``(output, index, value)`` planted."""
    from fixtures.dsl import semantics as run

    case = sem.case_by_id(case_id)
    ops = run.operands(case)
    expected = run.reference(case, ops)
    tensors = [t.clone() for t in expected]
    for output, index, value in changes:
        tensors[output][index] = value
    return case, ops, run.Outputs(tensors), expected


def test_a_reduction_names_the_profile_and_the_row_or_column():
    from fixtures.dsl import semantics as run

    case, ops, got, expected = _planted("semantics-reduce_add-i32", (1, 2, 1000), (2, 5, -1000), (0, 0, 7))
    with pytest.raises(Mismatch) as raised:
        run.check_against_reference(case, "host", ops, got, expected)
    message = str(raised.value)
    assert message.startswith("`a.reduce(cute.ReductionOp.ADD, init, reduction_profile=profile)` on Int32, host: 3 of 13 elements")
    assert "reduction_profile=0 (the whole tensor): got 7, expected " in message
    assert f"reduction_profile=(None, 1) (row 2): got 1000, expected {expected[1][2].item()}" in message
    assert f"reduction_profile=(1, None) (column 5): got -1000, expected {expected[2][5].item()}" in message


def test_a_broadcast_names_row_and_column_and_their_operands():
    from fixtures.dsl import semantics as run

    case, ops, got, expected = _planted("semantics-broadcast_add-f32", (0, (1, 3), 99.0))
    with pytest.raises(Mismatch, match=r"at \(row 1, column 3\): a=2.0, b=3.0: got 99.0, expected 5.0"):
        run.check_against_reference(case, "host", ops, got, expected)


@pytest.mark.skipif(not releases.matches(">=4.8"), reason="abs of an unsigned type is 4.8's limitation")
def test_a_limitation_that_no_longer_shows_says_what_the_release_computed():
    """abs(a) on Uint8 is a known wrong result (abs(255) is 1): a release computing 255 is red with its values."""
    from fixtures.dsl import semantics as run

    case, ops, got, expected = _planted("semantics-abs-u8")
    with pytest.raises(LimitationGone) as raised:
        run.judge(case, [], lambda: run.check_against_reference(case, "host", ops, got, expected), path="host", ops=ops, got=got)
    message = str(raised.value)
    assert message.startswith("`abs(a)` on Uint8, host: the known limitation no longer shows (\"abs(a) on an unsigned integer")
    assert f"this release ({releases.installed()}) computed a=0 -> 0; a=255 -> 255" in message
    assert "narrow its release range (>=4.8)" in message
    run.judge(case, [], path="host")  # no outputs to tell: nothing more to say
