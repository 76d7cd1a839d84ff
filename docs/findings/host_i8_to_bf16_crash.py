"""The host JIT's Int8 .to(BFloat16) kills the process.

Releases: 4.8.1. Path: host JIT (seen on the CPU machine).
Found by the cute-dsl conformance harness (semantics family, case semantics-to-bf16-i8 (host)).
The conversion runs in a child process: exit 1 when the child dies in it (a signal, or an exit
with no Python error: the defect), 0 when it converts right, 2 when it cannot run here.
"""
import subprocess
import sys

import torch

if sys.argv[1:] == ["--child"]:
    import cutlass
    import cutlass.cute as cute
    from cutlass.cute.runtime import from_dlpack

    @cute.jit
    def on_host(out: cute.Tensor, a: cute.Tensor):
        out.store(a.load().to(cutlass.BFloat16))

    a = torch.tensor([0, 1, -2, 127, -128, 100, -1, 3], dtype=torch.int8)
    out = torch.zeros(a.shape, dtype=torch.bfloat16)
    on_host(from_dlpack(out), from_dlpack(a))
    print("converted", flush=True)
    sys.exit(0 if torch.equal(out.cpu(), a.cpu().to(torch.bfloat16)) else 3)

child = subprocess.run([sys.executable, __file__, "--child"], capture_output=True, text=True)
if "converted" not in child.stdout and "Traceback" not in child.stderr:
    how = f"signal {-child.returncode}" if child.returncode < 0 else f"exit status {child.returncode}, no Python error"
    print(f"host_i8_to_bf16_crash: REPRODUCED on host: the process died in the conversion ({how})")
    sys.exit(1)
verdict = {0: "fixed", 3: "runs now, but WRONG"}.get(child.returncode, f"not run ({child.stderr.strip().splitlines()[-1:]})")
print(f"host_i8_to_bf16_crash: {verdict}")
sys.exit({0: 0, 3: 1}.get(child.returncode, 2))
