"""Deliberately wrong kernels, one per input class the plan gained: each is exact on every case
the plan drew before (operands laid out alike, out of place, below 32-bit limits) and wrong only
on its class, as a kernel author's ordinary bug would be. ``test_planted_classes.py``,
``test_planted_large.py`` and ``test_planted_empty.py`` prove the harness catches each one there
and nowhere else; where a class came with issue 48 (layout triples, large tensors laid out
otherwise, empty tensors laid out otherwise), the cases that catch it are the gpu plan's own.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

import cuda.bindings.driver as cuda
import cutlass
import cutlass.cute as cute

from fixtures.cases import limitations, matrix
from fixtures.cases.geometry import VECTOR_BYTES
from fixtures.cases.matrix import Case
from fixtures.cases.ops import ADD
from fixtures.cases.stages import Stage, with_registered
from fixtures.dsl.kernels import bind

THREADS = 256


@cute.kernel
def _add_kernel(gA: cute.Tensor, gB: cute.Tensor, gC: cute.Tensor):
    """One thread per element, by logical coordinate, bounds-checked: any shape, any layout, up
    to 2**31 elements (the flat index is Int32)."""
    tidx, _, _ = cute.arch.thread_idx()
    bidx, _, _ = cute.arch.block_idx()
    i = bidx * THREADS + tidx
    m, n = gC.shape
    if i < m * n:
        gC[i // n, i % n] = gA[i // n, i % n] + gB[i // n, i % n]


@cute.kernel
def _copy_kernel(gX: cute.Tensor, gC: cute.Tensor):
    tidx, _, _ = cute.arch.thread_idx()
    bidx, _, _ = cute.arch.block_idx()
    i = bidx * THREADS + tidx
    m, n = gC.shape
    if i < m * n:
        gC[i // n, i % n] = gX[i // n, i % n]


def _grid(mC: cute.Tensor):
    m, n = mC.shape
    return ((m * n + THREADS - 1) // THREADS, 1, 1)


@cute.jit
def a_through_c_layout(mA: cute.Tensor, mB: cute.Tensor, mC: cute.Tensor, stream: cuda.CUstream):
    """Reads A through C's layout ("the operands are laid out alike"): right whenever they are."""
    gA = cute.make_tensor(mA.iterator, mC.layout)
    _add_kernel(gA, mB, mC).launch(grid=_grid(mC), block=(THREADS, 1, 1), stream=stream)


@cute.jit
def staged_in_output(mA: cute.Tensor, mB: cute.Tensor, mC: cute.Tensor, stream: cuda.CUstream):
    """Copies A into C, then adds B into C in place (two launches): exact out of place and when C
    is A, wrong when C is B (B is overwritten before it is read)."""
    _copy_kernel(mA, mC).launch(grid=_grid(mC), block=(THREADS, 1, 1), stream=stream)
    _add_kernel(mC, mB, mC).launch(grid=_grid(mC), block=(THREADS, 1, 1), stream=stream)


@cute.jit
def flat_int32_index(mA: cute.Tensor, mB: cute.Tensor, mC: cute.Tensor, stream: cuda.CUstream):
    """A flat Int32 element index: it wraps past 2**31 elements."""
    _add_kernel(mA, mB, mC).launch(grid=_grid(mC), block=(THREADS, 1, 1), stream=stream)


@cute.kernel
def _row_kernel(gA: cute.Tensor, gB: cute.Tensor, gC: cute.Tensor):
    """Row ``blockIdx.y``, columns ``blockIdx.x * THREADS + threadIdx.x``."""
    tidx, _, _ = cute.arch.thread_idx()
    bidx, bidy, _ = cute.arch.block_idx()
    j = bidx * THREADS + tidx
    if j < gC.shape[1]:
        gC[bidy, j] = gA[bidy, j] + gB[bidy, j]


