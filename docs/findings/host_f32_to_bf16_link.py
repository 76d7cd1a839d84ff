"""The host JIT's Float32 .to(BFloat16) calls libgcc's __truncsfbf2 on a CPU without AVX512-BF16 or
AVX-NE-CONVERT: 'Symbols not found' where libgcc predates GCC 13 (every BFloat16 result computed in
Float32 fails to link: +, *, cute.math, reductions, conversions).

Releases: 4.8.1. Path: host JIT. Machine: an x86-64 CPU without those extensions (grep avx512_bf16
/proc/cpuinfo prints nothing) beside GCC 12's libgcc (Debian 12); with them it links.
Found by the cute-dsl conformance harness (semantics family, case semantics-to-bf16-f32 (host)).
Exit 1 while the defect shows (the DSL raises: '__truncsfbf2'), 0 once fixed (it runs and is
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

NAME, PATH, PATTERN = 'host_f32_to_bf16_link', 'host', '__truncsfbf2'


def op(x):
    return x.to(cutlass.BFloat16)


def inputs():
    """The operand, the result's shape and torch dtype, the expected result (on the CPU)."""
    a = torch.tensor([1.0, -2.5, 3.0, 0.0], dtype=torch.float32)
    return a, a.shape, torch.bfloat16, a.to(torch.bfloat16)


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
