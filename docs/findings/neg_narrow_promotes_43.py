"""DSL 4.3: unary - on Int8 returns Int32, which cannot be stored back: 'Type mismatch, store Int32 to Tensor with element type Int8'.

Releases: 4.3.5 (4.8.1 keeps the type). Path: GPU and host JIT (the trace; shown compiling for sm_90a).
Found by the cute-dsl conformance harness (semantics family's compile tier, case semantics-neg-i8).
Exit 1 while the defect shows (the DSL raises: 'Type mismatch'), 0 once fixed (it runs and is
right), 2 when it cannot run here (another error: not this defect).
"""
import os
import sys

import torch

if not torch.cuda.is_available():
    os.environ.setdefault("CUTE_DSL_ARCH", "sm_90a")  # a GPU kernel compiles without a GPU
import cutlass
import cutlass.cute as cute
from cutlass.cute.runtime import from_dlpack

NAME, PATH, PATTERN = 'neg_narrow_promotes_43', 'gpu', 'Type mismatch'


def op(x):
    return -x


def inputs():
    """The operand, the result's shape and torch dtype, the expected result (on the CPU)."""
    a = torch.tensor([0, 1, -1, 5, 127, -127, 2, 3], dtype=torch.int8)
    return a, a.shape, torch.int8, -a


@cute.jit
def on_host(out: cute.Tensor, a: cute.Tensor):
    out.store(op(a.load()))


@cute.kernel
def kernel(out: cute.Tensor, a: cute.Tensor):
    out.store(op(a.load()))


@cute.jit
def on_gpu(out: cute.Tensor, a: cute.Tensor):
    kernel(out, a).launch(grid=(1, 1, 1), block=(1, 1, 1))


a, shape, dtype, expected = inputs()
out = torch.zeros(shape, dtype=dtype)
try:
    if PATH == "host":
        on_host(from_dlpack(out), from_dlpack(a))
        got = out
    elif not torch.cuda.is_available():  # compile for sm_90a: where the defect shows
        cute.compile(on_gpu, from_dlpack(out), from_dlpack(a))
        print(f"{NAME}: fixed (compiles for {os.environ['CUTE_DSL_ARCH']}; values need a GPU)")
        sys.exit(0)
    else:
        a, out = a.cuda(), out.cuda()
        on_gpu(from_dlpack(out), from_dlpack(a))
        torch.cuda.synchronize()
        got = out.cpu()
except Exception as exc:  # noqa: BLE001 - the defect is the DSL's error
    text = " ".join(str(exc).split())
    if PATTERN in text:
        print(f"{NAME}: REPRODUCED on {PATH}: {type(exc).__name__}: ...{PATTERN}...")
        sys.exit(1)
    print(f"{NAME}: not run ({type(exc).__name__}: {text[:200]})")
    sys.exit(2)
right = torch.equal(got.cpu(), expected)
print(f"{NAME}: {'fixed' if right else 'runs now, but WRONG'} on {PATH}: got {got.tolist()}, expected {expected.tolist()}")
sys.exit(0 if right else 1)
