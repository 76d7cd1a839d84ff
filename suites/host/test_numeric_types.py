"""Numeric types from ``data_types.ipynb``: static vs dynamic printing, ``.to()``, operators;
and every numeric type the DSL exports, its width, signedness and what a cast to it yields.

Values are read from ``cute.printf`` lines. Expected text is the notebook's recorded output, or
for operators the notebook does not show, Python's integer semantics (wrapped to 32 bits). The
type table (``NUMERIC_TYPES``) is written here, never read from the DSL: a release that flips a
type's sign or width, or exports a type without a row, fails.
"""

from __future__ import annotations

import functools
import importlib.metadata
import math

import _jit_examples as jx
import _semantics as sem
import cutlass
import numpy as np
import pytest
from cutlass.cute.runtime import from_dlpack

from fixtures.dsl import compat
from fixtures.dsl.capture import stdout_fd

pytestmark = pytest.mark.host


def _wrap32(v: int) -> int:
    return (v + 2**31) % 2**32 - 2**31


def _c_rem(a: int, b: int) -> int:
    """C's ``%``: truncated division's remainder, which takes the dividend's sign."""
    return int(math.fmod(a, b))


# (id, a, b, operator as printed, expected value)
INT32_OPERATORS = (
    ("add-wraps-at-int32-max", 2**31 - 1, 1, "+", _wrap32(2**31 - 1 + 1)),
    ("floordiv-negative-dividend", -7, 2, "//", -7 // 2),
    ("floordiv-negative-divisor", 7, -2, "//", 7 // -2),
    # Int32 % lowers to arith.remsi, C's remainder: -7 % 2 is -1 here where Python gives 1, so
    # a != (a // b) * b + a % b for operands of mixed sign ("//" floors like Python).
    ("mod-negative-dividend", -7, 2, "mod", _c_rem(-7, 2)),
    ("mod-negative-divisor", 7, -2, "mod", _c_rem(7, -2)),
    ("lshift", 10, 3, "<<", 10 << 3),
    ("rshift-is-arithmetic", -7, 1, ">>", -7 >> 1),
    ("or", 10, 3, "|", 10 | 3),
    ("xor", 10, 3, "^", 10 ^ 3),
)

# Lines of the notebook's "Type Conversion API" cell, plus a negative float (truncation toward
# zero, as the notebook's text says). The notebook's last line carries a trailing remark,
# "(truncated due to range limitation)", which the example module leaves out.
CONVERSIONS = (
    ("int32-to-float32", "Int32(42) => Float32(42.000000)"),
    ("float32-to-int32-truncates", "Float32(3.140000) => Int32(3)"),
    ("negative-float32-to-int32-truncates-toward-zero", f"Float32(-3.700000) => Int32({math.trunc(-3.7)})"),
    ("int32-to-int8-in-range", "Int32(127) => Int8(127)"),
    ("int32-to-int8-wraps", f"Int32(300) => Int8({(300 + 128) % 256 - 128})"),
)

# Lines of the notebook's "Operator Overloading" cell (a=Int32(10), b=Int32(3), x=Float32(5.5)).
NOTEBOOK_OPERATORS = (
    ("int-add", "a + b = 13"),
    ("float-times-python-int", "x * 2 = 11.000000"),
    ("int-plus-float-promotes", "a + x = 15.500000"),
    ("int-truediv-is-float", "a / b = 3.333333"),
    ("float-div", "x / 2.0 = 2.750000"),
    ("compare", "a > b = 1"),
    ("bitand", "a & b = 2"),
    ("negate", "-a = -10"),
    ("invert", "~a = -11"),
)


@functools.cache
def _run(example: str, *args: int) -> list[str]:
    with stdout_fd() as out:
        getattr(jx, example)(*(cutlass.Int32(a) for a in args))
    return out.lines


def test_dynamic_scalars_print_as_question_mark_at_trace_time() -> None:
    """``print`` of a dynamic scalar during tracing shows ``?``, not its value."""
    with stdout_fd() as out:
        compat.compile_traced(jx.static_vs_dynamic_scalars)
    assert out.lines == ["a(static) = ?", "b(static) = ?"]


def test_dynamic_scalars_printf_their_values(host_jit) -> None:
    """``cute.printf`` shows the run-time values (floats as ``%f``)."""
    runtime = [line for line in _run("static_vs_dynamic_scalars") if "(dynamic)" in line]
    assert runtime == ["a(dynamic) = 3.140000", "b(dynamic) = 5"]


@pytest.mark.parametrize("line", [c[1] for c in CONVERSIONS], ids=[c[0] for c in CONVERSIONS])
def test_type_conversion(line: str, host_jit) -> None:
    """``.to()`` truncates float to int and wraps int to a narrower int."""
    assert line in _run("type_conversion")


@pytest.mark.parametrize("line", [c[1] for c in NOTEBOOK_OPERATORS], ids=[c[0] for c in NOTEBOOK_OPERATORS])
def test_notebook_operator(line: str, host_jit) -> None:
    """Each operator line of the notebook's operator demo, as recorded there."""
    assert line in _run("operator_demo")


@pytest.mark.parametrize(
    ("a", "b", "op", "expected"), [c[1:] for c in INT32_OPERATORS], ids=[c[0] for c in INT32_OPERATORS]
)
def test_int32_operator_on_runtime_arguments(a: int, b: int, op: str, expected: int, host_jit) -> None:
    """Operators on Int32 arguments passed at call time (nothing constant-folded)."""
    assert f"a {op} b = {expected}" in _run("int32_operators", a, b)


# Every numeric type the DSL exports (an install may lack the newer ones): (name, .width, .signed,
# casts). signed None: a float type, on which the DSL defines no ``.signed`` (4.3.5 to 4.8.1).
# casts: (source, expected) pairs, the value ``source.to(T)`` has when run: -1, and one past the
# type's largest value wherever a 64-bit source holds it. Boolean is declared signed (width 1) and
# casts like C's bool: any nonzero value is 1.
NUMERIC_TYPES = (
    ("Boolean", 1, True, ((-1, 1), (2, 1))),
    ("Int4", 4, True, ((-1, -1), (8, -8))),
    ("Int8", 8, True, ((-1, -1), (128, -128))),
    ("Int16", 16, True, ((-1, -1), (32768, -32768))),
    ("Int32", 32, True, ((-1, -1), (2147483648, -2147483648))),
    ("Int64", 64, True, ((-1, -1), (9223372036854775808, -9223372036854775808))),
    ("Int128", 128, True, ((-1, -1),)),
    ("Uint8", 8, False, ((-1, 255), (256, 0))),
    ("Uint16", 16, False, ((-1, 65535), (65536, 0))),
    ("Uint32", 32, False, ((-1, 4294967295), (4294967296, 0))),
    ("Uint64", 64, False, ((-1, 18446744073709551615),)),
    ("Uint128", 128, False, ((-1, 340282366920938463463374607431768211455),)),
    ("Float64", 64, None, ()),
    ("Float32", 32, None, ()),
    ("TFloat32", 32, None, ()),
    ("Float16", 16, None, ()),
    ("BFloat16", 16, None, ()),
    ("Float8E4M3", 8, None, ()),
    ("Float8E4M3FN", 8, None, ()),
    ("Float8E4M3B11FNUZ", 8, None, ()),
    ("Float8E5M2", 8, None, ()),
    ("Float8E8M0FNU", 8, None, ()),
    ("FloatNV8E5M3FNU", 8, None, ()),
    ("Float6E2M3FN", 6, None, ()),
    ("Float6E3M2FN", 6, None, ()),
    ("Float4E2M1FN", 4, None, ()),
    # packed views: the width of one storage unit (two FP4 in a byte, four FP6 in 24 bits)
    ("Float4E2M1FNx2", 8, None, ()),
    ("Float6E2M3FNx4", 24, None, ()),
    ("Float6E3M2FNx4", 24, None, ()),
)
INTEGER_TYPES = tuple(row for row in NUMERIC_TYPES if row[2] is not None)


def _dsl_type(name: str):
    """``cutlass.<name>``, or a skip where this install does not export it."""
    found = getattr(cutlass, name, None)
    if found is None:
        try:
            release = importlib.metadata.version("nvidia-cutlass-dsl")
        except importlib.metadata.PackageNotFoundError:
            release = "?"
        pytest.skip(f"cutlass.{name} is not exported by this install (nvidia-cutlass-dsl {release})")
    return found


def test_every_exported_numeric_type_has_a_row() -> None:
    """A type the DSL adds gets its expected width and signedness written down, not inferred."""
    exported = {
        name
        for name in dir(cutlass)
        if isinstance(t := getattr(cutlass, name), type) and issubclass(t, cutlass.Numeric) and not t.is_abstract
    }
    missing = sorted(exported - {row[0] for row in NUMERIC_TYPES})
    assert not missing, f"cutlass exports numeric types with no row in NUMERIC_TYPES: {missing}"


@pytest.mark.parametrize(("name", "width", "signed"), [r[:3] for r in NUMERIC_TYPES], ids=[r[0] for r in NUMERIC_TYPES])
def test_numeric_type_width_and_signedness(name: str, width: int, signed: bool | None) -> None:
    """``.width`` and ``.signed`` (integers) or the absence of ``.signed`` (floats), as the table says."""
    t = _dsl_type(name)
    kind = "float" if signed is None else "integer"
    assert (t.is_integer, t.is_float) == (signed is not None, signed is None), (
        f"cutlass.{name}: expected an {kind} type, DSL gave is_integer={t.is_integer}, is_float={t.is_float}"
    )
    assert t.width == width, f"cutlass.{name}.width: expected {width}, DSL gave {t.width}"
    if signed is None:
        assert not hasattr(t, "signed"), f"cutlass.{name}: expected no .signed (a float), DSL gave {t.signed!r}"
    else:
        assert t.signed is signed, f"cutlass.{name}.signed: expected {signed}, DSL gave {t.signed!r}"


@functools.cache
def _cast_results(name: str, width: int, sources: tuple[int, ...]) -> tuple[int, ...]:
    """What ``source.to(cutlass.<name>)`` is when run, for each source, in one compile; read back
    through 64-bit halves as ``_semantics.integer_casts`` writes them, as ``width`` bits (the
    table's width, so a wrong ``.width`` shows in the values too)."""
    in_i64 = [s for s in sources if -(2**63) <= s < 2**63]
    in_u64 = [s for s in sources if s >= 2**63]
    plan = tuple(("i", in_i64.index(s)) if s in in_i64 else ("u", in_u64.index(s)) for s in sources)
    poison = np.full(len(sources), 0x5A5A5A5A5A5A5A5A, dtype=np.int64)
    lo, hi, neg = poison.copy(), poison.copy(), np.zeros(len(sources), dtype=np.bool_)
    src_i64 = np.array(in_i64 or [0], dtype=np.int64)
    src_u64 = np.array(in_u64 or [0], dtype=np.uint64)
    sem.integer_casts(*map(from_dlpack, (lo, hi, neg, src_i64, src_u64)), getattr(cutlass, name), plan)
    results = []
    for k in range(len(sources)):
        low, high, negative = int(lo[k]), int(hi[k]), bool(neg[k])
        if width < 64:
            results.append(low)
        elif width == 64:
            results.append(low if negative else low % 2**64)
        else:
            results.append((high if negative else high % 2**64) * 2**64 + low % 2**64)
    return tuple(results)


@pytest.mark.parametrize(
    ("name", "width", "casts"), [(r[0], r[1], r[3]) for r in INTEGER_TYPES], ids=[r[0] for r in INTEGER_TYPES]
)
def test_integer_cast_wraps_to_width_and_sign(name: str, width: int, casts, host_jit) -> None:
    """A cast of -1 and of the type's largest value plus one, run on runtime values: the result
    shows the type's width (what wraps) and its sign (-1 stays -1, or becomes the largest value)."""
    _dsl_type(name)
    sources = tuple(source for source, _ in casts)
    got = _cast_results(name, width, sources)
    wrong = [
        f"a cast of {source} to {name}: expected {expected}, DSL gave {value}"
        for (source, expected), value in zip(casts, got, strict=True)
        if value != expected
    ]
    assert not wrong, "; ".join(wrong)
