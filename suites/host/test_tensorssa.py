"""TensorSSA on host tensors (``tensorssa.ipynb``): element-wise ops, math, reductions, broadcasting;
integer arithmetic in every integer dtype, and ``cute.where``.

Inputs are numpy arrays handed over through ``from_dlpack``; results come back through
``.store()`` into numpy outputs pre-filled with values no correct result has (NaN, or the
complement of the expected result), so an output the JIT function never wrote fails. Expected
values are the notebook's recorded outputs, or numpy on fresh random data seeded per test.
"""

from __future__ import annotations

import functools
import operator
import zlib

import _jit_examples as jx
import _semantics as sem
import cutlass.cute as cute
import numpy as np
import pytest
from cutlass.cute.runtime import from_dlpack

pytestmark = pytest.mark.host

ADD, MUL, MAX, MIN = (cute.ReductionOp.ADD, cute.ReductionOp.MUL, cute.ReductionOp.MAX, cute.ReductionOp.MIN)

# Float32 element-wise binary ops against numpy. TensorSSA's float % lowers to arith.remf, C's
# fmod (sign of the dividend), not numpy's % (np.mod, sign of the divisor), so np.fmod is the
# reference; // is floor(a / b) as numpy's floor of the float32 quotient.
BINARY = (
    ("add", operator.add, np.add),
    ("sub", operator.sub, np.subtract),
    ("mul", operator.mul, np.multiply),
    ("truediv", operator.truediv, np.divide),
    ("floordiv", operator.floordiv, lambda a, b: np.floor(a / b)),
    ("mod-is-fmod", operator.mod, np.fmod),
)

# binary_op_2 in the notebook: a = [1, 1, 1] (float32) with the Python scalar 2.0 on the right.
SCALAR_RHS = (
    ("add", operator.add, 3.0),
    ("sub", operator.sub, -1.0),
    ("mul", operator.mul, 2.0),
    ("truediv", operator.truediv, 0.5),
    ("floordiv", operator.floordiv, 0.0),
    ("mod", operator.mod, 1.0),
)

# binary_op_3 in the notebook: a = [1, 2, 3], b = [2, 1, 4] (float32), bool results.
COMPARISONS = (
    ("gt", operator.gt, [False, True, False]),
    ("ge", operator.ge, [False, True, False]),
    ("lt", operator.lt, [True, False, True]),
    ("le", operator.le, [True, False, True]),
    ("eq", operator.eq, [False, False, False]),
)

# binary_op_4 in the notebook: a = [1, 2, 3], b = [2, 2, 4] (int32).
BITWISE = (
    ("xor", operator.xor, [3, 0, 7]),
    ("or", operator.or_, [3, 2, 7]),
    ("and", operator.and_, [0, 2, 0]),
)

# (id, cute.math function, numpy reference, input range)
UNARY = (
    ("sqrt", cute.math.sqrt, np.sqrt, (0.1, 100.0)),
    ("sin", cute.math.sin, np.sin, (-2 * np.pi, 2 * np.pi)),
    ("exp2", cute.math.exp2, np.exp2, (-10.0, 10.0)),
    ("log", cute.math.log, np.log, (0.1, 100.0)),
)

# reduction_op in the notebook on [[1, 2, 3], [4, 5, 6]]: (profile, init, result).
NOTEBOOK_REDUCTIONS = (
    ("all-to-scalar", 0, 0.0, [21.0]),
    ("keep-mode-0", (None, 1), 0.0, [6.0, 15.0]),
    ("keep-mode-1-init-1", (1, None), 1.0, [6.0, 8.0, 10.0]),
)

# Each op with its identity as init, over every profile of a 2-D tensor, against numpy.
# Profile mode k marked 1 is reduced: (None, 1) keeps rows (numpy axis=1), (1, None) columns.
REDUCTIONS = (
    ("max", MAX, -np.inf, np.max),
    ("min", MIN, np.inf, np.min),
    ("mul", MUL, 1.0, np.prod),
)
PROFILES = ((0, None), ((None, 1), 1), ((1, None), 0))

# Every integer dtype a numpy array hands over through dlpack (the DSL's Int8 ... Uint64); Int4 and
# the 128-bit types have no numpy dtype. Operands: every pair of the dtype's edge values (min, max,
# -1, 0, 1, ...; each taken modulo 2**bits, so -1 is the max of an unsigned dtype) and a few
# values whose products carry past the width, against numpy's wrapping arithmetic.
INTEGER_DTYPES = (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64)
INTEGER_OPS = (("add", "+", np.add), ("sub", "-", np.subtract), ("mul", "*", np.multiply))
# The wrap spelled out, before the comparison with numpy: max + 1 gives min.
ADD_WRAPS = {
    np.int8: (127, -128),
    np.int16: (32767, -32768),
    np.int32: (2147483647, -2147483648),
    np.int64: (9223372036854775807, -9223372036854775808),
    np.uint8: (255, 0),
    np.uint16: (65535, 0),
    np.uint32: (4294967295, 0),
    np.uint64: (18446744073709551615, 0),
}


