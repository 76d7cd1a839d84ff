"""Deliberately wrong kernels, one per input class the plan gained: each is exact on every case
the plan drew before (operands laid out alike, out of place, below 32-bit limits) and wrong only
on its class, as a kernel author's ordinary bug would be. ``test_planted_classes.py``,
``test_planted_large.py`` and ``test_planted_empty.py`` prove the harness catches each one there
and nowhere else.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import cuda.bindings.driver as cuda
import cutlass.cute as cute

from fixtures.cases import matrix
from fixtures.cases.matrix import Case
from fixtures.cases.ops import ADD
from fixtures.cases.stages import Stage
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


@dataclass(frozen=True)
class PlantedClass:
    """A wrong stage, the id word of the class it is wrong on (for a planted read, the kind the
    sanitizer names), and cases of that class where it must be caught (the rest must pass)."""

    stage: Stage
    word: str
    caught: tuple[str, ...]  # ids, with ``{stage}`` for the stage's name
    passes: tuple[str, ...]

    def cases(self, ids: tuple[str, ...]) -> list[Case]:
        """The cases ``ids`` name, run by this stage."""
        return [dataclasses.replace(matrix.case_from_id(i.format(stage="naive")), stage=self.stage) for i in ids]


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

PLANTED_CLASSES = (
    PlantedClass(
        _planted("a_through_c_layout", a_through_c_layout),
        "a_colmajor",
        caught=("{stage}-fp16-align16-static-a_colmajor-128x2048", "{stage}-i32-natural-dynamic-a_colmajor-97x101"),
        passes=BEFORE + ("{stage}-fp16-align16-static-b_colmajor-128x2048", "{stage}-fp16-align16-static-c_is_b-97x101"),
    ),
    PlantedClass(
        _planted("staged_in_output", staged_in_output),
        "c_is_b",
        caught=("{stage}-fp16-align16-static-c_is_b-97x101", "{stage}-i32-natural-dynamic-c_is_b-1000x1003"),
        passes=BEFORE + ("{stage}-fp16-align16-static-c_is_a-97x101", "{stage}-fp16-align16-static-a_is_b-97x101",
                         "{stage}-bf16-align16-dynamic-a_colmajor-b_rowbcast-c_strided-97x101"),
    ),
)

# past the 32-bit limits: the word is the large shape that crosses each one
PLANTED_LARGE = (
    PlantedClass(_planted("flat_int32_index", flat_int32_index), "32832x65536",
                 caught=("{stage}-i8-align16-static-32832x65536",), passes=BEFORE),
    PlantedClass(_planted("rows_on_grid_y", rows_on_grid_y), "65600x1024",
                 caught=("{stage}-fp16-align16-static-65600x1024",), passes=BEFORE),
)

# empty tensors (a dynamic layout: a static empty one is refused before launch by most kernels);
# an empty tensor's pointer is null (torch's data_ptr and its DLPack capsule), so the write faults
PLANTED_EMPTY = PlantedClass(
    _planted("first_element_peeled", first_element_peeled), "empty",
    caught=("{stage}-fp16-align16-dynamic-0x2048",),  # one: each costs a fault, and faults take turns
    passes=BEFORE + ("{stage}-fp16-align16-dynamic-1x1",),
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
    return find(case_id, (*PLANTED_CLASSES, *PLANTED_LARGE, PLANTED_EMPTY))