@cute.jit
def rows_on_grid_y(mA: cute.Tensor, mB: cute.Tensor, mC: cute.Tensor, stream: cuda.CUstream):
    """Rows on ``gridDim.y``, which caps at 65,535."""
    m, n = mC.shape
    _row_kernel(mA, mB, mC).launch(grid=((n + THREADS - 1) // THREADS, m, 1), block=(THREADS, 1, 1), stream=stream)


@cute.kernel
def _first_element_peeled_kernel(gA: cute.Tensor, gB: cute.Tensor, gC: cute.Tensor):
    """Element (0, 0) by thread 0 unchecked ("every tensor has a first element"), the rest one
    thread each, bounds-checked."""
    tidx, _, _ = cute.arch.thread_idx()
    bidx, _, _ = cute.arch.block_idx()
    i = bidx * THREADS + tidx
    m, n = gC.shape
    if i == 0:
        gC[0, 0] = gA[0, 0] + gB[0, 0]
    if i > 0:
        if i < m * n:
            gC[i // n, i % n] = gA[i // n, i % n] + gB[i // n, i % n]


@cute.jit
def first_element_peeled(mA: cute.Tensor, mB: cute.Tensor, mC: cute.Tensor, stream: cuda.CUstream):
    """One block more than the whole blocks (never an empty grid), and element (0, 0) written
    unchecked: exact on every tensor that has one, a write past an empty one."""
    m, n = mC.shape
    _first_element_peeled_kernel(mA, mB, mC).launch(grid=(m * n // THREADS + 1, 1, 1), block=(THREADS, 1, 1), stream=stream)


def _all(*conditions):
    """1 where every condition holds, else 0, as an Int32 a kernel can branch on: a static layout's
    conditions are Python bools, a dynamic one's are decided at run time."""
    flag = cutlass.Int32(1)
    for condition in conditions:
        flag = flag * cutlass.Int32(condition)
    return flag


@cute.kernel
def _compact_c_kernel(gA: cute.Tensor, gB: cute.Tensor, gC: cute.Tensor, compact_c: cutlass.Int32):
    """One thread per element; with ``compact_c``, C written through a compact row-major view of
    its memory."""
    tidx, _, _ = cute.arch.thread_idx()
    bidx, _, _ = cute.arch.block_idx()
    i = bidx * THREADS + tidx
    m, n = gC.shape
    if i < m * n:
        value = gA[i // n, i % n] + gB[i // n, i % n]
        if compact_c != 0:
            flat = cute.make_tensor(gC.iterator, cute.make_layout(m * n))
            flat[i] = value
        else:
            gC[i // n, i % n] = value


@cute.jit
def keyed_on_three_layouts(mA: cute.Tensor, mB: cute.Tensor, mC: cute.Tensor, stream: cuda.CUstream):
    """A bias-add fast path, taken when A is row-major and claimed 16-byte aligned, B a row
    broadcast and C's rows contiguous, writing C as if it were compact: exact wherever C is
    compact (or one row), wrong on a C whose rows have a pitch. One (A, B, C) layout triple."""
    m, n = mC.shape
    fast = _all(mA.stride[0] == n, mA.stride[1] == 1, mA.iterator.alignment >= 16,
                mB.stride[0] == 0, mB.stride[1] == 1, mC.stride[1] == 1)
    _compact_c_kernel(mA, mB, mC, fast).launch(grid=_grid(mC), block=(THREADS, 1, 1), stream=stream)


def _element(t: cute.Tensor, offset):
    """The one-element tensor ``offset`` elements past ``t``'s first (pointer arithmetic in ``offset``'s width)."""
    return cute.make_tensor(t.iterator + offset, cute.make_layout(1))


@cute.kernel
def _contiguous_or_int32_kernel(gA: cute.Tensor, gB: cute.Tensor, gC: cute.Tensor, contiguous: cutlass.Int32):
    """A 64-bit flat index; with ``contiguous`` the elements by coordinate (64-bit), else each
    operand's offset ``row * row_stride + col * col_stride`` in Int32, skipped where it comes out
    negative (a defensive bounds check): past 2**31 elements those are never written."""
    tidx, _, _ = cute.arch.thread_idx()
    bidx, _, _ = cute.arch.block_idx()
    i = cutlass.Int64(bidx) * THREADS + tidx
    m, n = gC.shape
    if i < cutlass.Int64(m) * n:
        row, col = i // n, i % n
        if contiguous != 0:
            gC[row, col] = gA[row, col] + gB[row, col]
        else:
            row32, col32 = cutlass.Int32(row), cutlass.Int32(col)
            a, b, c = (row32 * cutlass.Int32(t.stride[0]) + col32 * cutlass.Int32(t.stride[1]) for t in (gA, gB, gC))
            if a >= 0:
                if b >= 0:
                    if c >= 0:
                        out = _element(gC, c)
                        out[0] = _element(gA, a)[0] + _element(gB, b)[0]


@cute.jit
def int32_off_the_contiguous_path(mA: cute.Tensor, mB: cute.Tensor, mC: cute.Tensor, stream: cuda.CUstream):
    """64-bit safe where every operand is compact row-major (the path such a kernel is tested
    on), Int32 offsets anywhere else: exact below 2**31 elements in every layout."""
    m, n = mC.shape
    contiguous = _all(*(t.stride[0] == n for t in (mA, mB, mC)), *(t.stride[1] == 1 for t in (mA, mB, mC)))
    blocks = cutlass.Int32((cutlass.Int64(m) * n + THREADS - 1) // THREADS)
    _contiguous_or_int32_kernel(mA, mB, mC, contiguous).launch(grid=(blocks, 1, 1), block=(THREADS, 1, 1), stream=stream)


@cute.kernel
def _column_walk_kernel(gA: cute.Tensor, gB: cute.Tensor, gC: cute.Tensor):
    """One thread per column, down all of its rows."""
    tidx, _, _ = cute.arch.thread_idx()
    bidx, _, _ = cute.arch.block_idx()
    j = bidx * THREADS + tidx
    m, n = gC.shape
    if j < n:
        for i in cutlass.range(m):
            gC[i, j] = gA[i, j] + gB[i, j]


@cute.jit
def transposing_path(mA: cute.Tensor, mB: cute.Tensor, mC: cute.Tensor, stream: cuda.CUstream):
    """An A read down its columns (its rows not contiguous) with C's rows contiguous takes a
    transposing path, one thread per column, its grid from N alone; anything else one thread per
    element, launched only when there is one. Exact on every tensor with a column; an empty grid,
    which CUDA rejects, on such operands with none."""
    m, n = mC.shape
    transposing = _all(mA.stride[1] != 1, mC.stride[1] == 1)
    if transposing != 0:
        _column_walk_kernel(mA, mB, mC).launch(grid=((n + THREADS - 1) // THREADS, 1, 1), block=(THREADS, 1, 1), stream=stream)
    elif m * n > 0:
        _add_kernel(mA, mB, mC).launch(grid=_grid(mC), block=(THREADS, 1, 1), stream=stream)


@dataclass(frozen=True)
class PlantedClass:
    """A wrong stage, the id word of the class it is wrong on (for a planted read, the kind the
    sanitizer names), cases of that class where it must be caught (the rest must pass), and
    where it is wrong as a rule over cases (``shows``: held against ``caught`` and ``passes``,
    which the GPU proves, by ``tests/test_planted_in_plan.py``, and what a sample must keep)."""

    stage: Stage
    word: str
    caught: tuple[str, ...]  # ids, with ``{stage}`` for the stage's name
    passes: tuple[str, ...]
    shows: Callable[[Case], bool]

    def cases(self, ids: tuple[str, ...]) -> list[Case]:
        """The cases ``ids`` name, run by this stage."""
        return [dataclasses.replace(matrix.case_from_id(i.format(stage="naive")), stage=self.stage) for i in ids]


def _differs(case: Case, x: str, y: str) -> bool:
    """Whether operands ``x`` and ``y`` place some element of a non-empty case apart (their strides
    differ on a mode longer than one)."""
    (m, n), sx, sy = case.shape, case.strides(x), case.strides(y)
    return m * n > 0 and ((m > 1 and sx[0] != sy[0]) or (n > 1 and sx[1] != sy[1]))


def _row_major(case: Case, op: str) -> bool:
    return case.strides(op) == (case.shape[1], 1)


def _planted(name: str, launch) -> Stage:
    return bind(Stage(f"planted_{name}", ADD), launch)


# the cases the plan drew before (laid out alike, out of place), every layout once, odd shapes among them
BEFORE = (
    "{stage}-fp16-align16-static-128x2048",
    "{stage}-bf16-natural-dynamic-97x101",
    "{stage}-fp32-align16-compact-1x4096",
    "{stage}-i8-natural-colmajor-64x1003",
    "{stage}-fp64-offset-strided-4096x1",
    "{stage}-u8-natural-bcast-97x101",
)


def in_gpu_plan(stage: Stage, wanted) -> tuple[str, ...]:
    """The ids (``{stage}`` for the stage's name) of the gpu plan's cases of ``stage`` that
    ``wanted`` picks: what a run with the stage registered draws, so such a planted defect is
    caught by the plan, not by a case written for it."""
    return tuple(
        case.id.replace(stage.name, "{stage}", 1)
        for case in matrix.cases("gpu", with_registered([stage]))
        if case.stage is stage and wanted(case)
    )


def _operands(case: Case) -> tuple[str, str, str]:
    return tuple(case.operand_layout(op) for op in "abc")


PLANTED_CLASSES = (
    PlantedClass(
        _planted("a_through_c_layout", a_through_c_layout),
        "a_colmajor",
        caught=("{stage}-fp16-align16-static-a_colmajor-128x2048", "{stage}-i32-natural-dynamic-a_colmajor-97x101"),
        passes=BEFORE + ("{stage}-fp16-align16-static-b_colmajor-128x2048", "{stage}-fp16-align16-static-c_is_b-97x101"),
        shows=lambda case: _differs(case, "a", "c"),
    ),
    PlantedClass(
        _planted("staged_in_output", staged_in_output),
        "c_is_b",
        caught=("{stage}-fp16-align16-static-c_is_b-97x101", "{stage}-i32-natural-dynamic-c_is_b-1000x1003"),
        passes=BEFORE + ("{stage}-fp16-align16-static-c_is_a-97x101", "{stage}-fp16-align16-static-a_is_b-97x101",
                         "{stage}-bf16-align16-dynamic-a_colmajor-b_rowbcast-c_strided-97x101"),
        shows=lambda case: case.alias == "c_is_b" and 0 not in case.shape,
    ),
)

# the one (A, B, C) layout triple the fast path gets wrong: A row-major, B a row broadcast, C strided
KEYED_TRIPLE = ("rowmajor", "rowbcast", "strided")
_KEYED = _planted("keyed_on_three_layouts", keyed_on_three_layouts)
PLANTED_TRIPLE = PlantedClass(
    _KEYED, "b_rowbcast-c_strided",
    caught=in_gpu_plan(_KEYED, lambda case: _operands(case) == KEYED_TRIPLE),
    # every pair of the triple met before (the strength-2 design drew them), and the triples beside it
    passes=BEFORE + ("{stage}-fp16-align16-bcast-97x101", "{stage}-fp16-align16-static-a_offset-b_rowbcast-c_strided-97x101",
                     "{stage}-bf16-align16-dynamic-b_colbcast-c_strided-1000x1003", "{stage}-i32-align16-dynamic-b_rowbcast-c_offset-97x101",
                     "{stage}-fp32-align16-static-a_strided-b_rowbcast-c_strided-64x1003", "{stage}-i8-align16-static-b_rowbcast-c_strided-1x4096"),
    shows=lambda case: (_operands(case) == KEYED_TRIPLE and case.shape[0] > 1 and case.shape[1] > 0
                        and case.assumed_align("a") == VECTOR_BYTES),
)

# past the 32-bit limits: the word is the large shape that crosses each one
_INT32_OFF_CONTIGUOUS = _planted("int32_off_the_contiguous_path", int32_off_the_contiguous_path)
PLANTED_LARGE = (
    PlantedClass(_planted("flat_int32_index", flat_int32_index), "32832x65536",
                 caught=("{stage}-i8-align16-static-32832x65536",), passes=BEFORE,
                 shows=lambda case: case.shape[0] * case.shape[1] > 2**31 - 1),
    PlantedClass(_planted("rows_on_grid_y", rows_on_grid_y), "65600x1024",
                 caught=("{stage}-fp16-align16-static-65600x1024",), passes=BEFORE,
                 shows=lambda case: case.shape[0] > 65535 and case.shape[1] > 0),
    # caught by the plan's large cases laid out otherwise; exact on its row-major and in-place ones
    PlantedClass(_INT32_OFF_CONTIGUOUS, "32832x65536",
                 caught=in_gpu_plan(_INT32_OFF_CONTIGUOUS, lambda case: case.shape == matrix.HUGE and case.operands),
                 passes=BEFORE + in_gpu_plan(_INT32_OFF_CONTIGUOUS, lambda case: case.shape == matrix.HUGE
                                             and not case.operands and case.dtype.id != "fp32"),
                 shows=lambda case: (not all(_row_major(case, op) for op in "abc")
                                     and any(matrix.stored_elements(case, op) > 2**31 for op in "abc"))),
)

# empty tensors (a dynamic layout: a static empty one is refused before launch by most kernels);
# an empty tensor's pointer is null (torch's data_ptr and its DLPack capsule), so the write faults
PLANTED_EMPTY = PlantedClass(
    _planted("first_element_peeled", first_element_peeled), "empty",
    caught=("{stage}-fp16-align16-dynamic-0x2048",),  # one: each costs a fault, and faults take turns
    passes=BEFORE + ("{stage}-fp16-align16-dynamic-1x1",),
    shows=lambda case: 0 in case.shape and case.mode != "static",
)


def _transposing_without_columns(case: Case) -> bool:
    """An empty case the transposing path takes with no column: A's rows not contiguous, C's are."""
    return case.shape[1] == 0 and case.strides("a")[1] != 1 and case.strides("c")[1] == 1


# empty tensors laid out otherwise: caught by the plan's empty cases of its class, in process (CUDA
# refuses the empty grid at launch); exact on the empty cases the plan drew before
_TRANSPOSING = _planted("transposing_path", transposing_path)
PLANTED_EMPTY_LAYOUTS = PlantedClass(
    _TRANSPOSING, "empty",
    caught=in_gpu_plan(_TRANSPOSING, lambda case: case.family == "empty" and _transposing_without_columns(case)),
    passes=BEFORE + ("{stage}-fp16-align16-dynamic-a_colmajor-b_rowbcast-97x101", "{stage}-bf16-align16-static-a_colbcast-c_strided-1000x1003")
    + in_gpu_plan(_TRANSPOSING, lambda case: case.family == "empty" and case.dtype.id == "fp16"
                  and not (case.operands or case.alias) and not limitations.known(case, "gpu")),
    shows=_transposing_without_columns,
)


def find(case_id: str, planted: tuple[PlantedClass, ...]) -> Case:
    """The case ``case_id`` names among the cases of ``planted`` (how a child process finds one)."""
    for p in planted:
        for case in p.cases(p.caught + p.passes):
            if case.id == case_id:
                return case
    raise LookupError(f"no planted case {case_id}")


def planted_case(case_id: str) -> Case:
    """The planted stage's case ``case_id`` names, from any of the planted classes."""
    return find(case_id, (*PLANTED_CLASSES, PLANTED_TRIPLE, *PLANTED_LARGE, PLANTED_EMPTY, PLANTED_EMPTY_LAYOUTS))
