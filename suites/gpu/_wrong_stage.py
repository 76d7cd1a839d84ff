"""A deliberately wrong user kernel: it subtracts where it should add."""

import cuda.bindings.driver as cuda
import cutlass.cute as cute


@cute.kernel
def _subtract_kernel(gA: cute.Tensor, gB: cute.Tensor, gC: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    bidx, _, _ = cute.arch.block_idx()
    i = bidx * 128 + tidx
    m, n = gC.shape
    if i < m * n:
        gC[i // n, i % n] = gA[i // n, i % n] - gB[i // n, i % n]


@cute.jit
def subtracts_instead_of_adding(mA: cute.Tensor, mB: cute.Tensor, mC: cute.Tensor, stream: cuda.CUstream):
    m, n = mC.shape
    _subtract_kernel(mA, mB, mC).launch(grid=((m * n + 127) // 128, 1, 1), block=(128, 1, 1), stream=stream)
