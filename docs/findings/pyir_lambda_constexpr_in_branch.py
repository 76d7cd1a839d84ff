"""PyIR: a compiled function whose lambda reads a Constexpr parameter inside a dynamic `if` cannot be called.

Releases: 4.8.1 under the PyIR frontend (CUTE_DSL_ENABLE_PYIR=1 with CUTE_DSL_AUTO_M2S=1; this script
sets them); the default frontend runs it. Path: host JIT (calling the compiled function; the GPU path
calls its compiled kernel the same way, not run here). Found by the cute-dsl conformance harness (frontend family,
--frontend pyir, case frontend-lambda_branch_constexpr-i32-k8: CUTLASS issue
3061's lambda, called under an `if` on a runtime value). Its first call raises
SPEC_UNVERIFIABLE_REENTRY ("This compiled function baked a trace-time value that cannot be
re-checked against live state"). Without the `if`, or without the Constexpr in the lambda, it runs;
calling the @cute.jit function itself (not the handle cute.compile returned) runs too.
Exit 1 while the defect shows, 0 once fixed (every call runs and is right), 2 when it cannot run
here (another error: not this defect).
"""
import os
import sys

os.environ.setdefault("CUTE_DSL_ENABLE_PYIR", "1")
os.environ.setdefault("CUTE_DSL_AUTO_M2S", "1")

import torch  # noqa: E402

import cutlass  # noqa: E402
import cutlass.cute as cute  # noqa: E402
from cutlass.cute.runtime import from_dlpack  # noqa: E402

NAME, PATTERN = "pyir_lambda_constexpr_in_branch", "SPEC_UNVERIFIABLE_REENTRY"


@cute.jit
def on_host(x: cute.Tensor, out: cute.Tensor, t: cutlass.Int32, k: cutlass.Constexpr[int]):
    func = lambda v: v // 4 * 3 if k >= 8 else v // 2  # noqa: E731 - issue 3061's lambda
    if x[t] > cutlass.Int32(2):  # a runtime condition
        out[t] = func(t)


x = torch.tensor([3, -1, 4, 1, 5, -9, 2, 6], dtype=torch.int32)
out = torch.zeros(8, dtype=torch.int32)
expected = torch.tensor([0, 0, 0, 0, 3, 0, 0, 3], dtype=torch.int32)
calls = 0
try:
    compiled = cute.compile(on_host, from_dlpack(x), from_dlpack(out), cutlass.Int32(0), 8)
    for t in range(8):
        compiled(from_dlpack(x), from_dlpack(out), cutlass.Int32(t))
        calls += 1
except Exception as exc:  # noqa: BLE001 - the defect is the DSL's error
    text = " ".join(str(exc).split())
    if PATTERN in text:
        print(f"{NAME}: REPRODUCED on host (frontend: ENABLE_PYIR={os.environ['CUTE_DSL_ENABLE_PYIR']}): call {calls + 1} "
              f"of the compiled function raised {type(exc).__name__}: ...{PATTERN}...")
        sys.exit(1)
    print(f"{NAME}: not run ({type(exc).__name__}: {text[:200]})")
    sys.exit(2)
right = torch.equal(out, expected)
print(f"{NAME}: {'fixed' if right else 'runs now, but WRONG'} on host: got {out.tolist()}, expected {expected.tolist()}")
sys.exit(0 if right else 1)
