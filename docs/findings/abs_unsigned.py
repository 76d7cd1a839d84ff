"""abs() of an unsigned integer TensorSSA is computed as if signed: abs(Uint8 255) is 1.

Releases: 4.8.1 (4.3.5: abs of a TensorSSA is a TypeError). Paths: GPU and host JIT.
Found by the cute-dsl conformance harness (semantics family, case semantics-abs-u8).
Exit 1 while the defect shows, 0 once fixed, 2 when it cannot run here (another error).
"""
import sys

import torch
import cutlass.cute as cute
from cutlass.cute.runtime import from_dlpack


@cute.jit
def on_host(out: cute.Tensor, a: cute.Tensor):
    out.store(abs(a.load()))


@cute.kernel
def kernel(out: cute.Tensor, a: cute.Tensor):
    out.store(abs(a.load()))


@cute.jit
def on_gpu(out: cute.Tensor, a: cute.Tensor):
    kernel(out, a).launch(grid=(1, 1, 1), block=(1, 1, 1))


def run(path: str) -> bool:
    device = "cuda" if path == "gpu" else "cpu"
    a = torch.tensor([0, 1, 2, 127, 128, 129, 200, 255], dtype=torch.uint8, device=device)
    out = torch.zeros_like(a)
    (on_gpu if path == "gpu" else on_host)(from_dlpack(out), from_dlpack(a))
    if path == "gpu":
        torch.cuda.synchronize()
    expected = a  # every unsigned value is its own absolute value
    bad = (out != expected).nonzero().flatten().tolist()
    for k in bad[:3]:
        print(f"{path}: abs(Uint8 {a[k].item()}) = {out[k].item()}, expected {expected[k].item()}")
    return bool(bad)


paths = ["host"] + (["gpu"] if torch.cuda.is_available() else [])
try:
    defect = [run(p) for p in paths]
except Exception as exc:  # noqa: BLE001 - not this defect: the operation itself fails here
    print(f"abs_unsigned: not run ({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''})")
    sys.exit(2)
print(f"abs_unsigned: {'REPRODUCED' if any(defect) else 'fixed'} on {', '.join(paths)}")
sys.exit(1 if any(defect) else 0)
