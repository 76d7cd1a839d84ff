"""The GPU tier's checks, run on CPU tensors: each deviation is caught and named precisely."""

import operator
import pathlib
import re
import subprocess
import sys

import pytest
import torch

from fixtures.cases import failures
from fixtures.cases.dtypes import DTYPES
from fixtures.cases.ops import MUL_RELU
from fixtures.cases.tolerance import EXACT, tolerance
from fixtures.dsl import checks, fill, tensors

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
    with pytest.raises(failures.Mismatch, match=r"case-x: 2 of 12 elements differ from torch \(exactly\); first at \(1, 2\): got 7.0, expected 6.0"):
        checks.check_values("case-x", got, expected, EXACT)


@pytest.mark.parametrize(("flat", "shape"), [(0, (1,)), (7, (3, 4)), (59, (3, 4, 5)), (2**33 + 5, (2**20, 2**14)),
                                            (2**31, (1, 2**32)), (119, (2, 3, 4, 5))])
def test_a_flat_index_names_the_element_torch_would(flat, shape):
    assert checks._index(flat, shape) == tuple(int(i) for i in torch.unravel_index(torch.tensor(flat), shape))


def test_naming_a_mismatch_imports_nothing_heavy(tmp_path):
    """A process's first mismatch (an xfail's too) is named without importing sympy, which
    ``torch.unravel_index`` does on its first call (up to 2 s in an H100 worker)."""
    code = ("import sys, torch\n"
            "from fixtures.cases.tolerance import EXACT\n"
            "from fixtures.dsl import checks\n"
            "expected = torch.zeros(3, 4)\n"
            "try:\n"
            "    checks.check_values('c', expected + 1, expected, EXACT)\n"
            "except Exception as exc:\n"
            "    print(exc)\n"
            "print('sympy' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=pathlib.Path(__file__).parents[1]).stdout.splitlines()
    assert "first at (0, 0)" in out[0] and out[-1] == "False"


def test_values_within_tolerance_pass_and_beyond_fail():
    tol = tolerance("fp16", exact_op=False)
    expected = torch.ones(8, dtype=torch.float16)
    checks.check_values("c", expected * (1 + tol.rtol / 2), expected, tol)
    with pytest.raises(failures.Mismatch, match="within rtol"):
        checks.check_values("c", expected * 1.01, expected, tol)


@pytest.mark.parametrize(
    ("got", "dtype", "at"),
    [
        pytest.param(torch.tensor([[1.0, 0.0], [2.0, 3.0]]), "fp32", (0, 1), id="float"),
        pytest.param(torch.tensor([[1, 2], [0, 4]], dtype=torch.int8), "i8", (1, 0), id="int"),
    ],
)
def test_unwritten_elements_are_named(got, dtype, at):
    expected = got.clone()
    poison = fill.poison_for(DTYPES[dtype], expected)
    poison.fill(got[at])
    with pytest.raises(failures.Unwritten, match=rf"1 of 4 output elements were never written; first at \({at[0]}, {at[1]}\)"):
        checks.check_written("c", got, poison, expected)


@pytest.mark.parametrize("mask", [
    pytest.param(torch.rand(37, 11) > 0.5, id="rows"),
    pytest.param((torch.rand(11, 37) > 0.5).t(), id="column-major"),
    pytest.param(torch.rand(401) > 0.5, id="flat"),
    pytest.param(torch.zeros(5, 0, dtype=torch.bool), id="empty"),
])
def test_a_mask_is_counted_a_block_at_a_time_to_the_last_block(mask, monkeypatch):
    """A block of 3 rows (or 40 elements): every block counted, the short last one too."""
    monkeypatch.setattr(checks, "BLOCK_ELEMENTS", 40)
    assert len(checks.row_blocks(mask.shape)) > 1 or mask.numel() == 0
    assert checks.count_true(mask) == int(mask.sum())


def test_an_unwritten_element_in_the_last_block_is_counted(monkeypatch):
    monkeypatch.setattr(checks, "BLOCK_ELEMENTS", 8)
    expected = torch.ones(5, 4)
    got = expected.clone()
    poison = fill.poison_for(DTYPES["fp32"], expected)
    poison.fill(got[4, 3])
    with pytest.raises(failures.Unwritten, match=r"1 of 20 output elements were never written; first at \(4, 3\)"):
        checks.check_written("c", got, poison, expected)


def test_a_computed_nan_is_not_the_float_poison():
    got = torch.tensor([float("nan"), 1.0], dtype=torch.float16)
    checks.check_written("c", got, fill.poison_for(DTYPES["fp16"], None), got)


def test_integer_poison_avoids_every_expected_value():
    expected = torch.arange(-128, 0, dtype=torch.int8)
    poison = fill.poison_for(DTYPES["i8"], expected)
    assert poison.pattern == 0
    checks.check_written("c", expected.clone(), poison, expected)


def test_integer_poison_avoids_values_in_every_block_and_past_its_candidates(monkeypatch):
    """Blocks of 3 rows: a value taken only in the short last block still counts, and values past
    the candidates (the type's max, -1 of a 64-bit type) take none of them."""
    monkeypatch.setattr(checks, "BLOCK_ELEMENTS", 6)
    low = torch.iinfo(torch.int32).min
    expected = torch.full((7, 2), torch.iinfo(torch.int32).max, dtype=torch.int32)
    expected[0, 0], expected[6, 1] = low, low + 1  # the first block, the last
    assert fill.poison_for(DTYPES["i32"], expected).pattern == low + 2
    assert fill.poison_for(DTYPES["i32"], expected[:6]).pattern == low + 1


def test_an_element_expected_to_equal_the_poison_is_never_flagged():
    expected = torch.arange(0, 256, dtype=torch.int32).to(torch.uint8)  # every u8 value: no poison is free
    poison = fill.poison_for(DTYPES["u8"], expected)
    checks.check_written("c", expected.clone(), poison, expected)


def _mismatch(got, expected, a, b, op=operator.add, tol=EXACT) -> str:
    with pytest.raises(failures.Mismatch) as raised:
        checks.check_values("case", got, expected, tol, checks.Operands(a, b, op))
    return str(raised.value)


def _fp16(*values) -> torch.Tensor:
    return torch.tensor(values, dtype=torch.float64).to(torch.float16).reshape(1, -1)


SUB = 2.0**-24  # the smallest fp16 subnormal


@pytest.mark.parametrize(
    ("a", "b", "got", "message"),
    [
        pytest.param((1.0, -0.0), (2.0, -0.0), (3.0, 0.0), r"first at \(0, 1\): a=-0.0, b=-0.0: got \+0.0, expected -0.0 \(signed zero\)", id="signed-zero"),
        pytest.param((1.0, float("nan")), (2.0, 1.0), (3.0, 0.0), r"a=nan, b=1.0: got \+0.0, expected nan \(nan\)", id="nan-lost"),
        pytest.param((1.0, 65504.0), (2.0, 65504.0), (3.0, 65504.0), r"a=65504.0, b=65504.0 \(fp16 overflow\): got 65504.0, expected inf", id="overflow"),
        pytest.param((1.0, float("inf")), (2.0, -1.0), (3.0, float("-inf")), r"got -inf, expected inf \(inf\)", id="inf-sign"),
        pytest.param((1.0, SUB), (2.0, 0.0), (3.0, 0.0), r"a=5.96\d*e-08, b=\+0.0: got \+0.0, expected 5.96\d*e-08 \(subnormal\)", id="flushed"),
        pytest.param((1.0, 1.0), (2.0, 2.0**-11), (3.0, 1.0009765625), r"got 1.0009765625, expected 1.0 \(rounding tie\)", id="tie"),
    ],
)
def test_a_mismatch_names_its_value_class(a, b, got, message):
    a, b, got = _fp16(*a), _fp16(*b), _fp16(*got)
    assert re.search(message, _mismatch(got, a + b, a, b)), _mismatch(got, a + b, a, b)


def test_an_integer_that_saturates_instead_of_wrapping_is_an_overflow():
    a = b = torch.tensor([[1, 100]], dtype=torch.int8)
    got = torch.tensor([[2, 127]], dtype=torch.int8)
    message = _mismatch(got, a + b, a, b)
    assert "first at (0, 1): a=100, b=100 (i8 overflow): got 127, expected -56; by class: i8 overflow 1" in message


def test_nan_matches_nan_whatever_its_payload():
    expected = _fp16(float("nan"), 1.0)
    got = expected.clone()
    got.view(torch.int16)[0, 0] = 0x7FFF  # the GPU's canonical NaN; torch's is 0x7E00
    checks.check_values("c", got, expected, EXACT)


def test_within_a_tolerance_specials_must_still_match():
    tol = tolerance("fp16", exact_op=False)
    expected = _fp16(1.0, float("nan"), float("inf"), -0.0, SUB)
    checks.check_values("c", _fp16(1.0005, float("nan"), float("inf"), -0.0, 0.0), expected, tol)
    for wrong in (_fp16(1.0, 0.0, float("inf"), -0.0, 0.0), _fp16(1.0, float("nan"), 65504.0, -0.0, 0.0), _fp16(1.0, float("nan"), float("inf"), 0.0, 0.0)):
        with pytest.raises(failures.Mismatch, match="within rtol"):
            checks.check_values("c", wrong, expected, tol)


def test_mul_relu_reference_is_the_op_as_defined():
    """``where(x > 0, x, 0)``: NaN and -0.0 become +0, unlike torch.relu's NaN."""
    a, b = _fp16(float("nan"), -1.0, 2.0), _fp16(1.0, 0.0, 3.0)
    assert checks.bits(MUL_RELU.reference(a, b)).tolist() == checks.bits(_fp16(0.0, 0.0, 6.0)).tolist()


def test_untouched_buffer_passes():
    checks.check_untouched("c", "c", _placed(), SENTINEL)


@pytest.mark.parametrize("shape", [(0, 0), (0, 5), (5, 0)], ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("offset", [0, 1], ids=["at-boundary", "offset"])
def test_an_empty_unguarded_buffer_passes(shape, offset):
    """The sanitizer's placements end with their tensor: an empty one's buffer may hold no byte
    (a 0x0 case with an offset A under memcheck once failed here, reshaping 0 bytes)."""
    placed = tensors.place(shape, (shape[1], 1), torch.float16, offset, "cpu", guarded=False)
    placed.buffer.view(torch.uint8).fill_(0xA5)
    checks.check_untouched("empty", "a", placed, SENTINEL)


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
    with pytest.raises(failures.OutOfBoundsWrite, match=message):
        checks.check_untouched("case-y", "c", placed, SENTINEL)


def test_broadcast_view_covers_only_its_one_row():
    """A stride-0 input's buffer holds one row; the rows it repeats are not 'outside'."""
    placed = tensors.place((1, 5), (0, 1), torch.float16, 0, "cpu")
    placed.view = placed.view.expand(3, 5)
    outside = checks.outside_view(placed)
    assert int((~outside).sum()) == 5
