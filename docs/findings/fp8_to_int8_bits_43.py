"""Float8E4M3FN .to(Int8) reads the fp8 bits as the integer on the GPU and the host JIT: 1.0 becomes 56.

Releases: 4.3.5 (4.8.1 does not compile it for the GPU). Paths: GPU, host JIT (the host JIT's seen on
an H100 host on 2026-12-07, where 4.3.5's host JIT runs).
Found by the cute-dsl conformance harness (semantics family, case semantics-to-i8-e4m3).
Exit 1 while the defect shows, 0 once fixed, 2 when it cannot run here (no GPU for a GPU-only
defect, or the operation raises on this release: not this defect).
"""
import sys

import torch
import cutlass
import cutlass.cute as cute
from cutlass.cute.runtime import from_dlpack

PATHS = ['gpu', 'host']  # where the defect was seen
ULPS = 0  # 0: the result's bits must equal the expected ones


def op(x):
    return x.to(cutlass.Int8)


def inputs():
    """The operand, the result's torch dtype, the expected result (all on the CPU)."""
    a = torch.tensor([1.0, 2.0, -1.0, 0.5, 0.0, 3.0, -4.0, 8.0]).to(torch.float8_e4m3fn)
    return a, torch.int8, a.float().to(torch.int8)


@cute.jit
def on_host(out: cute.Tensor, a: cute.Tensor):
    out.store(op(a.load()))


@cute.kernel
def kernel(out: cute.Tensor, a: cute.Tensor):
    out.store(op(a.load()))


@cute.jit
def on_gpu(out: cute.Tensor, a: cute.Tensor):
    kernel(out, a).launch(grid=(1, 1, 1), block=(1, 1, 1))


def bits(t):
    return t.view({1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}[t.element_size()])


def run(path: str) -> bool:
    a, dtype, expected = inputs()
    device = "cuda" if path == "gpu" else "cpu"
    a, out = a.to(device), torch.zeros(a.shape, dtype=dtype, device=device)
    (on_gpu if path == "gpu" else on_host)(from_dlpack(out), from_dlpack(a))
    if path == "gpu":
        torch.cuda.synchronize()
    got, a = out.cpu(), a.cpu()
    if ULPS:
        ulp = torch.finfo(dtype).eps * torch.exp2(torch.floor(torch.log2(expected.double().abs())))
        bad = ((got.double() - expected.double()).abs() > ULPS * ulp).nonzero().flatten().tolist()
    else:
        bad = (bits(got) != bits(expected)).nonzero().flatten().tolist()
    for k in bad[:3]:
        print(f"{path}: {OP} of {a[k].item()!r} is {got[k].item()!r}, expected {expected[k].item()!r}")
    return bool(bad)


OP = 'Float8E4M3FN .to(Int8)'
paths = [p for p in PATHS if p == "host" or torch.cuda.is_available()]
if not paths:
    print(f"fp8_to_int8_bits_43: not run (needs a GPU)")
    sys.exit(2)
try:
    defect = [run(p) for p in paths]
except Exception as exc:  # noqa: BLE001 - not this defect: the operation itself fails here
    print(f"fp8_to_int8_bits_43: not run ({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''})")
    sys.exit(2)
print(f"fp8_to_int8_bits_43: {'REPRODUCED' if any(defect) else 'fixed'} on {', '.join(paths)}")
sys.exit(1 if any(defect) else 0)
