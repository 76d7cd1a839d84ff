"""The value plan and where the fill puts it, on CPU tensors: every case meets its dtype's edge
pairs at its corners, row ends and interior, the same ones for the same seed."""

import pytest
import torch

from fixtures.cases import matrix
from fixtures.cases.matrix import Case
from fixtures.cases.dtypes import DTYPES
from fixtures.cases.stages import BUILT_IN_STAGES
from fixtures.cases.values import EDGE_PAIRS, FLOAT_POISON
from fixtures.dsl import checks, fill, tensors

pytestmark = pytest.mark.harness


def _as(values, dtype) -> torch.Tensor:
    wide = torch.float64 if dtype.is_float else torch.int64
    return torch.tensor(values, dtype=wide).to(dtype.torch)


@pytest.mark.parametrize("dtype", DTYPES.values(), ids=lambda d: d.id)
def test_every_planned_value_is_exact_in_its_type(dtype):
    for pair in EDGE_PAIRS[dtype.id]:
        planned = torch.tensor([pair.a, pair.b], dtype=torch.float64)
        stored = _as([pair.a, pair.b], dtype).double()
        assert torch.equal(stored.isnan(), planned.isnan()) and bool(((stored == planned) | planned.isnan()).all()), pair
        assert pair.reason, pair


@pytest.mark.parametrize("dtype", ("fp16", "bf16", "fp32", "fp64", "e5m2"))
def test_float_plans_hold_every_special_value(dtype):
    info = torch.finfo(DTYPES[dtype].torch)
    values = [v for p in EDGE_PAIRS[dtype] for v in (p.a, p.b)]
    bits = checks.bits(_as(values, DTYPES[dtype])).tolist()
    for special in (0.0, -0.0, float("inf"), float("-inf"), info.tiny * info.eps, info.tiny - info.tiny * info.eps, info.max):
        assert checks.bits(_as([special], DTYPES[dtype])).item() in bits, special
    assert any(v != v for v in values)


@pytest.mark.parametrize("dtype", ("i8", "i32", "u8"))
def test_integer_plans_wrap_on_add_and_on_mul(dtype):
    dt = DTYPES[dtype]
    info = torch.iinfo(dt.torch)
    a, b = (torch.tensor([getattr(p, side) for p in EDGE_PAIRS[dtype]]) for side in "ab")
    assert {info.min, info.max, 0, 1} <= set(a.tolist()) | set(b.tolist())
    for exact in (a + b, a * b):
        assert bool(((exact > info.max) | (exact < info.min)).any()), dtype


def test_e4m3_has_no_infinity_in_its_plan():
    assert all(abs(v) != float("inf") for p in EDGE_PAIRS["e4m3"] for v in (p.a, p.b))


def test_float_poisons_are_nans_no_arithmetic_writes():
    for dtype_id, pattern in FLOAT_POISON.items():
        poison = torch.tensor([pattern]).to(checks.bits(torch.empty(1, dtype=DTYPES[dtype_id].torch)).dtype)
        value = poison.view(DTYPES[dtype_id].torch)
        assert value.double().isnan().all(), dtype_id
        assert checks.bits(torch.tensor([float("nan")], dtype=DTYPES[dtype_id].torch)).item() != poison.item()


def _filled(dtype: str, layout: str, shape, seed: int = 5):
    case = matrix.Case(BUILT_IN_STAGES["predicated"], DTYPES[dtype], "natural", layout, shape, "values")
    placed = tensors.place_operands(case, "cpu")
    fill.fill_inputs(placed["a"], placed["b"], case.dtype, seed)
    return placed["a"].view, placed["b"].view


def _pair_hits(a, b, dtype: str) -> list[torch.Tensor]:
    dt = DTYPES[dtype]
    return [
        (checks.bits(a) == checks.bits(_as([p.a], dt))) & (checks.bits(b) == checks.bits(_as([p.b], dt)))
        for p in EDGE_PAIRS[dtype]
    ]


@pytest.mark.parametrize("layout", ("static", "colmajor", "strided", "bcast"))
@pytest.mark.parametrize("dtype", ("fp16", "i8", "u8", "fp64"))
@pytest.mark.parametrize("shape", ((97, 101), (1, 4096), (4096, 1), (64, 1003)), ids=lambda s: f"{s[0]}x{s[1]}")
def test_every_pair_meets_a_case_with_room_for_it(dtype, layout, shape):
    a, b = _filled(dtype, layout, shape)
    hits = _pair_hits(a, b, dtype)
    room = shape[1] if layout == "bcast" else shape[0] * shape[1]  # a broadcast b has one value per column
    met = sum(bool(h.any()) for h in hits)
    assert met == min(room, len(hits))


