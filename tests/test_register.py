"""``fixtures.dsl.kernels.register``: a user's kernel joins the gpu plan under its own name."""

import pytest

from fixtures.cases import matrix
from fixtures.cases.stages import STAGES
from fixtures.dsl.kernels import register

pytestmark = pytest.mark.harness


@pytest.fixture
def registered():
    """Register a stand-in launch function and unregister it afterwards."""
    names = []

    def _register(name, **kwargs):
        names.append(name)
        return register(name, **kwargs)(lambda *args: None)

    yield _register
    for name in names:
        STAGES.pop(name, None)


def test_registered_stage_runs_the_whole_gpu_plan_with_readable_ids(registered):
    registered("my_kernel", op="mul", domain=lambda m, n, d: "odd shapes only" if m % 2 == 0 else None)
    ids = [c.id for c in matrix.cases("gpu") if c.stage.name == "my_kernel"]
    assert "my_kernel-bf16-align16-dynamic-1000x1003" not in ids  # its domain says no to even M
    assert "my_kernel-bf16-align16-dynamic-97x101" in ids
    assert all(c.stage.op.name == "mul" for c in matrix.cases("gpu") if c.stage.name == "my_kernel")
    assert not any(c.stage.name == "my_kernel" for c in matrix.cases("compile")), "no access model, no compile tier"


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
