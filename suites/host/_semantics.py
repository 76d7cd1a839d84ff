"""``@cute.jit`` functions for the host tier's semantics checks (issue 45): integer TensorSSA
arithmetic, integer casts and ``cute.where``, each run on the CPU.

They sit apart from ``_jit_examples`` (the notebooks' cells) because they are not the material's
examples but probes of the DSL's own rules: what ``+`` on an integer vector is, what a cast to a
type yields (its width and signedness), which operand ``where`` picks. Each probe computes a whole
table of values in one compile.
"""

import cutlass
import cutlass.cute as cute

from fixtures.dsl import compat

# a 128-bit target's source is widened through it; None where the release has no 128-bit integers (4.3)
INT128 = compat.resolve("Int128") if compat.resolution("Int128").used else None


@cute.jit
def integer_arithmetic(add: cute.Tensor, sub: cute.Tensor, mul: cute.Tensor, a: cute.Tensor, b: cute.Tensor):
    """``a + b``, ``a - b`` and ``a * b`` on the loaded vectors, into three outputs."""
    x = a.load()
    y = b.load()
    add.store(x + y)
    sub.store(x - y)
    mul.store(x * y)


@cute.jit
def integer_casts(
    lo: cute.Tensor,
    hi: cute.Tensor,
    neg: cute.Tensor,
    src_i64: cute.Tensor,
    src_u64: cute.Tensor,
    target: cutlass.Constexpr,
    plan: cutlass.Constexpr,
):
    """For each ``(tensor, index)`` of ``plan`` (``"i"``: ``src_i64``, ``"u"``: ``src_u64``):
    ``v = source.to(target)``, then what ``v`` is, read back through 64-bit integers.

    ``lo[k]`` is ``v.to(Int64)`` (the value itself below 64 bits; the low 64 bits otherwise),
    ``hi[k]`` the next 64 bits (128-bit targets only), ``neg[k]`` whether ``v < 0`` (64 bits and up,
    where ``lo`` alone cannot tell 2**64 - 1 from -1). A 128-bit target's source is first
    sign-extended to ``Int128``, so the cast itself is a bit-for-bit reinterpretation or a truncation,
    never an extension, for every target.
    """
    for k in cutlass.range_constexpr(len(plan)):
        which, index = plan[k]
        if cutlass.const_expr(which == "i"):
            v = src_i64[index]
        else:
            v = src_u64[index]
        if cutlass.const_expr(target.width > 64):
            v = v.to(INT128)
        v = v.to(target)
        lo[k] = v.to(cutlass.Int64)
        if cutlass.const_expr(target.width > 64):
            hi[k] = (v >> 64).to(cutlass.Int64)
        if cutlass.const_expr(target.width >= 64):
            neg[k] = v < 0


@cute.jit
def where_select(res: cute.Tensor, cond: cute.Tensor, a: cute.Tensor, b: cute.Tensor):
    """``cute.where(cond, a, b)`` on the loaded vectors."""
    res.store(cute.where(cond.load(), a.load(), b.load()))
