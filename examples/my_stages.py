"""A kernel of your own, put through the whole gpu plan:

    python3 -m pytest -m gpu --stage-module examples.my_stages -k my_add

``register`` adds the stage to the matrix (ids ``my_add-<dtype>-<align>-<layout>-MxN``); its
domain says which shapes it handles (here: all of them, thanks to the bounds check).
"""

import cuda.bindings.driver as cuda
import cutlass.cute as cute

from fixtures.dsl.kernels import register

THREADS = 256


@cute.kernel
def _add_kernel(gA: cute.Tensor, gB: cute.Tensor, gC: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    bidx, _, _ = cute.arch.block_idx()
    i = bidx * THREADS + tidx
    m, n = gC.shape
    if i < m * n:
        gC[i // n, i % n] = gA[i // n, i % n] + gB[i // n, i % n]


@register("my_add", op="add")
@cute.jit
def my_add(mA: cute.Tensor, mB: cute.Tensor, mC: cute.Tensor, stream: cuda.CUstream):
    m, n = mC.shape
    _add_kernel(mA, mB, mC).launch(grid=((m * n + THREADS - 1) // THREADS, 1, 1), block=(THREADS, 1, 1), stream=stream)
