"""Layout algebra from ``cute_layout_algebra.ipynb``: printed forms and the layouts as functions.

Each notebook cell lives in ``_jit_examples`` and reports every layout three ways: the trace-time
``print`` (dynamic values as ``?``), the run-time ``cute.printf`` (dynamic values filled in), and
``layout(i)`` for every i. The first two are compared with the notebook's recorded output; the
third with a pure-Python evaluation of the CuTe definitions (composition, complement, divide and
product as re-indexings), which does not depend on the DSL.
"""

from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass
from typing import Callable

import _jit_examples as jx
import pytest

from fixtures.dsl import compat
from fixtures.dsl.capture import stdout_fd

pytestmark = pytest.mark.host


# --- Pure-Python layout model: a layout is a function on 0..size-1 ---------------------------


@dataclass(frozen=True)
class Fn:
    size: int
    at: Callable[[int], int]


def _flat(t) -> tuple[int, ...]:
    return (t,) if isinstance(t, int) else tuple(x for e in t for x in _flat(e))


def by_digits(sizes: dict[str, int], order: tuple[str, ...], offset: Callable[[dict], int]) -> Fn:
    """Split i colexicographically into named digits (``order``, first fastest), then map them."""

    def at(i: int) -> int:
        coord = {}
        for name in order:
            coord[name], i = i % sizes[name], i // sizes[name]
        return offset(coord)

    return Fn(math.prod(sizes[n] for n in order), at)


def layout(shape, stride) -> Fn:
    shp, std = _flat(shape), _flat(stride)
    names = tuple(str(k) for k in range(len(shp)))
    return by_digits(dict(zip(names, shp)), names, lambda c: sum(c[n] * d for n, d in zip(names, std)))


def compose(a: Fn, b: Fn) -> Fn:
    return Fn(b.size, lambda i: a.at(b.at(i)))


def concat(*modes: Fn) -> Fn:
    """The layout ``(m0, m1, ...)``: offsets of the modes add up."""
    names = tuple(str(k) for k in range(len(modes)))
    return by_digits(
        {n: m.size for n, m in zip(names, modes)}, names, lambda c: sum(m.at(c[n]) for n, m in zip(names, modes))
    )


