"""DSL 4.3: Uint8 .to(BFloat16) kills the process (a gpu-tier worker died on it).

Releases: 4.3.5 (4.8.1 converts it). Paths: GPU and host JIT (seen on an H100 host; the host
JIT of 4.3 needs a CUDA driver, so this runs on a GPU machine only).
Found by the cute-dsl conformance harness (semantics family, case semantics-to-bf16-u8).
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

    @cute.kernel
    def kernel(out: cute.Tensor, a: cute.Tensor):
        out.store(a.load().to(cutlass.BFloat16))

    @cute.jit
    def on_gpu(out: cute.Tensor, a: cute.Tensor):
        kernel(out, a).launch(grid=(1, 1, 1), block=(1, 1, 1))

    a = torch.tensor([0, 1, 2, 127, 128, 200, 255, 3], dtype=torch.uint8, device="cuda")
    out = torch.zeros(a.shape, dtype=torch.bfloat16, device="cuda")
    on_gpu(from_dlpack(out), from_dlpack(a))
    torch.cuda.synchronize()
    print("converted", flush=True)
    sys.exit(0 if torch.equal(out.cpu(), a.cpu().to(torch.bfloat16)) else 3)

if not torch.cuda.is_available():
    print("u8_to_bf16_crash_43: not run (needs a GPU)")
    sys.exit(2)
child = subprocess.run([sys.executable, __file__, "--child"], capture_output=True, text=True)
if "converted" not in child.stdout and "Traceback" not in child.stderr:
    how = f"signal {-child.returncode}" if child.returncode < 0 else f"exit status {child.returncode}, no Python error"
    print(f"u8_to_bf16_crash_43: REPRODUCED on gpu: the process died in the conversion ({how})")
    sys.exit(1)
verdict = {0: "fixed", 3: "runs now, but WRONG"}.get(child.returncode, f"not run ({child.stderr.strip().splitlines()[-1:]})")
print(f"u8_to_bf16_crash_43: {verdict}")
sys.exit({0: 0, 3: 1}.get(child.returncode, 2))
