"""A standalone reproducer of one failing case of the CuTe DSL conformance harness.

It needs torch and the CuTe DSL (``cutlass``, ``cuda.bindings``) and a CUDA GPU, nothing of the
harness. It places the operands as the harness did (each in its own allocation, with guard bands
before and after that hold a known byte; a broadcast input as the row or column it is; an
in-place call's operands as one tensor), fills them as the harness did (seeded random values,
then the dtype's edge values at their positions), poisons the output, compiles and launches the
kernel, and checks what the harness checks: no byte outside a tensor changed, the inputs are
unchanged, every output element was written, and the values equal torch's.

    python3 THIS.py                                  # the recorded kernel
    python3 THIS.py --kernel FILE.py:FUNCTION        # another @cute.jit launch function, same signature

Exit status 0 and "<case id>: conforms" when the kernel is correct; 1 with the failure's class
and message (``Mismatch: ...``, ``Unwritten: ...``, ``OutOfBoundsWrite: ...``, or the CUDA error).
Mismatch messages name the first bad element and the count; the harness's value-class tally
(NaN, signed zero, rounding...) is left out.

The reproducer's own part (everything above SPEC) is ``reports/repro_template.py`` of the harness.
"""

import argparse
import importlib
import inspect
import math
import operator
import sys
import tempfile
from pathlib import Path

import torch

EXIT_CONFORMS, EXIT_FAILS = 0, 1


class ConformanceError(AssertionError):
    """The kernel computed something other than the reference, or wrote where it must not."""


class Mismatch(ConformanceError):
    """Output values differ from the reference."""


class Unwritten(ConformanceError):
    """Output elements still hold the poison."""


class OutOfBoundsWrite(ConformanceError):
    """Bytes outside a tensor (guard bands, gaps between rows) or an input changed."""


_SAME_WIDTH_INT = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}


def bits(t):
    """A float tensor's elements as their bit patterns; an integer tensor as it is."""
    return t.view(_SAME_WIDTH_INT[t.element_size()]) if t.is_floating_point() else t


def mul_relu_ref(a, b):
    """Multiply, then ``where(x > 0, x, 0)``: NaN and -0.0 become +0."""
    tmp = a * b
    return torch.where(tmp > 0, tmp, torch.zeros_like(tmp))


REFERENCES = {"add": operator.add, "mul": operator.mul, "mul_relu": mul_relu_ref}


def dsl_op(name):
    """The op as a kernel that takes one traces it."""
    if name != "mul_relu":
        return {"add": operator.add, "mul": operator.mul}[name]
    import cutlass.cute as cute

    def mul_relu(a, b):
        tmp = a * b
        return cute.where(tmp > 0, tmp, cute.full_like(tmp, 0))

    return mul_relu


