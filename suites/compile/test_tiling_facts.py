"""Compile-time facts the tutorial's host code computes, traced for every dtype.

The tutorial's code comment says the fp16 tile is (64,512); its prose walks through a
smaller (16,256) example with a different TV layout. Both are checked here, each for what
it is: the code's tiler and TV layout per dtype, and the prose example's composition.
"""

import cutlass
import cutlass.cute as cute
import pytest

from fixtures.cases.dtypes import DTYPES
from fixtures.cases.geometry import tuned_tile, tv_layout_text, tv_tile
from fixtures.dsl import compat
from fixtures.dsl.capture import stdout_fd
from fixtures.dsl.kernels._tiling import tv_tiling
from fixtures.dsl.kernels.tuned import tuned_tiling

pytestmark = pytest.mark.compile


@cute.jit
def describe_tiling(dtype: cutlass.Constexpr):
    tiler_mn, tv_layout = tv_tiling(dtype)
    print(f"tiler={tiler_mn}")
    print(f"tv={tv_layout}")


@cute.jit
def prose_example():
    block = cute.make_layout((16, 256), stride=(512, 1))
    tv_layout = cute.make_layout(((32, 4), (8, 4)), stride=((128, 4), (16, 1)))
    print(f"composed={cute.composition(block, tv_layout)}")


def _traced(fn, *args) -> dict[str, str]:
    with stdout_fd() as out:
        compat.compile_traced(fn, *args)
    return dict(line.split("=", 1) for line in out.lines if "=" in line)


@pytest.mark.parametrize("dtype", DTYPES.values(), ids=lambda d: d.id)
def test_tutorial_tiler_and_tv_layout(dtype):
    facts = _traced(describe_tiling, dtype.cutlass_type())
    tile_m, tile_n = tv_tile(dtype.bytes)
    assert facts["tiler"].replace(" ", "") == f"({tile_m},{tile_n})"
    assert facts["tv"] == tv_layout_text(dtype.bytes)


@cute.jit
def describe_tuned_tiling(dtype: cutlass.Constexpr):
    tiler_mn, _ = tuned_tiling(dtype)
    print(f"tiler={tiler_mn}")


@pytest.mark.parametrize("dtype", DTYPES.values(), ids=lambda d: d.id)
def test_tuned_tiler(dtype):
    """The tuned stage's tile is the one its domain and guard bands are derived from."""
    tile_m, tile_n = tuned_tile(dtype.bytes)
    assert _traced(describe_tuned_tiling, dtype.cutlass_type())["tiler"].replace(" ", "") == f"({tile_m},{tile_n})"


def test_fp16_tile_is_the_code_comments_64x512():
    """The code's own comment, not the prose's (16,256) walk-through."""
    facts = _traced(describe_tiling, cutlass.Float16)
    assert facts["tiler"].replace(" ", "") == "(64,512)"
    assert facts["tv"] == "((64,4),(8,16)):((512,16),(64,1))"


def test_prose_example_composition():
    """The prose's (16,256) tile composed with its TV layout gives the per-thread view it draws."""
    assert _traced(prose_example)["composed"] == "((32,4),(8,4)):((8,2048),(1,512))"
