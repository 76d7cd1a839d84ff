"""The host JIT narrows to a 16-bit float by calling libgcc where the CPU has no instruction for it,
and links only where the process's global scope holds a libgcc that defines the call: 'Symbols not
found' where libgcc lacks it, and in some processes where it has it (`import torch` loads libgcc,
but not into that scope).

- Float32 to BFloat16: `__truncsfbf2` (libgcc from GCC 13) without AVX512-BF16 or AVX-NE-CONVERT;
  every BFloat16 result computed in Float32 (+, *, cute.math, reductions) needs it.
- Float64 to BFloat16: `__truncdfbf2` (GCC 13) on every x86-64 CPU.
- Float64 to Float16: `__truncdfhf2` (GCC 12) without AVX512-FP16.

Releases: 4.8.1. Path: host JIT. Seen: the CPU machine of 2026-12-06 (an AMD EPYC without AVX512,
Debian 12's GCC 12: all three fail in a fresh process), and an H100 host (Float64 to BFloat16
linked in some processes, not in others). `grep -o 'avx512_bf16\\|avx512_fp16' /proc/cpuinfo`
says which instructions a machine has.
Found by the cute-dsl conformance harness (semantics family, cases semantics-to-bf16-f32,
semantics-to-bf16-f64, semantics-to-f16-f64 (host)).
Exit 1 while any conversion shows the defect (the DSL raises naming the call), 0 once each runs
and is right, 2 when none can run here (another error: not this defect).
"""
import sys

import torch
import cutlass
import cutlass.cute as cute
from cutlass.cute.runtime import from_dlpack

NAME = 'host_narrowing_link'


@cute.jit
def to_bf16(out: cute.Tensor, a: cute.Tensor):
    out.store(a.load().to(cutlass.BFloat16))


@cute.jit
def to_f16(out: cute.Tensor, a: cute.Tensor):
    out.store(a.load().to(cutlass.Float16))


# (what, the host function, the source dtype, the result dtype, libgcc's call)
CONVERSIONS = [
    ("Float32 to BFloat16", to_bf16, torch.float32, torch.bfloat16, "__truncsfbf2"),
    ("Float64 to BFloat16", to_bf16, torch.float64, torch.bfloat16, "__truncdfbf2"),
    ("Float64 to Float16", to_f16, torch.float64, torch.float16, "__truncdfhf2"),
]

outcomes = []
for what, function, source, result, call in CONVERSIONS:
    a = torch.tensor([1.0, -2.5, 3.0, 0.0], dtype=source)
    out = torch.zeros(a.shape, dtype=result)
    try:
        function(from_dlpack(out), from_dlpack(a))
    except Exception as exc:  # noqa: BLE001 - the defect is the DSL's error
        text = " ".join(str(exc).split())
        reproduced = call in text
        outcomes.append("REPRODUCED" if reproduced else "not run")
        print(f"{NAME}: {what}: " + (f"REPRODUCED on host: {type(exc).__name__}: ...{call}..." if reproduced
                                     else f"not run ({type(exc).__name__}: {text[:200]})"))
        continue
    right = torch.equal(out, a.to(result))
    outcomes.append("fixed" if right else "WRONG")
    print(f"{NAME}: {what}: {'links and is right' if right else 'runs now, but WRONG'}: got {out.tolist()}")
if "REPRODUCED" in outcomes or "WRONG" in outcomes:
    sys.exit(1)
sys.exit(0 if "fixed" in outcomes else 2)
