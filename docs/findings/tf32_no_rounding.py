""".to(TFloat32) keeps every float32 bit: nothing is rounded to TF32's 10 mantissa bits.

Releases: 4.3.5 (GPU), 4.8.1 (GPU and host JIT). Paths: GPU and host JIT.
Found by the cute-dsl conformance harness (semantics family, case semantics-to-tf32-f32).
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
    return x.to(cutlass.TFloat32).to(cutlass.Float32)


def inputs():
    """The operand, the result's torch dtype, the expected result (all on the CPU)."""
    a = torch.tensor([1 + 2**-20, 1 + 2**-12, 1 + 3 * 2**-12, 3.14159265, -2.7182818, 1.0, 0.0, 1e-3])
    bits = a.view(torch.int32)  # round to nearest, ties away from zero (PTX cvt.rna.tf32.f32)
    return a, torch.float32, ((bits + 0x1000) & ~0x1FFF).view(torch.float32)


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


OP = 'Float32 .to(TFloat32)'
paths = [p for p in PATHS if p == "host" or torch.cuda.is_available()]
if not paths:
    print(f"tf32_no_rounding: not run (needs a GPU)")
    sys.exit(2)
try:
    defect = [run(p) for p in paths]
except Exception as exc:  # noqa: BLE001 - not this defect: the operation itself fails here
    print(f"tf32_no_rounding: not run ({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''})")
    sys.exit(2)
print(f"tf32_no_rounding: {'REPRODUCED' if any(defect) else 'fixed'} on {', '.join(paths)}")
sys.exit(1 if any(defect) else 0)
