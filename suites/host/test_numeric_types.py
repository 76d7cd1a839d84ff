"""Numeric types from ``data_types.ipynb``: static vs dynamic printing, ``.to()``, operators.

Values are read from ``cute.printf`` lines. Expected text is the notebook's recorded output, or
for operators the notebook does not show, Python's integer semantics (wrapped to 32 bits).
"""

from __future__ import annotations

import functools
import math

import _jit_examples as jx
import cutlass
import pytest

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
