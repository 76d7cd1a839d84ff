"""A tensor made on the iterator of an unsigned tensor is signed: cute.make_tensor(t.iterator, layout)
of a Uint8 tensor is an Int8 tensor (t.iterator.dtype is already Int8), so every sign-dependent
operation on it is signed: Uint8 255 // 7 through two such views is 255 (Int8 -1 // 7 is -1).
cute.domain_offset and slices of such a view are signed too; cute.zipped_divide and
cute.local_tile of the tensor itself keep Uint8, and cute.recast_tensor(view, Uint8) gives it back.
The same class as composition_unsigned_signed.py.

Releases: 4.8.1 (host JIT, CPU machine, 2026-12-07). Paths: host JIT (and the GPU path's tracing,
which builds the same tensor).
Found by the cute-dsl conformance harness (the semantics family's compile groups: a group's views
of its flat buffers read Uint8 operands as Int8 until typed with recast_tensor).
Exit 1 while the defect shows, 0 once fixed, 2 when it cannot run here (another error).
"""
import sys

import torch
import cutlass.cute as cute
from cutlass.cute.runtime import from_dlpack


@cute.jit
def divide(out: cute.Tensor, a: cute.Tensor, b: cute.Tensor):
    x = cute.make_tensor(a.iterator, cute.make_layout(cute.size(a)))  # the same elements, viewed anew
    y = cute.make_tensor(b.iterator, cute.make_layout(cute.size(b)))
    print(f"a: {a.element_type}, a.iterator: {a.iterator.dtype}, make_tensor(a.iterator): {x.element_type}")
    out.store(x.load() // y.load())


a = torch.tensor([255, 200, 129, 7, 128, 250, 16, 8], dtype=torch.uint8)
b = torch.tensor([7, 3, 2, 7, 1, 5, 4, 8], dtype=torch.uint8)
out = torch.zeros_like(a)
try:
    divide(from_dlpack(out), from_dlpack(a), from_dlpack(b))
except Exception as exc:  # noqa: BLE001 - not this defect: the operation itself fails here
    print(f"iterator_unsigned_signed: not run ({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''})")
    sys.exit(2)
expected = a // b
bad = (out != expected).nonzero().flatten().tolist()
for k in bad[:3]:
    print(f"host: Uint8 {a[k].item()} // {b[k].item()} through make_tensor(.iterator) is {out[k].item()}, expected {expected[k].item()}")
print(f"iterator_unsigned_signed: {'REPRODUCED' if bad else 'fixed'} on host")
sys.exit(1 if bad else 0)
