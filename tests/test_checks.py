"""The GPU tier's checks, run on CPU tensors: each deviation is caught and named precisely."""

import pytest
import torch

from fixtures import checks, tensors
from fixtures.tolerance import EXACT, tolerance

pytestmark = pytest.mark.harness

SENTINEL = torch.full((2,), 0xA5, dtype=torch.uint8)


def _placed(shape=(4, 6), strides=(7, 1)) -> tensors.Placed:
    placed = tensors.place(shape, strides, torch.float16, 0, "cpu")
    placed.buffer.view(torch.uint8).fill_(0xA5)
    placed.view.fill_(1.0)
    return placed


def test_values_mismatch_names_first_index_values_and_count():
    expected = torch.arange(12, dtype=torch.float32).reshape(3, 4)
    got = expected.clone()
    got[1, 2] += 1
    got[2, 0] = float("nan")
    with pytest.raises(checks.Mismatch, match=r"case-x: 2 of 12 elements differ from torch \(exactly\); first at \(1, 2\): got 7.0, expected 6.0"):
        checks.check_values("case-x", got, expected, EXACT)


def test_values_within_tolerance_pass_and_beyond_fail():
    tol = tolerance("fp16", exact_op=False)
    expected = torch.ones(8, dtype=torch.float16)
    checks.check_values("c", expected * (1 + tol.rtol / 2), expected, tol)
    with pytest.raises(checks.Mismatch, match="within rtol"):
        checks.check_values("c", expected * 1.01, expected, tol)


@pytest.mark.parametrize(
    ("got", "poison", "at"),
    [
        pytest.param(torch.tensor([[1.0, float("nan")], [2.0, 3.0]]), float("nan"), r"\(0, 1\)", id="nan-float"),
        pytest.param(torch.tensor([[1, 2], [-128, 4]], dtype=torch.int8), -128, r"\(1, 0\)", id="sentinel-int"),
    ],
)
def test_unwritten_elements_are_named(got, poison, at):
    with pytest.raises(checks.Unwritten, match=rf"1 of 4 output elements were never written; first at {at}"):
        checks.check_written("c", got, poison)


def test_untouched_buffer_passes():
    checks.check_untouched("c", "c", _placed(), SENTINEL)


@pytest.mark.parametrize(
    ("where", "offset", "message"),
    [
        pytest.param("front", -3, "front guard band, 3 elements before the tensor", id="front"),
        pytest.param("back", 2, "back guard band, 2 elements past the tensor's end", id="back"),
        pytest.param("gap", 6, "a gap between rows, element offset 6", id="row-gap"),
    ],
)
def test_writes_outside_the_view_name_the_band(where, offset, message):
    placed = _placed()
    start, end = placed.front.stop, placed.back.start
    index = {"front": start + offset, "back": end + offset, "gap": start + offset}[where]
    placed.buffer[index] = 2.0
    with pytest.raises(checks.OutOfBoundsWrite, match=message):
        checks.check_untouched("case-y", "c", placed, SENTINEL)


def test_broadcast_view_covers_only_its_one_row():
    """A stride-0 input's buffer holds one row; the rows it repeats are not 'outside'."""
    placed = tensors.place((1, 5), (0, 1), torch.float16, 0, "cpu")
    placed.view = placed.view.expand(3, 5)
    outside = checks.outside_view(placed)
    assert int((~outside).sum()) == 5
