"""Kernels of your own, put through the harness:

    python3 -m pytest suites -m compile --arch sm_90a --stage-module examples.my_stages -k my_   # no GPU
    python3 -m pytest suites -m "gpu or bench" --require-gpu --stage-module examples.my_stages -k my_

``register`` adds a stage to the matrix (ids ``my_add-<dtype>-<align>-<layout>-MxN``); its
domain says which shapes it handles (``my_add``: all of them below 2**31 elements, thanks to the
bounds check; past that its flat Int32 index wraps; an empty tensor would be an empty grid).
"""

import cuda.bindings.driver as cuda
import cutlass.cute as cute

from fixtures.dsl.kernels import register, vectorized

THREADS = 256


@cute.kernel
def _add_kernel(gA: cute.Tensor, gB: cute.Tensor, gC: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    bidx, _, _ = cute.arch.block_idx()
    i = bidx * THREADS + tidx
    m, n = gC.shape
    if i < m * n:
        gC[i // n, i % n] = gA[i // n, i % n] + gB[i // n, i % n]


def _int32_index(m: int, n: int, dtype) -> str | None:
    """The domain of a kernel indexing elements by a flat Int32: fewer than 2**31 of them, and at
    least one (these launch an empty grid for an empty tensor, which CUDA rejects)."""
    if m * n == 0:
        return f"{m}x{n} is empty: the grid would be empty, which CUDA rejects"
    if m * n >= 2**31:
        return f"{m * n} elements: the flat Int32 index wraps past 2**31"
    return None


@register("my_add", op="add", domain=_int32_index)
@cute.jit
def my_add(mA: cute.Tensor, mB: cute.Tensor, mC: cute.Tensor, stream: cuda.CUstream):
    m, n = mC.shape
    _add_kernel(mA, mB, mC).launch(grid=((m * n + THREADS - 1) // THREADS, 1, 1), block=(THREADS, 1, 1), stream=stream)


def _whole_vectors(m: int, n: int, dtype) -> str | None:
    """The domain of a kernel without a bounds check: whole 16-byte vectors, whole blocks, and
    (its static offsets being Int32 in the DSL) fewer than 2**31 elements."""
    if n % dtype.vector or (m * n // dtype.vector) % THREADS:
        return f"{m}x{n} is not whole {dtype.vector}-element vectors in whole {THREADS}-thread blocks"
    return _int32_index(m, n, dtype)


# A kernel that means to move 16 bytes per access, saying so: the compile tier then asserts that
# its PTX does wherever the layout proves 16-byte alignment, and never goes wider than proven.
# (The tutorial's vectorized kernel, registered under a name of its own for brevity.)
register("my_vec_add", op="add", domain=_whole_vectors, vector_bytes=16, bench_layouts=("compact", "static"))(
    vectorized.vectorized_elementwise_add
)
