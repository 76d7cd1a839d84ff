"""A name first bound in both branches of a dynamic `if` is not bound after it (Python binds it).

Releases: 4.8.1 (both frontends: the default raises NameError, PyIR (CUTE_DSL_ENABLE_PYIR=1
CUTE_DSL_AUTO_M2S=1) SCOPE_UNBOUND_NAME_IN_TRACE). Path: host JIT and GPU (the trace; shown on the
host JIT). Found by the cute-dsl conformance harness (frontend family, case frontend-if_new_name-i32;
frontend-if_else-i32, the name bound before the `if`, runs right).
Exit 1 while the defect shows (the DSL refuses the function), 0 once fixed (it runs and is right),
2 when it cannot run here (another error: not this defect).
"""
import sys

import torch

import cutlass
import cutlass.cute as cute
from cutlass.cute.runtime import from_dlpack

NAME = "frontend_if_new_name"
PATTERNS = ("never given a value", "is not defined")


@cute.jit
def on_host(x: cute.Tensor, out: cute.Tensor, t: cutlass.Int32):
    v = x[t]
    if v > cutlass.Int32(2):  # a runtime condition
        w = v * cutlass.Int32(2)
    else:
        w = cutlass.Int32(0) - v
    out[t] = w  # Python: w is bound on every path


x = torch.tensor([3, -1, 4, 1], dtype=torch.int32)
out = torch.zeros(4, dtype=torch.int32)
expected = torch.tensor([6, 1, 8, -1], dtype=torch.int32)
try:
    for t in range(4):
        on_host(from_dlpack(x), from_dlpack(out), cutlass.Int32(t))
except Exception as exc:  # noqa: BLE001 - the defect is the DSL's error
    text = " ".join(str(exc).split())
    if any(p in text for p in PATTERNS):
        print(f"{NAME}: REPRODUCED on host: {type(exc).__name__}: ...{next(p for p in PATTERNS if p in text)}...")
        sys.exit(1)
    print(f"{NAME}: not run ({type(exc).__name__}: {text[:200]})")
    sys.exit(2)
right = torch.equal(out, expected)
print(f"{NAME}: {'fixed' if right else 'runs now, but WRONG'} on host: got {out.tolist()}, expected {expected.tolist()}")
sys.exit(0 if right else 1)