@pytest.fixture
def rng(request: pytest.FixtureRequest) -> np.random.Generator:
    """Fresh random data per test, reproducible from the test's name."""
    return np.random.default_rng(zlib.crc32(request.node.name.encode()))


def _ids(table):
    return [row[0] for row in table]


def _rows(table):
    return [row[1:] for row in table]


def _nan(shape) -> np.ndarray:
    return np.full(shape, np.nan, dtype=np.float32)


def _run(fn, *args) -> None:
    fn(*(from_dlpack(a) if isinstance(a, np.ndarray) else a for a in args))


@pytest.mark.parametrize(("op", "reference"), _rows(BINARY), ids=_ids(BINARY))
def test_binary_op_matches_numpy(op, reference, rng, host_jit) -> None:
    """Tensor-tensor ops, operands of both signs, divisors kept away from zero."""
    a = rng.uniform(-8, 8, (4, 8)).astype(np.float32)
    b = (rng.uniform(0.5, 4, (4, 8)) * rng.choice([-1, 1], (4, 8))).astype(np.float32)
    res = _nan(a.shape)
    _run(jx.elementwise_binary, res, a, b, op)
    np.testing.assert_allclose(res, reference(a, b), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize(("op", "expected"), _rows(SCALAR_RHS), ids=_ids(SCALAR_RHS))
def test_scalar_rhs_matches_notebook(op, expected, host_jit) -> None:
    """A Python scalar on the right is broadcast to the tensor's shape."""
    res = _nan(3)
    _run(jx.elementwise_scalar, res, np.ones(3, dtype=np.float32), 2.0, op)
    np.testing.assert_array_equal(res, np.full(3, expected, dtype=np.float32))


@pytest.mark.parametrize(("op", "expected"), _rows(COMPARISONS), ids=_ids(COMPARISONS))
def test_comparison_matches_notebook(op, expected, host_jit) -> None:
    """Comparisons yield booleans, stored into a numpy bool array."""
    expected = np.array(expected)
    res = ~expected
    _run(jx.elementwise_binary, res, np.array([1, 2, 3], np.float32), np.array([2, 1, 4], np.float32), op)
    np.testing.assert_array_equal(res, expected)


@pytest.mark.parametrize(("op", "expected"), _rows(BITWISE), ids=_ids(BITWISE))
def test_bitwise_matches_notebook(op, expected, host_jit) -> None:
    """Bitwise ops on int32 tensors."""
    res = np.full(3, -1, dtype=np.int32)
    _run(jx.elementwise_binary, res, np.array([1, 2, 3], np.int32), np.array([2, 2, 4], np.int32), op)
    np.testing.assert_array_equal(res, np.array(expected, dtype=np.int32))


@pytest.mark.parametrize(("fn", "reference", "domain"), _rows(UNARY), ids=_ids(UNARY))
def test_unary_math_matches_numpy(fn, reference, domain, rng, host_jit) -> None:
    """``cute.math`` functions on a TensorSSA agree with numpy to float32 precision."""
    a = rng.uniform(*domain, (3, 8)).astype(np.float32)
    res = _nan(a.shape)
    _run(jx.elementwise_unary, res, a, fn)
    np.testing.assert_allclose(res, reference(a), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize(("profile", "init", "expected"), _rows(NOTEBOOK_REDUCTIONS), ids=_ids(NOTEBOOK_REDUCTIONS))
def test_add_reduction_matches_notebook(profile, init, expected, host_jit) -> None:
    """ADD over each reduction profile; the init value takes part (1.0 adds one per column)."""
    res = _nan(len(expected))
    _run(jx.reduce, res, np.array([[1, 2, 3], [4, 5, 6]], np.float32), ADD, init, profile)
    np.testing.assert_array_equal(res, np.array(expected, dtype=np.float32))


@pytest.mark.parametrize(("op", "init", "reference"), _rows(REDUCTIONS), ids=_ids(REDUCTIONS))
def test_reduction_matches_numpy_over_every_profile(op, init, reference, rng, host_jit) -> None:
    """MAX, MIN and MUL reduce all modes, mode 1 and mode 0 like numpy's whole/axis reductions."""
    a = rng.uniform(0.5, 1.5, (4, 6)).astype(np.float32)
    for profile, axis in PROFILES:
        expected = np.atleast_1d(reference(a, axis=axis))
        res = _nan(expected.shape)
        _run(jx.reduce, res, a, op, init, profile)
        np.testing.assert_allclose(res, expected, rtol=1e-6, err_msg=f"reduction_profile={profile}")


def test_broadcast_to_matches_numpy(rng, host_jit) -> None:
    """``broadcast_to`` replicates a row and a column vector to the output's shape."""
    row = rng.standard_normal((1, 5)).astype(np.float32)
    col = rng.standard_normal((3, 1)).astype(np.float32)
    res = _nan((3, 5))
    _run(jx.broadcast_add, res, row, col)
    np.testing.assert_allclose(res, row + col, rtol=1e-6)


def test_implicit_broadcast_of_row_plus_column(rng, host_jit) -> None:
    """A (1, n) tensor plus an (m, 1) tensor broadcasts to (m, n) as in numpy."""
    row = rng.standard_normal((1, 5)).astype(np.float32)
    col = rng.standard_normal((3, 1)).astype(np.float32)
    res = _nan((3, 5))
    _run(jx.elementwise_binary, res, row, col, operator.add)
    np.testing.assert_allclose(res, row + col, rtol=1e-6)


def _integer_edges(dtype) -> np.ndarray:
    info = np.iinfo(dtype)
    bits = info.bits
    half = 2 ** (bits - 1)  # the signed/unsigned boundary: 128 and 127 in 8 bits
    values = {info.min, info.min + 1, -1, 0, 1, 2, 3, half - 1, -half, info.max - 1, info.max}
    values |= {2 ** (bits // 2) + 1, 0x5A5A5A5A5A5A5A5A}  # products that carry past the width
    span = 2**bits
    return np.array(sorted({(v - info.min) % span + info.min for v in values}), dtype=dtype)


@functools.cache
def _integer_arithmetic(dtype) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray]]:
    """``a``, ``b`` (every pair of edge values) and what the DSL's ``+ - *`` gave, in one compile."""
    edges = _integer_edges(dtype)
    a, b = np.repeat(edges, len(edges)), np.tile(edges, len(edges))
    # prefilled with the complement of numpy's result, so an element never written differs
    with np.errstate(over="ignore"):
        out = {name: ~ref(a, b) for name, _, ref in INTEGER_OPS}
    _run(sem.integer_arithmetic, out["add"], out["sub"], out["mul"], a, b)
    return a, b, out


def _differences(what: str, a, b, symbol: str, got, expected) -> str:
    bad = np.flatnonzero(got != expected)
    shown = "; ".join(f"{a[i]} {symbol} {b[i]}: expected {expected[i]}, DSL gave {got[i]}" for i in bad[:4])
    return f"{what}: {len(bad)} of {got.size} elements differ from numpy's wrapping arithmetic: {shown}"


@pytest.mark.parametrize("dtype", INTEGER_DTYPES, ids=[np.dtype(d).name for d in INTEGER_DTYPES])
@pytest.mark.parametrize(("op", "symbol", "reference"), INTEGER_OPS, ids=[op[0] for op in INTEGER_OPS])
def test_integer_arithmetic_wraps_like_numpy(op, symbol, reference, dtype, host_jit) -> None:
    """``+``, ``-`` and ``*`` on integer TensorSSA wrap modulo 2**bits exactly as numpy's do."""
    a, b, out = _integer_arithmetic(dtype)
    what = f"{np.dtype(dtype).name} TensorSSA a {symbol} b"
    if op == "add":
        top, wrapped = ADD_WRAPS[dtype]
        got = out[op][np.flatnonzero((a == top) & (b == 1))[0]]
        assert got == wrapped, f"{what}: {top} + 1: expected {wrapped} (wraps), DSL gave {got}"
    with np.errstate(over="ignore"):
        expected = reference(a, b)
    assert np.array_equal(out[op], expected), _differences(what, a, b, symbol, out[op], expected)


@pytest.mark.parametrize("dtype", [np.float32, np.int32], ids=["float32", "int32"])
def test_where_picks_a_where_cond_and_b_elsewhere(dtype, host_jit) -> None:
    """``cute.where(cond, a, b)``: ``a`` where ``cond`` is true, ``b`` elsewhere; ``a`` and ``b`` have
    no value in common and ``cond`` is true in 5 of 12 places, so swapped operands (or an inverted
    condition) differ everywhere."""
    cond = np.array([1, 0, 0, 1, 1, 0, 1, 0, 0, 0, 1, 0], dtype=np.bool_)
    a = np.arange(1, 13).astype(dtype)
    b = (-10 * np.arange(1, 13)).astype(dtype)
    res = np.zeros_like(a)
    _run(sem.where_select, res, cond, a, b)
    expected = np.where(cond, a, b)
    if np.array_equal(res, np.where(cond, b, a)):
        detail = "it picked b where cond is true and a elsewhere (operands swapped)"
    else:
        bad = np.flatnonzero(res != expected)
        detail = "; ".join(f"at {i} (cond {cond[i]}): expected {expected[i]}, DSL gave {res[i]}" for i in bad[:4])
    assert np.array_equal(res, expected), (
        f"cute.where(cond, a, b) on {np.dtype(dtype).name}: {detail}; "
        f"expected {expected.tolist()}, DSL gave {res.tolist()}"
    )
