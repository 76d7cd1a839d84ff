"""DSL 4.3: the host JIT's Float32 .to(Float8E4M3FN) aborts the process (a pytest worker died on it).

Releases: 4.3.5 (4.8.1 raises instead: 'Failure while creating the ExecutionEngine',
host_fp8_conversion.py). Path: host JIT. Seen on an H100 host on 2026-12-07 for ten conversions: fp8
to Float32 and Float64, Float16, BFloat16 and Float32 to fp8 ('Fatal Python error: Aborted' in the
execution engine's symbol lookup); this script takes Float32 to Float8E4M3FN. The host JIT of 4.3
needs a CUDA driver, so this runs on a GPU machine only.
Found by the cute-dsl conformance harness (semantics family, case semantics-to-e4m3-f32, host).
The conversion runs in a child process: exit 1 when the child dies in it (a signal, or an exit
with no Python error: the defect), 0 when it converts right, 2 when it cannot run here (another
error: not this defect).
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
        out.store(a.load().to(cutlass.Float8E4M3FN))

    a = torch.tensor([1.0, 0.5, -2.0, 448.0, 0.0, 3.0, -0.25, 8.0], dtype=torch.float32)
    out = torch.zeros(a.shape, dtype=torch.float8_e4m3fn)
    on_host(from_dlpack(out), from_dlpack(a))
    print("converted", flush=True)
    sys.exit(0 if torch.equal(out.view(torch.uint8), a.to(torch.float8_e4m3fn).view(torch.uint8)) else 3)

if not torch.cuda.is_available():
    print("host_fp8_float_abort_43: not run (needs a GPU machine: 4.3's host JIT needs the driver)")
    sys.exit(2)
child = subprocess.run([sys.executable, __file__, "--child"], capture_output=True, text=True)
if "converted" not in child.stdout and "Traceback" not in child.stderr:
    how = f"signal {-child.returncode}" if child.returncode < 0 else f"exit status {child.returncode}, no Python error"
    print(f"host_fp8_float_abort_43: REPRODUCED on host: the process died in the conversion ({how})")
    sys.exit(1)
verdict = {0: "fixed", 3: "runs now, but WRONG"}.get(child.returncode, f"not run ({child.stderr.strip().splitlines()[-1:]})")
print(f"host_fp8_float_abort_43: {verdict}")
sys.exit({0: 0, 3: 1}.get(child.returncode, 2))
