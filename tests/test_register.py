"""``fixtures.dsl.kernels.register``: a user's kernel joins the gpu plan under its own name."""

import types

import pytest

from fixtures.cases import matrix
from fixtures.cases.stages import BUILT_IN_STAGES, with_registered
from fixtures.dsl.kernels import kernel_of, register, registered_in

pytestmark = pytest.mark.harness


def stage_module(name: str, **kwargs) -> types.ModuleType:
    """A stage module registering a stand-in launch function as ``name``."""
    module = types.ModuleType("my_stages")
    vars(module).update(register=register, name=name, kwargs=kwargs)
    exec("my_kernel = register(name, **kwargs)(lambda *args: None)", vars(module))
    return module


def registered(name: str, **kwargs):
    """The run's stages once a module registers ``name``."""
    return with_registered(registered_in(stage_module(name, **kwargs)))


def test_registered_stage_runs_the_whole_gpu_plan_with_readable_ids():
    stages = registered("my_kernel", op="mul", domain=lambda m, n, d: "odd shapes only" if m % 2 == 0 else None)
    ids = [c.id for c in matrix.cases("gpu", stages) if c.stage.name == "my_kernel"]
    assert "my_kernel-bf16-align16-dynamic-1000x1003" not in ids  # its domain says no to even M
    assert "my_kernel-bf16-align16-dynamic-97x101" in ids
    assert all(c.stage.op.name == "mul" for c in matrix.cases("gpu", stages) if c.stage.name == "my_kernel")
    assert not any(c.stage.name == "my_kernel" for c in matrix.cases("compile", stages)), "no access model, no tutorial rules"


def test_registering_changes_no_other_run():
    """``register`` records the stage in its module; only a run that loads the module holds it."""
    module = stage_module("my_kernel")
    assert "my_kernel" not in BUILT_IN_STAGES
    assert not any(c.stage.name == "my_kernel" for c in matrix.cases("gpu"))
    (stage,) = registered_in(module)
    assert stage.name == "my_kernel" and kernel_of(stage).launch is module.my_kernel


def test_a_built_in_name_a_name_taken_twice_or_an_unknown_op_is_refused():
    with pytest.raises(ValueError, match="'tv' is built in"):
        registered("tv")
    module = stage_module("my_kernel")
    with pytest.raises(ValueError, match="'my_kernel' is already registered by this module"):
        exec("register(name, **kwargs)(lambda *args: None)", vars(module))
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
    assert register("my_five", takes_op=True)(five) is five


def test_a_registered_stage_is_compiled_in_every_layout_and_benched_in_compact():
    stages = registered("my_kernel")
    cases = matrix.cases("compile_registered", stages)
    compiled = {c.id for c in cases}
    assert len([c for c in cases if c.family == "aligned"]) == len(matrix.ARITHMETIC_DTYPES) * len(matrix.ALIGNMENTS) * len(matrix.LAYOUTS)
    assert {"my_kernel-fp16-align16-static-128x2048", "my_kernel-fp16-offset-colmajor-128x2048"} <= compiled
    # and the large family, laid out otherwise too: where its index widths tell
    assert {"my_kernel-i8-align16-static-32832x65536", "my_kernel-i8-align16-dynamic-a_colmajor-b_rowbcast-c_strided-32832x65536"} <= compiled
    assert all(i.startswith("my_kernel-") for i in compiled), "the registered plan holds only registered stages"
    benched = {c.id for c in matrix.cases("bench", stages) if c.stage.name == "my_kernel"}
    assert benched == {f"my_kernel-{d}-align16-compact-{s}" for d in matrix.ARITHMETIC_DTYPES for s in ("16384x8192", "256x4096")}


def test_a_registered_stage_is_held_to_torch_add_only_where_it_declares_a_floor():
    """The bench tier's ratio to torch.add fails the tuned stage below its floor, a registered
    one only below the floor it declares (``suites/bench/test_tuned_vs_torch.py``)."""
    assert registered("my_kernel")["my_kernel"].torch_add_floor is None
    assert registered("my_kernel", torch_add_floor=0.8)["my_kernel"].torch_add_floor == 0.8


def test_one_bench_layout_may_be_named_without_a_tuple():
    stages = registered("my_kernel", bench_layouts="colmajor")
    assert {c.layout for c in matrix.cases("bench", stages) if c.stage.name == "my_kernel"} == {"colmajor"}


def test_bench_layouts_add_the_layouts_the_kernel_is_meant_for():
    stages = registered("my_kernel", bench_layouts=("compact", "colmajor"))
    layouts = {c.layout for c in matrix.cases("bench", stages) if c.stage.name == "my_kernel"}
    assert layouts == {"compact", "colmajor"}
    assert {c.layout for c in matrix.cases("bench", stages) if c.stage.name == "tuned"} == {"compact"}


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        pytest.param({"vector_bytes": 3}, "vector_bytes=3 is not an access width", id="vector-bytes"),
        pytest.param({"bench_layouts": ("rowmajor",)}, "bench_layouts \\('rowmajor',\\): layouts are static", id="bench-layout"),
        pytest.param({"bench_layouts": ()}, "bench_layouts \\(\\): layouts are", id="no-bench-layout"),
        pytest.param({"torch_add_floor": 0}, "torch_add_floor=0 is not a ratio", id="torch-add-floor"),
    ],
)
def test_a_declaration_that_cannot_hold_is_refused(kwargs, message):
    with pytest.raises(ValueError, match=message):
        registered("my_kernel", **kwargs)


def test_two_stage_modules_may_not_register_one_name(tmp_path, monkeypatch):
    """Loaded at start (``--stage-module``): a name both register is one line, naming both."""
    from fixtures.plugin.startup import StartupError, load_stage_modules

    for module in ("first_stages", "second_stages"):
        (tmp_path / f"{module}.py").write_text(
            "from fixtures.dsl.kernels import register\n\n"
            "@register('my_add')\ndef my_add(mA, mB, mC, stream):\n    pass\n"
        )
    monkeypatch.syspath_prepend(str(tmp_path))
    assert [s.name for s in load_stage_modules(["first_stages"])] == ["my_add"]
    with pytest.raises(StartupError, match="^--stage-module second_stages: stage 'my_add' is registered by first_stages too$"):
        load_stage_modules(["first_stages", "second_stages"])
