"""``fixtures.dsl.kernels.register``: a user's kernel joins the gpu plan under its own name."""

import pytest

from fixtures.cases import matrix
from fixtures.cases.stages import STAGES
from fixtures.dsl.kernels import KERNELS, register

pytestmark = pytest.mark.harness


@pytest.fixture
def registered():
    """Register a stand-in launch function and unregister it afterwards."""
    names = []

    def _register(name, **kwargs):
        decorate = register(name, **kwargs)  # refused here: nothing to undo
        names.append(name)
        return decorate(lambda *args: None)

    yield _register
    for name in names:
        STAGES.pop(name, None)
        KERNELS.pop(name, None)


def test_registered_stage_runs_the_whole_gpu_plan_with_readable_ids(registered):
    registered("my_kernel", op="mul", domain=lambda m, n, d: "odd shapes only" if m % 2 == 0 else None)
    ids = [c.id for c in matrix.cases("gpu") if c.stage.name == "my_kernel"]
    assert "my_kernel-bf16-align16-dynamic-1000x1003" not in ids  # its domain says no to even M
    assert "my_kernel-bf16-align16-dynamic-97x101" in ids
    assert all(c.stage.op.name == "mul" for c in matrix.cases("gpu") if c.stage.name == "my_kernel")
    assert not any(c.stage.name == "my_kernel" for c in matrix.cases("compile")), "no access model, no tutorial rules"



def test_a_taken_name_or_an_unknown_op_is_refused(registered):
    with pytest.raises(ValueError, match="'tv' is already registered"):
        registered("tv")
    with pytest.raises(ValueError, match="unknown op 'div'"):
        registered("my_div", op="div")


def test_a_launch_function_of_the_wrong_arity_is_refused():
    """``(mA, mB, mC, stream)``, or the op first with ``takes_op``: anything else is refused at registration."""

    def three(mA, mB, mC):
        pass

    def five(op, mA, mB, mC, stream):
        pass

    with pytest.raises(ValueError, match=r"^stage 'my_three': three must take \(mA, mB, mC, stream\)$"):
        register("my_three")(three)
    with pytest.raises(ValueError, match=r"^stage 'my_five': five must take \(mA, mB, mC, stream\)$"):
        register("my_five")(five)
    try:
        register("my_five", takes_op=True)(five)
        assert STAGES["my_five"].takes_op
    finally:
        STAGES.pop("my_five", None)
    assert "my_three" not in STAGES


def test_a_registered_stage_is_compiled_in_every_layout_and_benched_in_compact(registered):
    registered("my_kernel")
    compiled = {c.id for c in matrix.cases("compile_registered")}
    assert len(compiled) == len(matrix.ARITHMETIC_DTYPES) * len(matrix.ALIGNMENTS) * len(matrix.LAYOUTS)
    assert {"my_kernel-fp16-align16-static-128x2048", "my_kernel-fp16-offset-colmajor-128x2048"} <= compiled
    assert all(i.startswith("my_kernel-") for i in compiled), "the registered plan holds only registered stages"
    benched = {c.id for c in matrix.cases("bench") if c.stage.name == "my_kernel"}
    assert benched == {f"my_kernel-{d}-align16-compact-{s}" for d in matrix.ARITHMETIC_DTYPES for s in ("16384x8192", "256x4096")}


def test_one_bench_layout_may_be_named_without_a_tuple(registered):
    registered("my_kernel", bench_layouts="colmajor")
    assert {c.layout for c in matrix.cases("bench") if c.stage.name == "my_kernel"} == {"colmajor"}


def test_bench_layouts_add_the_layouts_the_kernel_is_meant_for(registered):
    registered("my_kernel", bench_layouts=("compact", "colmajor"))
    layouts = {c.layout for c in matrix.cases("bench") if c.stage.name == "my_kernel"}
    assert layouts == {"compact", "colmajor"}
    assert {c.layout for c in matrix.cases("bench") if c.stage.name == "tuned"} == {"compact"}


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        pytest.param({"vector_bytes": 3}, "vector_bytes=3 is not an access width", id="vector-bytes"),
        pytest.param({"bench_layouts": ("rowmajor",)}, "bench_layouts \\('rowmajor',\\): layouts are static", id="bench-layout"),
        pytest.param({"bench_layouts": ()}, "bench_layouts \\(\\): layouts are", id="no-bench-layout"),
    ],
)
def test_a_declaration_that_cannot_hold_is_refused(registered, kwargs, message):
    with pytest.raises(ValueError, match=message):
        registered("my_kernel", **kwargs)
