"""A registered stage whose kernel is a callable object (NVIDIA's autotuned elementwise example
keeps its ``@cute.jit`` in ``ElementwiseAddWrapper.__call__``): a failing case keeps the kernel's
own failure, and its reproducer names the object by the global it is bound to and imports it
alone; an object bound to no global fails with its own failure too, saying why no reproducer."""

import json

import pytest

from fixtures.dsl.kernels import register
from tests.conftest import ADD_KERNEL, carried_kernel_alone

pytestmark = pytest.mark.harness

CALLABLE_STAGES = ADD_KERNEL + '''
from fixtures.dsl.kernels import register


class ElementwiseAddWrapper:
    """The example's shape: the kernel's settings on the object, its host function ``__call__``."""

    def __init__(self, threads: int = 256):
        self.threads = threads

    @cute.jit
    def __call__(self, mA: cute.Tensor, mB: cute.Tensor, mC: cute.Tensor, stream: cuda.CUstream):
        m, n = mC.shape
        _add_kernel(mA, mB, mC).launch(grid=((m * n + 255) // 256, 1, 1), block=(256, 1, 1), stream=stream)


wrapped_add = register("wrapped_add")(ElementwiseAddWrapper())
register("unbound_add")(ElementwiseAddWrapper())
'''

# the runner's launch replaced by the failure a wrong kernel gives: the gpu tier's path to
# run_case's record, on the CPU
FAILING_CASES = '''
import pytest

import callable_stages
from fixtures.cases import failures, matrix
from fixtures.cases.dtypes import DTYPES
from fixtures.dsl import runner
from fixtures.dsl.kernels import registered_in


def mismatch(case, seed, compiler):
    raise failures.Mismatch(f"{case.id}: 3 of 9797 elements differ from torch (exactly); first at (0, 7)")


@pytest.mark.host
@pytest.mark.parametrize("name", ["wrapped_add", "unbound_add"])
def test_case(name, run_case, monkeypatch):
    (stage,) = [s for s in registered_in(callable_stages) if s.name == name]
    monkeypatch.setattr(runner, "run_case", mismatch)
    run_case(matrix.Case(stage, DTYPES["fp16"], "align16", "static", (97, 101), "odd"))
'''

MISMATCH = "fixtures.cases.failures.Mismatch: {}-fp16-align16-static-97x101: 3 of 9797 elements differ from torch (exactly)"


@pytest.fixture
def failed_run(project):
    """The run's cases by id, and the folder of its reproducers."""
    project.makepyfile(callable_stages=CALLABLE_STAGES, test_failing=FAILING_CASES)
    out, repros = project.path / "out", project.path / "repros"
    # a process of its own: 4.3.5 leaves a compile's PTX in the dump folder the DSL read at its
    # first import, which in this process is not the run's
    result = project.runpytest_subprocess("test_failing.py", "--stage-module", "callable_stages",
                                         f"--report-dir={out}", f"--repro-dir={repros}")
    assert result.ret == pytest.ExitCode.TESTS_FAILED, result.stdout.str()[-3000:]
    cases = json.loads((out / "results.json").read_text())["cases"]
    return {c["nodeid"].partition("[")[2].rstrip("]"): c for c in cases}, repros


def test_a_failing_case_keeps_its_failure_and_names_the_bound_object(failed_run, tmp_path):
    cases, repros = failed_run
    case = cases["wrapped_add"]
    assert case["outcome"] == "failed" and case["message"].startswith(MISMATCH.format("wrapped_add"))
    assert (case["repro"]["launch_module"], case["repro"]["launch_function"]) == ("callable_stages", "wrapped_add")
    (script,) = repros.glob("repro_*.py")
    assert "# kernel: callable_stages.wrapped_add" in script.read_text()
    shown = carried_kernel_alone(tmp_path, script.read_text(), "type(kernel).__name__, kernel.threads")
    assert shown == ["ElementwiseAddWrapper", "256"], "the object itself, imported from the carried module"


def test_an_object_bound_to_no_global_keeps_its_failure_and_says_why_no_reproducer(failed_run):
    cases, _ = failed_run
    case = cases["unbound_add"]
    assert case["outcome"] == "failed" and case["message"].startswith(MISMATCH.format("unbound_add"))
    assert ("no reproducer: LookupError: ElementwiseAddWrapper.__call__ is bound to no global of callable_stages: "
            "a reproducer imports the kernel by name") in case["message"]
    assert case["repro"] is None


def test_an_object_of_the_wrong_arity_is_refused_by_its_class_name():
    class ThreeOperands:
        def __call__(self, mA, mB, mC):
            pass

    with pytest.raises(ValueError, match=r"^stage 'my_three': ThreeOperands.__call__ must take \(mA, mB, mC, stream\)$"):
        register("my_three")(ThreeOperands())