def complement(shape, stride, cotarget: int) -> Fn:
    """CuTe's complement: the modes that fill the gaps between ``shape:stride``'s offsets up to cotarget."""
    shp, std, cur = [], [], 1
    for d, s in sorted((d, s) for s, d in zip(_flat(shape), _flat(stride)) if s != 1 and d != 0):
        shp.append(d // cur)
        std.append(cur)
        cur = s * d
    shp.append(-(-cotarget // cur))
    std.append(cur)
    return layout(tuple(shp), tuple(std))


def cosize(f: Fn) -> int:
    return max(f.at(i) for i in range(f.size)) + 1


def logical_divide(a: Fn, tile_shape, tile_stride) -> Fn:
    """``A ∘ (T, complement(T, size(A)))``: tile elements first, then the rest."""
    return compose(a, concat(layout(tile_shape, tile_stride), complement(tile_shape, tile_stride, a.size)))


def logical_product(a_shape, a_stride, b: Fn) -> Fn:
    a = layout(a_shape, a_stride)
    return concat(a, compose(complement(a_shape, a_stride, a.size * cosize(b)), b))


def divide_2d(order: tuple[str, ...]) -> Fn:
    """``(9,(4,8)):(59,(13,1))`` divided by ``(3:3, (2,4):(1,8))``, modes arranged as ``order``.

    Digits t0/r0 (tile/rest of mode 0) and t1/r1 (mode 1); each mode is an independent 1-D divide.
    """
    d0 = logical_divide(layout(9, 59), 3, 3)
    d1 = logical_divide(layout((4, 8), (13, 1)), (2, 4), (1, 8))
    sizes = {"t0": 3, "r0": d0.size // 3, "t1": 8, "r1": d1.size // 8}
    return by_digits(sizes, order, lambda c: d0.at(c["t0"] + 3 * c["r0"]) + d1.at(c["t1"] + 8 * c["r1"]))


def product_2d(order: tuple[str, ...]) -> Fn:
    """``(2,5):(5,1)`` reproduced over ``(3,4):(1,3)``; a0/a1 index A's modes, b0/b1 B's.

    Blocked puts A's digits fastest in each mode (A stays a contiguous block); raked puts B's.
    """
    a_shape, a_stride = (2, 5), (5, 1)
    a, b = layout(a_shape, a_stride), layout((3, 4), (1, 3))
    c = complement(a_shape, a_stride, a.size * cosize(b))
    sizes = {"a0": 2, "a1": 5, "b0": 3, "b1": 4}
    return by_digits(sizes, order, lambda k: a.at(k["a0"] + 2 * k["a1"]) + c.at(b.at(k["b0"] + 3 * k["b1"])))


# --- The notebook's examples ----------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    id: str
    example: str
    label: str
    print: str
    printf: str | None
    model: Callable[[], Fn] | None


CASES = (
    Case(
        "coalesce-original", "coalesce_example", "original",
        "(2,(1,6)):(1,(?,2))", "(2,(1,6)):(1,(6,2))", None,
    ),
    Case(
        "coalesce", "coalesce_example", "coalesced",
        "12:1", "12:1", lambda: layout((2, (1, 6)), (1, (6, 2))),
    ),
    Case(
        "coalesce-post-conditions", "coalesce_post_conditions", "coalesced",
        "(24,6):(4,2)", None, lambda: layout(((2, (3, 4)), (3, 2), 1), ((4, (8, 24)), (2, 6), 12)),
    ),
    Case(
        "coalesce-by-mode", "bymode_coalesce_example", "coalesced",
        "(2,6):(1,2)", None, lambda: layout((2, (1, 6)), (1, (6, 2))),
    ),
    Case(
        "composition-A", "composition_example", "A",
        "(6,2):(?,2)", "(6,2):(8,2)", None,
    ),
    Case(
        "composition", "composition_example", "R",
        "((2,2),3):((?{div=3},2),?)", "((2,2),3):((24,2),8)",
        lambda: compose(layout((6, 2), (8, 2)), layout((4, 3), (3, 1))),
    ),
    Case(
        "composition-by-mode", "bymode_composition_example", "R",
        "(3,(?,?)):(?,(?,?))", "(3,(4,2)):(59,(13,1))",
        lambda: concat(compose(layout(12, 59), layout(3, 1)), compose(layout((4, 8), (13, 1)), layout(8, 1))),
    ),
    Case(
        "logical-divide-1d", "logical_divide_1d_example", "R",
        "((2,2),(2,3)):((4,1),(2,8))", "((2,2),(2,3)):((4,1),(2,8))",
        lambda: logical_divide(layout((4, 2, 3), (2, 1, 8)), 4, 2),
    ),
    Case(
        "logical-divide-2d", "divide_2d_examples", "logical",
        "((3,3),((2,4),(2,2))):((177,59),((13,2),(26,1)))", "((3,3),((2,4),(2,2))):((177,59),((13,2),(26,1)))",
        lambda: divide_2d(("t0", "r0", "t1", "r1")),
    ),
    Case(
        "zipped-divide", "divide_2d_examples", "zipped",
        "((3,(2,4)),(3,(2,2))):((177,(13,2)),(59,(26,1)))", "((3,(2,4)),(3,(2,2))):((177,(13,2)),(59,(26,1)))",
        lambda: divide_2d(("t0", "t1", "r0", "r1")),
    ),
    Case(
        "tiled-divide", "divide_2d_examples", "tiled",
        "((3,(2,4)),3,(2,2)):((177,(13,2)),59,(26,1))", "((3,(2,4)),3,(2,2)):((177,(13,2)),59,(26,1))",
        lambda: divide_2d(("t0", "t1", "r0", "r1")),
    ),
    Case(
        "flat-divide", "divide_2d_examples", "flat",
        "(3,(2,4),3,(2,2)):(177,(13,2),59,(26,1))", "(3,(2,4),3,(2,2)):(177,(13,2),59,(26,1))",
        lambda: divide_2d(("t0", "t1", "r0", "r1")),
    ),
    Case(
        "logical-product", "logical_product_1d_example", "R",
        "((2,2),(2,3)):((4,1),(2,8))", "((2,2),(2,3)):((4,1),(2,8))",
        lambda: logical_product((2, 2), (4, 1), layout(6, 1)),
    ),
    Case(
        "blocked-product", "blocked_raked_product_example", "blocked",
        "((2,3),(5,4)):((5,10),(1,30))", "((2,3),(5,4)):((5,10),(1,30))",
        lambda: product_2d(("a0", "b0", "a1", "b1")),
    ),
    Case(
        "raked-product", "blocked_raked_product_example", "raked",
        "((3,2),(4,5)):((10,5),(30,1))", "((3,2),(4,5)):((10,5),(30,1))",
        lambda: product_2d(("b0", "a0", "b1", "a1")),
    ),
)  # fmt: skip


# --- Running the examples -------------------------------------------------------------------


@dataclass
class Report:
    prints: dict[str, str]
    printfs: dict[str, str]
    offsets: dict[str, list[int]]


_OFFSET = re.compile(r"^(\w+)\((\d+)\) = (-?\d+)$")


def _parse(text: str) -> Report:
    report = Report({}, {}, {})
    for line in text.splitlines():
        if m := _OFFSET.match(line):
            values = report.offsets.setdefault(m[1], [])
            assert int(m[2]) == len(values), f"offsets out of order: {line!r}"
            values.append(int(m[3]))
        elif line.startswith(("print ", "printf ")):
            kind, _, rest = line.partition(" ")
            label, _, value = rest.partition(": ")
            (report.prints if kind == "print" else report.printfs)[label] = value
    return report


@functools.cache
def _traced(example: str) -> Report:
    with stdout_fd() as out:
        compat.compile_traced(getattr(jx, example))
    return _parse(out.text)


@functools.cache
def _ran(example: str) -> Report:
    with stdout_fd() as out:
        getattr(jx, example)()
    return _parse(out.text)


def _params(cases):
    return pytest.mark.parametrize("case", cases, ids=[c.id for c in cases])


@_params(CASES)
def test_print_matches_notebook(case: Case) -> None:
    """Trace-time ``print`` shows static values and ``?`` (with divisibility) for dynamic ones."""
    assert _traced(case.example).prints[case.label] == case.print


@_params([c for c in CASES if c.printf is not None])
def test_printf_matches_notebook(case: Case, host_jit) -> None:
    """Run-time ``cute.printf`` fills in the dynamic values the notebook shows."""
    assert _ran(case.example).printfs[case.label] == case.printf


@_params([c for c in CASES if c.model is not None])
def test_layout_function_matches_cute_semantics(case: Case, host_jit) -> None:
    """The result maps every index to the offset the CuTe definition gives (size included)."""
    expected = case.model()
    assert _ran(case.example).offsets[case.label] == [expected.at(i) for i in range(expected.size)]
