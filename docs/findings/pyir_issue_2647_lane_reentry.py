"""PyIR: CUTLASS issue 2647's class, defined by exec() in a namespace that is no module of
sys.modules (as code generated at run time is), compiles into a kernel whose first call is refused.

Releases: 4.8.1 under the PyIR frontend (CUTE_DSL_ENABLE_PYIR=1 with CUTE_DSL_AUTO_M2S=1; this script
sets them); the default frontend runs it and is right. Path: GPU (host code has no lanes). Found by
the cute-dsl conformance harness on an H100 (frontend family, --frontend pyir, case
frontend-issue_2647_lane-i32, 2026-12-07): a class carried through __extract_mlir_values__ /
__new_from_mlir_values__ whose @cute.jit method stores its state under `if cute.arch.lane_idx() == 0`
and reassigns it after, used from a @cute.jit `body` that the kernel takes as a `cutlass.Constexpr`
(as the harness's frontend kernels take every record, each defined by exec() from its text). The
call raises SPEC_UNVERIFIABLE_REENTRY ("This compiled function baked a trace-time value that cannot
be re-checked against live state"), as the lambda of pyir_lambda_constexpr_in_branch.py does on the
host. The same text executed into a module registered in sys.modules runs and is right (the control
below; on an H100, 2026-12-07, so did the issue's kernel verbatim in this script's own module): what
PyIR cannot re-check is a global of a namespace it cannot find again.
Exit 1 while the defect shows, 0 once fixed (the call runs and is right), 2 when it cannot run
here (no GPU, the control fails, another error: not this defect).
"""
import os
import sys

os.environ.setdefault("CUTE_DSL_ENABLE_PYIR", "1")
os.environ.setdefault("CUTE_DSL_AUTO_M2S", "1")

import torch  # noqa: E402

import cuda.bindings.driver as cuda  # noqa: E402
import cutlass  # noqa: E402
import cutlass.cute as cute  # noqa: E402
from cutlass.cute.runtime import from_dlpack  # noqa: E402

NAME, PATTERN = "pyir_issue_2647_lane_reentry", "SPEC_UNVERIFIABLE_REENTRY"
THREADS = 8


SOURCE = """
class MyClass:  # CUTLASS issue 2647, verbatim
    def __init__(self, state, tensor, *, loc=None, ip=None):
        self.state = state
        self.tensor = tensor
        self._loc = loc
        self._ip = ip

    @cute.jit
    def mutate(self, *, loc=None, ip=None):
        state = 1
        if cute.arch.lane_idx() == 0:  # Without this, output is correct
            self.tensor[0, 0] = self.state
        self.state = state

    def __extract_mlir_values__(self):
        values, self._values_pos = [], []
        for obj in [self.state, self.tensor]:
            obj_values = cutlass.extract_mlir_values(obj)
            values += obj_values
            self._values_pos.append(len(obj_values))
        return values

    def __new_from_mlir_values__(self, values):
        obj_list = []
        for obj, n_items in zip([self.state, self.tensor], self._values_pos):
            obj_list.append(cutlass.new_from_mlir_values(obj, values[:n_items]))
            values = values[n_items:]
        return self.__class__(*(tuple(obj_list)), loc=self._loc)


@cute.jit
def body(t, x, out, k: cutlass.Constexpr):  # the issue's kernel body
    obj = MyClass(x[t], out)
    obj.mutate()
    out[t, 1] = cutlass.Int32(obj.state)
"""


def defined(module_name: str, registered: bool):
    """``body`` from SOURCE, executed into a namespace named ``module_name`` (in sys.modules or not).
    The text is written to a file first: the DSL's frontend reads a function's source with inspect."""
    import tempfile
    import types

    path = os.path.join(tempfile.mkdtemp(), f"{module_name}.py")
    with open(path, "w") as f:
        f.write(SOURCE)
    module = types.ModuleType(module_name)
    module.__file__ = path
    module.__dict__.update(cutlass=cutlass, cute=cute)
    if registered:
        sys.modules[module_name] = module
    exec(compile(SOURCE, path, "exec"), module.__dict__)  # noqa: S102 - this script's own text
    return module.body


@cute.kernel
def body_kernel(body: cutlass.Constexpr, k: cutlass.Constexpr, x: cute.Tensor, out: cute.Tensor):
    t, _, _ = cute.arch.thread_idx()
    body(t, x, out, k)


@cute.jit
def launch_body(body: cutlass.Constexpr, k: cutlass.Constexpr, x: cute.Tensor, out: cute.Tensor, stream: cuda.CUstream):
    body_kernel(body, k, x, out).launch(grid=(1, 1, 1), block=(THREADS, 1, 1), stream=stream)


def run(body) -> torch.Tensor:
    """``body`` compiled into the kernel (a Constexpr argument), then the compiled kernel called once."""
    x = torch.tensor([3, -1, 4, 1, 5, -9, 2, 6], dtype=torch.int32, device="cuda")
    out = torch.zeros(THREADS, 2, dtype=torch.int32, device="cuda")
    compiled = cute.compile(launch_body, body, 3, from_dlpack(x), from_dlpack(out), cuda.CUstream(0))
    compiled(from_dlpack(x), from_dlpack(out), cuda.CUstream(torch.cuda.current_stream().cuda_stream))
    torch.cuda.synchronize()
    return out.cpu()


if not torch.cuda.is_available():
    print(f"{NAME}: not run (no CUDA device)")
    sys.exit(2)
expected = torch.zeros(THREADS, 2, dtype=torch.int32)
expected[:, 1] = 1  # every thread's state after mutate()
expected[0, 0] = 3  # lane 0 of the one warp stored x[0] before it
try:
    control = run(defined("issue_2647_registered", registered=True))
except Exception as exc:  # noqa: BLE001 - not this defect
    print(f"{NAME}: not run (the body in a registered module fails: {type(exc).__name__}: {' '.join(str(exc).split())[:200]})")
    sys.exit(2)
if not torch.equal(control, expected):
    print(f"{NAME}: not run (the body in a registered module is wrong: got {control.tolist()}; that is issue 2647 itself)")
    sys.exit(2)
try:
    got = run(defined("issue_2647_generated", registered=False))
except Exception as exc:  # noqa: BLE001 - the defect is the DSL's error
    text = " ".join(str(exc).split())
    if PATTERN in text:
        print(f"{NAME}: REPRODUCED on the GPU (frontend: ENABLE_PYIR={os.environ['CUTE_DSL_ENABLE_PYIR']}): the body in a "
              f"registered module runs and is right; executed into a namespace no module of sys.modules holds, the "
              f"compiled kernel's first call raised {type(exc).__name__}: ...{PATTERN}...")
        sys.exit(1)
    print(f"{NAME}: not run ({type(exc).__name__}: {text[:200]})")
    sys.exit(2)
right = torch.equal(got, expected)
print(f"{NAME}: {'fixed' if right else 'runs now, but WRONG'} on the GPU: got {got.tolist()}, expected {expected.tolist()}")
sys.exit(0 if right else 1)
