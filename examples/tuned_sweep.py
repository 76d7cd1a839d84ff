"""Launch shapes for a plain elementwise add, put side by side in the bench tier: the sweep
behind the ``tuned`` stage's shape (README, "What a launch costs").

    python3 -m pytest suites/bench -m bench --require-gpu --stage-module examples.tuned_sweep \\
        -k "(sweep_ or tuned or torch_add) and (fp16 or bf16 or fp32 or i8 or u8)" --bandwidth-baseline none

Each variant ``sweep_{grid}_t{T}_r{R}_k{K}`` is a block of T threads over a (R, K*T*V) tile (V
elements in 16 bytes): every thread loads R rows x K vectors of each input, its K vectors T vectors
apart along the row, before it adds. Tiles are walked row-first, by a 2-D grid (``2d``: blockIdx.x
along N, blockIdx.y along M) or by the tutorial's remap of a 1-D grid (``rm``: a composition that
costs integer divisions by the dynamic tile counts before the first load). The 2-D variants run
the tuned stage's kernel over their own tiling. Unpredicated, so each variant's domain is the
shapes its tile divides.
"""

import cuda.bindings.driver as cuda
import cutlass
import cutlass.cute as cute

from fixtures.cases.geometry import MAX_GRID_Y, VECTOR_BYTES
from fixtures.dsl.kernels import register
from fixtures.dsl.kernels._tiling import remap_blocks
from fixtures.dsl.kernels.tuned import tuned_add_kernel

# (grid, threads, rows, strided vectors per thread)
VARIANTS = (
    ("rm", 128, 1, 1), ("rm", 256, 1, 1),
    ("2d", 64, 1, 1), ("2d", 128, 1, 1), ("2d", 256, 1, 1), ("2d", 512, 1, 1), ("2d", 1024, 1, 1),
    ("2d", 128, 1, 2), ("2d", 256, 1, 2), ("2d", 128, 2, 1),
)


@cute.kernel
def _remapped_kernel(gA: cute.Tensor, gB: cute.Tensor, gC: cute.Tensor, tv_layout: cute.Layout):
    tidx, _, _ = cute.arch.thread_idx()
    bidx, _, _ = cute.arch.block_idx()
    blk = ((None, None), bidx)
    thr = (tidx, None)
    a = cute.composition(gA[blk], tv_layout)[thr].load()
    b = cute.composition(gB[blk], tv_layout)[thr].load()
    cute.composition(gC[blk], tv_layout)[thr].store(a + b)


def _variant(grid: str, threads: int, rows: int, strided: int):
    @cute.jit
    def launch(mA: cute.Tensor, mB: cute.Tensor, mC: cute.Tensor, stream: cuda.CUstream):
        vector = VECTOR_BYTES * 8 // mA.element_type.width
        # tile coordinates are column-major: (row r, column c) is r + c * rows
        tv_layout = cute.make_layout(
            (threads, (vector, strided, rows)), stride=(vector * rows, (rows, threads * vector * rows, 1))
        )
        tiler = (rows, strided * threads * vector)
        if cutlass.const_expr(grid == "rm"):
            gA, gB, gC = (remap_blocks(cute.zipped_divide(t, tiler)) for t in (mA, mB, mC))
            _remapped_kernel(gA, gB, gC, tv_layout).launch(
                grid=[cute.size(gC, mode=[1]), 1, 1], block=[threads, 1, 1], stream=stream
            )
        else:
            gA, gB, gC = (cute.zipped_divide(t, tiler) for t in (mA, mB, mC))
            tiles_m, tiles_n = gC.shape[1]
            tuned_add_kernel(gA, gB, gC, tv_layout).launch(grid=[tiles_n, tiles_m, 1], block=[threads, 1, 1], stream=stream)

    def domain(m: int, n: int, dtype) -> str | None:
        tile_n = strided * threads * dtype.vector
        if m % rows or n % tile_n:
            return f"{m}x{n} is not a multiple of the ({rows},{tile_n}) tile and nothing is predicated"
        if grid == "2d" and m // rows > MAX_GRID_Y:
            return f"{m // rows} row tiles exceed the grid's y extent ({MAX_GRID_Y})"
        return None

    return launch, domain


for _g, _t, _r, _k in VARIANTS:
    _launch, _domain = _variant(_g, _t, _r, _k)
    register(f"sweep_{_g}_t{_t}_r{_r}_k{_k}", op="add", domain=_domain, vector_bytes=16)(_launch)
