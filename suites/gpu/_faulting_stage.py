"""A deliberately faulting kernel: it writes one element 2**40 elements past its output,
an illegal address on any GPU, which poisons the process's CUDA context."""

import cuda.bindings.driver as cuda
import cutlass.cute as cute

WILD_OFFSET = 1 << 40


@cute.kernel
def _wild_write_kernel(gA: cute.Tensor, gC: cute.Tensor):
    far = cute.make_tensor(gC.iterator + WILD_OFFSET, gC.layout)
    far[0, 0] = gA[0, 0]


@cute.jit
def wild_write(mA: cute.Tensor, mB: cute.Tensor, mC: cute.Tensor, stream: cuda.CUstream):
    _wild_write_kernel(mA, mC).launch(grid=(1, 1, 1), block=(1, 1, 1), stream=stream)
