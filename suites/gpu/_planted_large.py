"""Deliberately wrong kernels for large tensors, each a kernel author's ordinary habit: a flat
32-bit element index, and rows on ``gridDim.y`` (which caps at 65,535). Each is exact on every
shape below those limits; ``test_planted_large.py`` proves the large family catches them.
"""

from __future__ import annotations

import cuda.bindings.driver as cuda
import cutlass.cute as cute

from fixtures.cases.ops import ADD
from fixtures.cases.stages import Stage
from fixtures.dsl.kernels import bind

THREADS = 256


@cute.kernel
def _flat_kernel(gA: cute.Tensor, gB: cute.Tensor, gC: cute.Tensor):
    """One thread per element by a flat Int32 index: it wraps past 2**31 elements."""
    tidx, _, _ = cute.arch.thread_idx()
    bidx, _, _ = cute.arch.block_idx()
    i = bidx * THREADS + tidx
    m, n = gC.shape
    if i < m * n:
        gC[i // n, i % n] = gA[i // n, i % n] + gB[i // n, i % n]


@cute.jit
def flat_int32_index(mA: cute.Tensor, mB: cute.Tensor, mC: cute.Tensor, stream: cuda.CUstream):
    m, n = mC.shape
    _flat_kernel(mA, mB, mC).launch(grid=((m * n + THREADS - 1) // THREADS, 1, 1), block=(THREADS, 1, 1), stream=stream)


@cute.kernel
def _row_kernel(gA: cute.Tensor, gB: cute.Tensor, gC: cute.Tensor):
    """Row ``blockIdx.y``, columns ``blockIdx.x * THREADS + threadIdx.x``."""
    tidx, _, _ = cute.arch.thread_idx()
    bidx, bidy, _ = cute.arch.block_idx()
    j = bidx * THREADS + tidx
    m, n = gC.shape
    if j < n:
        gC[bidy, j] = gA[bidy, j] + gB[bidy, j]


@cute.jit
def rows_on_grid_y(mA: cute.Tensor, mB: cute.Tensor, mC: cute.Tensor, stream: cuda.CUstream):
    m, n = mC.shape
    _row_kernel(mA, mB, mC).launch(grid=((n + THREADS - 1) // THREADS, m, 1), block=(THREADS, 1, 1), stream=stream)


FLAT_INT32_INDEX = bind(Stage("planted_flat_int32_index", ADD), flat_int32_index)
ROWS_ON_GRID_Y = bind(Stage("planted_rows_on_grid_y", ADD), rows_on_grid_y)
