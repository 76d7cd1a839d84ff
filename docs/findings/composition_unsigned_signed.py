"""cute.composition of an unsigned tensor returns the signed type of its width (Uint8 -> Int8), so
every sign-dependent operation on it is signed: composed Uint8 200 > 100 is False. This is the
tutorial's apply_mul_relu defect on Uint8 (its kernel composes its operands with the TV layout:
PTX cvt.s16.s8 + max.s16); on plain Uint8 tensors x > y is right (setp.gt.u16).

Releases: 4.5.3, 4.8.1 (seen on the GPU); 4.8.1 on the host JIT. Paths: GPU and host JIT.
Found by the cute-dsl conformance harness (semantics family, cases semantics-gt-u8-composed ...).
Exit 1 while the defect shows, 0 once fixed, 2 when it cannot run here (another error).
"""
import sys

import torch
import cutlass.cute as cute
from cutlass.cute.runtime import from_dlpack


def greater(out, a, b):
    a = cute.composition(a, cute.make_layout(cute.size(a)))  # as the tutorial's tiled kernels view operands
    b = cute.composition(b, cute.make_layout(cute.size(b)))
    print(f"composed element type: {a.element_type}")  # at trace time: Int8
    out.store(a.load() > b.load())


@cute.jit
def on_host(out: cute.Tensor, a: cute.Tensor, b: cute.Tensor):
    greater(out, a, b)


@cute.kernel
def kernel(out: cute.Tensor, a: cute.Tensor, b: cute.Tensor):
    greater(out, a, b)


@cute.jit
def on_gpu(out: cute.Tensor, a: cute.Tensor, b: cute.Tensor):
    kernel(out, a, b).launch(grid=(1, 1, 1), block=(1, 1, 1))


def run(path: str) -> bool:
    device = "cuda" if path == "gpu" else "cpu"
    a = torch.tensor([200, 100, 255, 1, 128, 127, 0, 129], dtype=torch.uint8, device=device)
    b = torch.tensor([100, 200, 1, 255, 127, 128, 0, 1], dtype=torch.uint8, device=device)
    out = torch.zeros(a.shape, dtype=torch.bool, device=device)
    (on_gpu if path == "gpu" else on_host)(from_dlpack(out), from_dlpack(a), from_dlpack(b))
    if path == "gpu":
        torch.cuda.synchronize()
    expected = a > b
    bad = (out != expected).nonzero().flatten().tolist()
    for k in bad[:3]:
        print(f"{path}: composed Uint8 {a[k].item()} > {b[k].item()} is {out[k].item()}, expected {expected[k].item()}")
    return bool(bad)


paths = ["host"] + (["gpu"] if torch.cuda.is_available() else [])
try:
    defect = [run(p) for p in paths]
except Exception as exc:  # noqa: BLE001 - not this defect: the operation itself fails here
    print(f"composition_unsigned_signed: not run ({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''})")
    sys.exit(2)
print(f"composition_unsigned_signed: {'REPRODUCED' if any(defect) else 'fixed'} on {', '.join(paths)}")
sys.exit(1 if any(defect) else 0)
