"""Deliberately wrong kernels that read outside their tensors and compute the right values: the
guard bands never see a read, so each passes the ordinary gpu tier; under compute-sanitizer
(``--sanitize``), which is told each operand's exact extent, memcheck must name the read, past a
tensor's end or before its first element. ``test_planted_reads.py`` proves both. Their stray
reads are kept small (part of one vector): one that ran a tile past its tensor would leave
mapped memory and fault.
"""

from __future__ import annotations

import cuda.bindings.driver as cuda
import cutlass
import cutlass.cute as cute

from fixtures.cases.geometry import VECTOR_BYTES
from fixtures.cases import matrix
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


@cute.kernel
def _head_pair_kernel(gA: cute.Tensor, gB: cute.Tensor, gC: cute.Tensor, gPair: cute.Tensor, misaligned: cutlass.Int32,
                      zero: cutlass.Int32):
    """One thread per element, by coordinate; where A's first element is misaligned, thread 0
    takes it from the aligned pair that ends with it (a vector load), lane 1 of the pair (lane 0
    where ``zero``, never 0 at run time, is not: both lanes used, so the load stays whole)."""
    tidx, _, _ = cute.arch.thread_idx()
    bidx, _, _ = cute.arch.block_idx()
    i = bidx * THREADS + tidx
    m, n = gC.shape
    if i < m * n:
        a = gA[i // n, i % n]
        if i == 0:
            if misaligned != 0:
                pair = gPair.load()
                a = pair[1].to(gA.element_type)
                if zero != 0:
                    a = pair[0].to(gA.element_type)
        gC[i // n, i % n] = a + gB[i // n, i % n]


@cute.jit
def head_underread(mA: cute.Tensor, mB: cute.Tensor, mC: cute.Tensor, stream: cuda.CUstream):
    """Reads A's first element through the aligned word (or vector) that holds it when A's base is
    one element off that alignment: the element before the tensor is read too, and dropped."""
    m, n = mC.shape
    elem = mA.element_type.width // 8
    address = mA.iterator.toint()
    misaligned = cutlass.Int32(address % (2 * elem) != 0)
    pair = cute.make_ptr(mA.element_type, address - elem, cute.AddressSpace.gmem, assumed_align=2 * elem)
    zero = cutlass.Int32(address >> 62)  # 0 for every user-space address; the compiler cannot know it
    _head_pair_kernel(mA, mB, mC, cute.make_tensor(pair, cute.make_layout(2)), misaligned, zero).launch(
        grid=((m * n + THREADS - 1) // THREADS, 1, 1), block=(THREADS, 1, 1), stream=stream
    )


@cute.kernel
def _word_read_kernel(gA: cute.Tensor, gB: cute.Tensor, gC: cute.Tensor, zero: cutlass.Int32):
    """One thread per element, by coordinate, each A element read through the aligned 32-bit word
    that holds it (all of the word's lanes loaded, lane picks dropped where ``zero``, never 0 at
    run time, is not): a word of a narrow type reaches before a view whose base is off the word's
    alignment, and past one whose end is."""
    tidx, _, _ = cute.arch.thread_idx()
    bidx, _, _ = cute.arch.block_idx()
    i = bidx * THREADS + tidx
    m, n = gC.shape
    if i < m * n:
        row, col = i // n, i % n
        lanes = max(1, 4 * 8 // gA.element_type.width)
        address = (gA.iterator + cute.crd2idx((row, col), gA.layout)).toint()
        word = cute.make_ptr(gA.element_type, address - address % 4, cute.AddressSpace.gmem, assumed_align=4)
        lanes_read = cute.make_tensor(word, cute.make_layout(lanes)).load()
        a = gA[row, col]
        if zero != 0:
            for k in cutlass.range_constexpr(lanes):
                a = a + lanes_read[k].to(gA.element_type)
        gC[row, col] = a + gB[row, col]


@cute.jit
def word_read(mA: cute.Tensor, mB: cute.Tensor, mC: cute.Tensor, stream: cuda.CUstream):
    """Reads each A element through its aligned 32-bit word (a narrow type's common trick)."""
    m, n = mC.shape
    zero = cutlass.Int32(mA.iterator.toint() >> 62)  # 0 for every user-space address; the compiler cannot know it
    _word_read_kernel(mA, mB, mC, zero).launch(
        grid=((m * n + THREADS - 1) // THREADS, 1, 1), block=(THREADS, 1, 1), stream=stream
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
        shows=lambda case: (case.shape[1] % case.dtype.vector != 0 and 0 not in case.shape
                            and all(case.strides(op)[1] == 1 for op in "abc")),
    ),
    PlantedClass(
        bind(Stage("planted_head_underread", ADD), head_underread),
        "out-of-bounds read",
        # A's base one element past a 16-byte boundary: the pair before it starts on one
        caught=("{stage}-fp16-align16-dynamic-a_offset-97x101", "{stage}-i8-offset-static-64x1003",
                "{stage}-fp64-align16-static-a_offset-c_colmajor-1000x1003"),
        # A aligned: no pair read
        passes=("{stage}-fp16-align16-static-128x2048", "{stage}-bf16-natural-dynamic-97x101",
                "{stage}-fp32-align16-dynamic-b_offset-c_offset-97x101"),
        shows=lambda case: case.base_offset("a") > 0 and 0 not in case.shape,
    ),
    PlantedClass(
        bind(Stage("planted_word_read", ADD), word_read),
        "out-of-bounds read",
        # a 1- or 2-byte A one element past a 16-byte boundary: its first word starts before it
        caught=("{stage}-i8-align16-dynamic-a_offset-b_offset-c_offset-97x101",
                "{stage}-fp16-align16-dynamic-a_offset-b_offset-c_offset-97x101"),
        # a 4-byte A, or a narrow one whose first and last words are its own
        passes=("{stage}-fp32-align16-dynamic-a_offset-b_offset-c_offset-97x101", "{stage}-i8-align16-static-128x2048",
                "{stage}-fp16-align16-dynamic-b_offset-c_offset-100x2048"),
        shows=lambda case: case.dtype.bytes < 4 and 0 not in case.shape and (
            case.base_offset("a") * case.dtype.bytes % 4 != 0
            or (case.base_offset("a") + matrix.stored_elements(case, "a")) * case.dtype.bytes % 4 != 0),
    ),
)


def planted_case(case_id: str) -> Case:
    """The planted read stage's case ``case_id`` names (how the sanitizer's child finds it): one of
    its listed cases, or any case of its stage (the gate's sanitizer sample of it)."""
    try:
        return find(case_id, PLANTED_READS)
    except LookupError:
        case = matrix.case_from_id(case_id, stages={p.stage.name: p.stage for p in PLANTED_READS})
        if case is None:
            raise
        return case
