"""Launch shapes for a plain elementwise add, each beside torch.add on the very same operand
buffers: the sweep behind the ``tuned`` stage's shape (docs/bandwidth.md, "What a launch costs").

    python3 -m pytest suites/bench/test_tuned_vs_torch.py -m bench --require-gpu \\
        --stage-module examples.tuned_sweep --bandwidth-baseline none

Each variant ``sweep_{grid}_t{T}_b{B}_r{R}_k{K}`` is a block of T x B threads over a (B*R, K*T*V)
tile (V elements in 16 bytes): T threads side by side along a row, B such rows of threads, and
every thread loads R rows x K vectors of each input, its K vectors T vectors apart along the row,
before it adds. Tiles are walked row-first, by a 2-D grid (``2d``: blockIdx.x along N,
blockIdx.y along M; the tuned stage's kernel over the variant's tiling), by the tutorial's remap
of a 1-D grid (``rm``: a composition that costs integer divisions by the dynamic tile counts
before the first load), or by the 2-D grid as a programmatic dependent launch (``pdl``: a block
may start while the kernel before it finishes, and waits for it before its first load; what the
gaps between launches cost), or by a 2-D grid of at most C blocks (``gsC``: C // tiles along N
block rows, each striding over the row tiles; what starting and retiring blocks costs).
Unpredicated, so each variant's domain is the shapes its tile divides.
"""

import cuda.bindings.driver as cuda
import cutlass
import cutlass.cute as cute

from fixtures.cases.geometry import MAX_GRID_Y, VECTOR_BYTES
from fixtures.dsl.kernels import register
from fixtures.dsl.kernels._tiling import remap_blocks
from fixtures.dsl.kernels.tuned import row_tiling, tuned_add_kernel

# (grid, threads along a row, rows of threads, rows per thread, strided vectors per thread)
VARIANTS = (
    ("rm", 128, 1, 1, 1), ("rm", 256, 1, 1, 1),
    ("2d", 64, 1, 1, 1), ("2d", 128, 1, 1, 1), ("2d", 256, 1, 1, 1), ("2d", 512, 1, 1, 1), ("2d", 1024, 1, 1, 1),
    ("2d", 128, 1, 1, 2), ("2d", 256, 1, 1, 2), ("2d", 128, 1, 2, 1),
    ("2d", 64, 4, 1, 1), ("2d", 128, 2, 1, 1), ("2d", 128, 4, 1, 1), ("2d", 128, 8, 1, 1),
    ("2d", 256, 2, 1, 1), ("2d", 256, 4, 1, 1),
    ("2d", 64, 4, 1, 2), ("2d", 128, 2, 1, 2), ("2d", 128, 4, 1, 2), ("2d", 256, 4, 1, 2),
    ("pdl", 128, 1, 1, 1), ("pdl", 256, 1, 1, 1), ("pdl", 256, 4, 1, 1),
    ("gs2112", 128, 1, 1, 1), ("gs2112", 128, 1, 1, 2), ("gs4224", 128, 1, 1, 1), ("gs4224", 128, 1, 1, 2),
    ("gs8448", 128, 1, 1, 2), ("gs1056", 256, 1, 1, 1), ("gs2112", 256, 1, 1, 1),
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


@cute.kernel
def _dependent_kernel(gA: cute.Tensor, gB: cute.Tensor, gC: cute.Tensor, tv_layout: cute.Layout):
    """The 2-D kernel for a programmatic dependent launch: its blocks may start while the
    previous kernel on the stream finishes, wait for it before the first load, and let the next
    launch start once their loads are issued."""
    tidx, _, _ = cute.arch.thread_idx()
    bidx, bidy, _ = cute.arch.block_idx()
    blk = ((None, None), (bidy, bidx))
    thr = (tidx, None)
    cute.arch.griddepcontrol_wait()
    a = cute.composition(gA[blk], tv_layout)[thr].load()
    b = cute.composition(gB[blk], tv_layout)[thr].load()
    cute.arch.griddepcontrol_launch_dependents()
    cute.composition(gC[blk], tv_layout)[thr].store(a + b)


@cute.kernel
def _grid_stride_kernel(gA: cute.Tensor, gB: cute.Tensor, gC: cute.Tensor, tv_layout: cute.Layout):
    """The 2-D kernel with fewer row blocks than row tiles: block row y adds tile rows y,
    y + gridDim.y, ... (fewer blocks to start and retire for the same bytes)."""
    tidx, _, _ = cute.arch.thread_idx()
    bidx, bidy, _ = cute.arch.block_idx()
    _, grid_rows, _ = cute.arch.grid_dim()
    thr = (tidx, None)
    for row in cutlass.range(bidy, cute.size(gC, mode=[1, 0]), grid_rows):
        blk = ((None, None), (row, bidx))
        a = cute.composition(gA[blk], tv_layout)[thr].load()
        b = cute.composition(gB[blk], tv_layout)[thr].load()
        cute.composition(gC[blk], tv_layout)[thr].store(a + b)


def _variant(grid: str, threads: int, block_rows: int, rows: int, strided: int):
    tile_m = block_rows * rows

    @cute.jit
    def launch(mA: cute.Tensor, mB: cute.Tensor, mC: cute.Tensor, stream: cuda.CUstream):
        vector = VECTOR_BYTES * 8 // mA.element_type.width
        tiler, tv_layout = row_tiling(vector, threads, block_rows, rows, strided)
        block = [threads * block_rows, 1, 1]
        if cutlass.const_expr(grid == "rm"):
            gA, gB, gC = (remap_blocks(cute.zipped_divide(t, tiler)) for t in (mA, mB, mC))
            _remapped_kernel(gA, gB, gC, tv_layout).launch(grid=[cute.size(gC, mode=[1]), 1, 1], block=block, stream=stream)
        else:
            gA, gB, gC = (cute.zipped_divide(t, tiler) for t in (mA, mB, mC))
            tiles_m, tiles_n = gC.shape[1]
            if cutlass.const_expr(grid.startswith("gs")):
                grid_rows = cutlass.min(tiles_m, cutlass.max(int(grid[2:]) // tiles_n, 1))
                _grid_stride_kernel(gA, gB, gC, tv_layout).launch(grid=[tiles_n, grid_rows, 1], block=block, stream=stream)
            elif cutlass.const_expr(grid == "pdl"):
                _dependent_kernel(gA, gB, gC, tv_layout).launch(
                    grid=[tiles_n, tiles_m, 1], block=block, stream=stream, use_pdl=True
                )
            else:
                tuned_add_kernel(gA, gB, gC, tv_layout).launch(grid=[tiles_n, tiles_m, 1], block=block, stream=stream)

    def domain(m: int, n: int, dtype) -> str | None:
        tile_n = strided * threads * dtype.vector
        if m % tile_m or n % tile_n:
            return f"{m}x{n} is not a multiple of the ({tile_m},{tile_n}) tile and nothing is predicated"
        if grid in ("2d", "pdl") and m // tile_m > MAX_GRID_Y:
            return f"{m // tile_m} row tiles exceed the grid's y extent ({MAX_GRID_Y})"
        return None

    return launch, domain


for _g, _t, _b, _r, _k in VARIANTS:
    _launch, _domain = _variant(_g, _t, _b, _r, _k)
    register(f"sweep_{_g}_t{_t}_b{_b}_r{_r}_k{_k}", op="add", domain=_domain, vector_bytes=16)(_launch)
