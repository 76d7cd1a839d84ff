"""Deliberately wrong kernels that read past their tensors and compute the right values: the
guard bands never see a read, so each passes the ordinary gpu tier; under compute-sanitizer
(``--sanitize``), where each operand's allocation ends with the tensor, memcheck must name the
read. ``test_planted_reads.py`` proves both. Their over-reads are kept small (part of one vector):
one that ran a tile past its tensor would leave mapped memory and fault.
"""

from __future__ import annotations

import cuda.bindings.driver as cuda
import cutlass
import cutlass.cute as cute

from fixtures.cases.geometry import VECTOR_BYTES
from fixtures.cases.matrix import Case
from fixtures.cases.ops import ADD
from fixtures.cases.stages import Stage
from fixtures.dsl import compat
from fixtures.dsl.kernels import bind
from suites.gpu._planted_classes import PlantedClass, find

THREADS = 256


@cute.kernel
def _tail_overread_kernel(gA: cute.Tensor, gB: cute.Tensor, gC: cute.Tensor, cC: cute.Tensor, shape: cute.Shape):
    """One 16-byte vector of a row per thread, loaded whole, stored element by element where it
    lies inside the tensor: at a row's tail the load runs past the row's end."""
    tidx, _, _ = cute.arch.thread_idx()
    bidx, _, _ = cute.arch.block_idx()
    i = bidx * THREADS + tidx
    rows, vectors = gC.shape[1]
    if i < rows * vectors:
        crd = (None, (i // vectors, i % vectors))
        result = compat.make_rmem_tensor(cute.size(gC, mode=[0]), gC.element_type)
        result.store(gA[crd].load() + gB[crd].load())
        out, coords = gC[crd], cC[crd]
        for k in cutlass.range_constexpr(cute.size(gC, mode=[0])):
            if cute.elem_less(coords[k], shape):
                out[k] = result[k]


@cute.jit
def tail_overread(mA: cute.Tensor, mB: cute.Tensor, mC: cute.Tensor, stream: cuda.CUstream):
    """The tutorial's vectorized stage with a bounds check on its stores only."""
    tiler = (1, VECTOR_BYTES * 8 // mA.element_type.width)
    gA, gB, gC = (cute.zipped_divide(t, tiler) for t in (mA, mB, mC))
    cC = cute.zipped_divide(cute.make_identity_tensor(mC.shape), tiler=tiler)
    vectors = cute.size(gC, mode=[1])
    _tail_overread_kernel(gA, gB, gC, cC, mC.shape).launch(
        grid=((vectors + THREADS - 1) // THREADS, 1, 1), block=(THREADS, 1, 1), stream=stream
    )


PLANTED_READS = (
    PlantedClass(
        bind(Stage("planted_tail_overread", ADD), tail_overread),
        "out-of-bounds read",
        # a row of 101 fp16 elements ends 3 elements into its last vector
        caught=("{stage}-fp16-align16-dynamic-97x101", "{stage}-bf16-natural-static-64x1003"),
        # row-major and row-pitched only: a column-major operand's vector runs down a column
        passes=("{stage}-fp16-align16-static-128x2048", "{stage}-bf16-natural-dynamic-1000x1003",
                "{stage}-fp16-natural-strided-97x101"),
    ),
)


def planted_case(case_id: str) -> Case:
    """The planted read stage's case ``case_id`` names (how the sanitizer's child finds it)."""
    return find(case_id, PLANTED_READS)