def row_blocks(shape, block_elements):
    """Ranges of the leading dimension of at most ``block_elements`` elements covering ``shape``."""
    m, per_row = shape[0], math.prod(shape[1:])
    step = max(1, block_elements // max(per_row, 1))
    return [slice(r, min(r + step, m)) for r in range(0, m, step)] or [slice(0, 0)]


class Placed:
    """One operand's allocation: guard band, ``offset`` elements, the view's span, guard band."""

    def __init__(self, operand, shape, dtype, device):
        stored, strides = tuple(operand["stored"]), tuple(operand["strides"])
        span = 0 if 0 in stored else 1 + sum((s - 1) * st for s, st in zip(stored, strides))
        self.start = operand["guard"] + operand["base_offset"]
        self.buffer = torch.empty(self.start + span + operand["guard"], dtype=dtype, device=device)
        self.back = self.start + span
        self.view = self.buffer.as_strided(stored, strides, self.start)
        if stored != tuple(shape):
            self.view = self.view.expand(tuple(shape))

    def distinct(self):
        """The view with broadcast (stride-0) modes narrowed to one: what can be written."""
        v = self.view
        for dim, stride in enumerate(v.stride()):
            if stride == 0:
                v = v.narrow(dim, 0, min(1, v.shape[dim]))
        return v


def to_cute(spec, tensor, operand):
    from cutlass.cute.runtime import from_dlpack

    t = from_dlpack(tensor, assumed_align=operand["assumed_align"])
    if spec["mode"] == "dynamic":
        return t.mark_layout_dynamic(leading_dim=1 if tensor.stride(1) == 1 else 0)
    if spec["mode"] == "compact":
        return t.mark_compact_shape_dynamic(mode=0, stride_order=(0, 1)).mark_compact_shape_dynamic(
            mode=1, stride_order=(0, 1), divisibility=spec["compact_divisibility"]
        )
    return t


def fill_random(t, spec, dtype, gen):
    """Values from ``[low, high)``, a block of rows at a time past ``block_elements``."""
    if t.numel() > spec["block_elements"]:
        for rows in row_blocks(t.shape, spec["block_elements"]):
            fill_random(t[rows], spec, dtype, gen)
        return
    low, high = spec["low"], spec["high"]
    if dtype.is_floating_point:
        values = torch.rand(t.shape, generator=gen, device=t.device, dtype=torch.float32)
        t.copy_((values * (high - low) + low).to(dtype))
    else:
        t.copy_(torch.randint(int(low), int(high), t.shape, generator=gen, device=t.device, dtype=dtype))


def fill_inputs(spec, placed, dtype):
    """Seeded random values in ``a`` and ``b``, then the edge values at their positions."""
    device = placed["a"].view.device
    gen = torch.Generator(device=device).manual_seed(spec["seed"])
    targets = [placed[name].distinct() for name in "ab"]
    for t in targets:
        fill_random(t, spec, dtype, gen)
    for t, operand in zip(targets, spec["operands"][:2]):
        if operand["edge_bits"]:
            element = torch.tensor(operand["edge_bits"], dtype=bits(torch.empty(0, dtype=dtype)).dtype)
            rows, cols = torch.tensor(operand["edge_rows"]), torch.tensor(operand["edge_cols"])
            t[rows.to(device), cols.to(device)] = element.view(dtype).to(device)


class Poison:
    """What an unwritten output element holds: a bit pattern, or (in place) the input's prior bits."""

    def __init__(self, pattern=None, before=None):
        self.pattern, self.before = pattern, before

    def fill(self, t):
        if self.before is None:
            bits(t).fill_(self.pattern)

    def held_by(self, t):
        return bits(t) == (bits(self.before) if self.before is not None else self.pattern)


def integer_poison(dtype, expected, block_elements):
    """The first value upwards from the type's min that no expected element equals."""
    low = torch.iinfo(dtype).min
    candidates = torch.arange(low, low + min(512, torch.iinfo(dtype).max - low + 1), device=expected.device)
    taken = torch.zeros_like(candidates, dtype=torch.bool)
    for rows in row_blocks(expected.shape, block_elements):
        taken |= torch.isin(candidates, expected[rows].long())
    free = candidates[~taken]
    return int(free[0]) if len(free) else low


def index(flat, shape):
    return tuple(int(i) for i in torch.unravel_index(torch.tensor(flat), tuple(shape)))


def first_true(mask):
    return int(mask.reshape(-1).to(torch.uint8).argmax())


def check_untouched(spec, name, placed):
    """Every byte of the allocation outside the view still holds the guard byte."""
    buf = placed.buffer.view(torch.uint8).view(placed.buffer.numel(), -1)
    outside = torch.ones(placed.buffer.numel(), dtype=torch.bool, device=buf.device)
    outside.as_strided(placed.view.shape, placed.view.stride(), placed.start).fill_(False)
    changed = (buf != spec["guard_byte"]).any(dim=1) & outside
    count = int(changed.sum())
    if count:
        flat = first_true(changed)
        if flat < placed.start:
            where = f"front guard band, {placed.start - flat} elements before the tensor"
        elif flat >= placed.back:
            where = f"back guard band, {flat - placed.back} elements past the tensor's end"
        else:
            where = f"a gap between rows, element offset {flat - placed.start} from the tensor's base"
        raise OutOfBoundsWrite(f"{spec['case']}: out-of-bounds write to {name}: {count} elements changed; first in the {where}")


def show(value):
    """An element as a number, zeros with their sign."""
    x = value.item()
    if isinstance(x, float) and x == 0:
        return "-0.0" if math.copysign(1.0, x) < 0 else "+0.0"
    return repr(x)


def differs(got, expected, rtol, atol):
    """Exact: the same bits, or NaN on both sides; integers by value. Within a tolerance: close,
    NaN on the same elements, zeros of the same sign."""
    if not got.is_floating_point():
        return got != expected
    if rtol == 0 and atol == 0:
        return (bits(got) != bits(expected)) & ~(got.isnan() & expected.isnan())
    g, e = got.double(), expected.double()
    signed_zeros = (g == 0) & (e == 0) & (g.signbit() != e.signbit())
    return ~torch.isclose(g, e, rtol=rtol, atol=atol, equal_nan=True) | signed_zeros


def check_values(spec, got, expected, a, b):
    bad = differs(got, expected, spec["rtol"], spec["atol"])
    count = int(bad.sum())
    if not count:
        return
    flat = first_true(bad)
    at = index(flat, got.shape)
    rule = "exactly" if spec["rtol"] == 0 and spec["atol"] == 0 else f"within rtol={spec['rtol']}, atol={spec['atol']}"
    raise Mismatch(
        f"{spec['case']}: {count} of {got.numel()} elements differ from torch ({rule}); first at {at}: "
        f"a={show(a[at])}, b={show(b[at])}: got {show(got[at])}, expected {show(expected[at])}"
    )


def run(spec, launch):
    """Place, fill, poison, compile, launch and check, as the harness's runner does."""
    import cuda.bindings.driver as cuda
    import cutlass.cute as cute

    dtype, shape = getattr(torch, spec["dtype"]), tuple(spec["shape"])
    placed = {}
    for operand in spec["operands"]:
        same = operand["same_as"]
        placed[operand["name"]] = placed[same] if same else Placed(operand, shape, dtype, "cuda")
    for name in "abc":
        if not spec["operands"]["abc".index(name)]["same_as"]:
            placed[name].buffer.view(torch.uint8).fill_(spec["guard_byte"])
    operands = [to_cute(spec, placed[o["name"]].view, o) for o in spec["operands"]]
    fill_inputs(spec, placed, dtype)
    a, b = placed["a"].view.clone(), placed["b"].view.clone()
    expected = REFERENCES[spec["op"]](a, b)
    in_place = spec["operands"][2]["same_as"]
    if in_place:
        poison = Poison(before=(a, b)["ab".index(in_place)])
    elif dtype.is_floating_point:
        poison = Poison(spec["poison_bits"])
    else:
        poison = Poison(integer_poison(dtype, expected, spec["block_elements"]))
    output = placed["c"].view
    poison.fill(output)
    takes_op = len(inspect.signature(launch).parameters) == 5
    op = (dsl_op(spec["op"]),) if takes_op else ()
    compiled = cute.compile(launch, *op, *operands, cuda.CUstream(0))
    compiled(*operands, cuda.CUstream(torch.cuda.current_stream().cuda_stream))
    torch.cuda.synchronize()
    for name in "abc":
        check_untouched(spec, name, placed[name])
    for name, before in zip("ab", (a, b)):
        if name != in_place and not torch.equal(bits(placed[name].view), bits(before)):
            raise OutOfBoundsWrite(f"{spec['case']}: input {name} was modified by the kernel")
    unwritten = poison.held_by(output) & ~poison.held_by(expected)
    count = int(unwritten.sum())
    if count:
        first = index(first_true(unwritten), output.shape)
        raise Unwritten(f"{spec['case']}: {count} of {output.numel()} output elements were never written; first at {first}")
    check_values(spec, output, expected, a, b)


def carried_kernel(spec, sources, folder):
    """The recorded launch function, imported from its modules as written into ``folder``
    (a package the reproducer does not carry is an empty one)."""
    root = Path(folder)
    for path, text in sources.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    for package in {p.parent for p in root.rglob("*.py")} - {root}:
        while package != root and not (package / "__init__.py").exists():
            (package / "__init__.py").write_text("")
            package = package.parent
    sys.path.insert(0, str(root))
    return getattr(importlib.import_module(spec["launch_module"]), spec["launch_function"])


def substitute_kernel(choice):
    """``FILE.py:FUNCTION``, imported as its package (the folders above it that have an ``__init__.py``) names it."""
    file, _, function = choice.rpartition(":")
    path = Path(file).resolve()
    if not file or not function or path.suffix != ".py" or not path.is_file():
        raise SystemExit(f"--kernel {choice}: expected an existing FILE.py:FUNCTION")
    root, name = path.parent, path.stem
    while (root / "__init__.py").exists():
        name, root = f"{root.name}.{name}", root.parent
    sys.path.insert(0, str(root))
    return getattr(importlib.import_module(name), function)


def main(spec, sources, argv=None):
    parser = argparse.ArgumentParser(description=f"Reproduce {spec['case']} (harness saw: {spec['failure']}).")
    parser.add_argument("--kernel", metavar="FILE.py:FUNCTION",
                        help="launch this @cute.jit function instead of the recorded one (same signature)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="cute-repro-") as folder:
        try:
            launch = substitute_kernel(args.kernel) if args.kernel else carried_kernel(spec, sources, folder)
            run(spec, launch)
        except ConformanceError as failure:
            print(f"{type(failure).__name__}: {failure}")
            return EXIT_FAILS
        except Exception as error:  # noqa: BLE001 - a CUDA fault (or a kernel that does not compile) is the finding
            print(f"{type(error).__name__}: {(str(error).strip().splitlines() or [''])[0]}")
            return EXIT_FAILS
    print(f"{spec['case']}: conforms")
    return EXIT_CONFORMS