@pytest.mark.parametrize("layout", ("static", "colmajor", "bcast"))
def test_corners_and_row_ends_hold_edge_pairs(layout):
    a, b = _filled("fp32", layout, (97, 101))
    anywhere = torch.stack(_pair_hits(a, b, "fp32")).any(0)
    corners = [(0, 0), (0, 100), (96, 0), (96, 100)]
    if layout != "bcast":  # the broadcast b keeps one position per column
        assert all(bool(anywhere[c]) for c in corners)
    assert int(anywhere[:, 0].sum()) >= 1 and int(anywhere[:, 100].sum()) >= 1
    rows_with_ends = (anywhere[:, 0] | anywhere[:, -1]).sum()
    assert int(rows_with_ends) >= (1 if layout == "bcast" else 4)
    assert int(anywhere[1:-1, 1:-1].sum()) >= 1  # interior tiles too


def test_a_broadcast_b_meets_its_partner_in_every_row():
    a, b = _filled("fp16", "bcast", (97, 101))
    assert b.stride(0) == 0
    hits = _pair_hits(a, b, "fp16")
    assert all(bool(h.any()) for h in hits)


def test_the_same_seed_places_the_same_values_and_another_seed_moves_them():
    first, again, other = (_filled("bf16", "static", (128, 2048), seed) for seed in (7, 7, 8))
    assert all(torch.equal(checks.bits(x), checks.bits(y)) for x, y in zip(first, again))
    assert not torch.equal(checks.bits(first[0]), checks.bits(other[0]))


@pytest.mark.parametrize("layout", ("static", "bcast"))
def test_a_single_element_gets_the_pair_its_seed_picks(layout):
    picked = {
        next(i for i, h in enumerate(_pair_hits(*_filled("fp32", layout, (1, 1), seed), "fp32")) if bool(h.any()))
        for seed in range(len(EDGE_PAIRS["fp32"]))
    }
    assert picked == set(range(len(EDGE_PAIRS["fp32"])))


def test_in_place_operands_share_one_placement_and_broadcasts_are_stored_once():
    """``c_is_a``: C is A's very tensor (one buffer, one guard band); a column broadcast is an
    (M, 1) column expanded, stride (1, 0)."""
    case = Case(BUILT_IN_STAGES["predicated"], DTYPES["fp16"], "align16", "static", (97, 101), "odd",
                ("rowmajor", "colbcast", "rowmajor"), alias="c_is_a")
    placed = tensors.place_operands(case, "cpu")
    assert placed["c"] is placed["a"]
    assert placed["b"].view.stride() == (1, 0) and placed["b"].distinct().shape == (97, 1)


def test_an_in_place_output_counts_as_unwritten_where_it_still_holds_its_input():
    """The poison of an output that starts as an input is that input: an element the kernel never
    wrote still holds it, unless the expected result equals it (then nothing can tell)."""
    before = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float16)
    prior = fill.Prior(before)
    got = torch.tensor([5.0, 2.0, 3.0], dtype=torch.float16)  # element 1 and 2 never written
    expected = torch.tensor([5.0, 7.0, 3.0], dtype=torch.float16)  # element 2's result equals its input
    assert (prior.held_by(got) & ~prior.held_by(expected)).tolist() == [False, True, False]


def test_a_layout_the_dsl_refuses_reaches_pytest_without_the_dsls_frames():
    """``mark_compact_shape_dynamic`` refuses a tensor with no columns; repr() of the tensor it
    refused segfaults (4.3-4.8), and pytest shows every frame's arguments: the refusal must come
    back as a RuntimeError of the harness's own frame, its DSL context suppressed."""
    import traceback

    case = matrix.case_from_id("naive-fp16-align16-compact-128x0")
    with pytest.raises(RuntimeError, match="stride_order") as caught:
        tensors.to_cute(case, torch.empty((128, 0), dtype=torch.float16), "a")
    frames = traceback.extract_tb(caught.value.__traceback__)
    assert [f.name for f in frames][-1] == "to_cute" and caught.value.__suppress_context__
