"""``@cute.jit`` functions the host suites trace and run.

The DSL compiles JIT functions from source files only, never from strings or the REPL, so the
notebook cells under test live here. Layout examples follow ``cute_layout_algebra.ipynb`` and
hand each layout to ``report``; numeric examples follow ``data_types.ipynb``; the TensorSSA
functions are the ``tensorssa.ipynb`` cells with the operation passed in as a ``Constexpr``.
"""

import cutlass
import cutlass.cute as cute


@cute.jit
def report(label: cutlass.Constexpr, layout):
    """Print ``layout`` at trace time, printf it at run time, then printf ``layout(i)`` for every i.

    Lines: ``print <label>: <layout>``, ``printf <label>: <layout>``, ``<label>(<i>) = <offset>``.
    """
    print(f"print {label}: {layout}")
    cute.printf("printf " + label + ": {}", layout)
    for i in cutlass.range(cute.size(layout)):
        cute.printf(label + "({}) = {}", i, layout(i))


@cute.jit
def coalesce_example():
    layout = cute.make_layout((2, (1, 6)), stride=(1, (cutlass.Int32(6), 2)))
    report("original", layout)
    report("coalesced", cute.coalesce(layout))


@cute.jit
def coalesce_post_conditions():
    layout = cute.make_layout(((2, (3, 4)), (3, 2), 1), stride=((4, (8, 24)), (2, 6), 12))
    report("coalesced", cute.coalesce(layout))


@cute.jit
def bymode_coalesce_example():
    layout = cute.make_layout((2, (1, 6)), stride=(1, (6, 2)))
    report("coalesced", cute.coalesce(layout, target_profile=(1, 1)))


@cute.jit
def composition_example():
    A = cute.make_layout((6, 2), stride=(cutlass.Int32(8), 2))
    B = cute.make_layout((4, 3), stride=(3, 1))
    report("A", A)
    report("R", cute.composition(A, B))


@cute.jit
def bymode_composition_example():
    A = cute.make_layout(
        (cutlass.Int32(12), (cutlass.Int32(4), cutlass.Int32(8))),
        stride=(cutlass.Int32(59), (cutlass.Int32(13), cutlass.Int32(1))),
    )
    report("R", cute.composition(A, (3, 8)))


@cute.jit
def logical_divide_1d_example():
    layout = cute.make_layout((4, 2, 3), stride=(2, 1, 8))
    report("R", cute.logical_divide(layout, tiler=cute.make_layout(4, stride=2)))


@cute.jit
def divide_2d_examples():
    layout = cute.make_layout((9, (4, 8)), stride=(59, (13, 1)))
    tiler = (cute.make_layout(3, stride=3), cute.make_layout((2, 4), stride=(1, 8)))
    report("logical", cute.logical_divide(layout, tiler=tiler))
    report("zipped", cute.zipped_divide(layout, tiler=tiler))
    report("tiled", cute.tiled_divide(layout, tiler=tiler))
    report("flat", cute.flat_divide(layout, tiler=tiler))


@cute.jit
def logical_product_1d_example():
    layout = cute.make_layout((2, 2), stride=(4, 1))
    report("R", cute.logical_product(layout, tiler=cute.make_layout(6, stride=1)))


@cute.jit
def blocked_raked_product_example():
    layout = cute.make_layout((2, 5), stride=(5, 1))
    tiler = cute.make_layout((3, 4), stride=(1, 3))
    report("blocked", cute.blocked_product(layout, tiler=tiler))
    report("raked", cute.raked_product(layout, tiler=tiler))


@cute.jit
def static_vs_dynamic_scalars():
    a = cutlass.Float32(3.14)
    print("a(static) =", a)
    cute.printf("a(dynamic) = {}", a)
    b = cutlass.Int32(5)
    print("b(static) =", b)
    cute.printf("b(dynamic) = {}", b)


@cute.jit
def type_conversion():
    x = cutlass.Int32(42)
    cute.printf("Int32({}) => Float32({})", x, x.to(cutlass.Float32))
    a = cutlass.Float32(3.14)
    cute.printf("Float32({}) => Int32({})", a, a.to(cutlass.Int32))
    n = cutlass.Float32(-3.7)
    cute.printf("Float32({}) => Int32({})", n, n.to(cutlass.Int32))
    c = cutlass.Int32(127)
    cute.printf("Int32({}) => Int8({})", c, c.to(cutlass.Int8))
    e = cutlass.Int32(300)
    cute.printf("Int32({}) => Int8({})", e, e.to(cutlass.Int8))


@cute.jit
def operator_demo():
    a = cutlass.Int32(10)
    b = cutlass.Int32(3)
    x = cutlass.Float32(5.5)
    cute.printf("a + b = {}", a + b)
    cute.printf("x * 2 = {}", x * 2)
    cute.printf("a + x = {}", a + x)
    cute.printf("a / b = {}", a / b)
    cute.printf("x / 2.0 = {}", x / cutlass.Float32(2.0))
    cute.printf("a > b = {}", a > b)
    cute.printf("a & b = {}", a & b)
    cute.printf("-a = {}", -a)
    cute.printf("~a = {}", ~a)


@cute.jit
def int32_operators(a: cutlass.Int32, b: cutlass.Int32):
    """Each binary operator on runtime Int32 arguments, one ``a <op> b = <value>`` line each."""
    cute.printf("a + b = {}", a + b)
    cute.printf("a // b = {}", a // b)
    cute.printf("a mod b = {}", a % b)  # a literal % would reach C printf unescaped
    cute.printf("a << b = {}", a << b)
    cute.printf("a >> b = {}", a >> b)
    cute.printf("a | b = {}", a | b)
    cute.printf("a ^ b = {}", a ^ b)


@cute.jit
def elementwise_binary(res: cute.Tensor, a: cute.Tensor, b: cute.Tensor, op: cutlass.Constexpr):
    res.store(op(a.load(), b.load()))


@cute.jit
def elementwise_scalar(res: cute.Tensor, a: cute.Tensor, c: cutlass.Constexpr, op: cutlass.Constexpr):
    res.store(op(a.load(), c))


@cute.jit
def elementwise_unary(res: cute.Tensor, a: cute.Tensor, fn: cutlass.Constexpr):
    res.store(fn(a.load()))


@cute.jit
def reduce(
    res: cute.Tensor, a: cute.Tensor, op: cutlass.Constexpr, init: cutlass.Constexpr, profile: cutlass.Constexpr
):
    """``a.load().reduce`` into ``res``; profile 0 yields a scalar, stored to ``res[0]``."""
    reduced = a.load().reduce(op, init, reduction_profile=profile)
    if cutlass.const_expr(profile == 0):
        res[0] = reduced
    else:
        res.store(reduced)


@cute.jit
def broadcast_add(res: cute.Tensor, row: cute.Tensor, col: cute.Tensor):
    res.store(row.load().broadcast_to(res.shape) + col.load().broadcast_to(res.shape))


@cute.jit
def show(src):
    """The framework-integration page's ``foo``: print the tensor as the trace sees it."""
    print(src)
