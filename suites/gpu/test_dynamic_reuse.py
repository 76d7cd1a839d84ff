"""Dynamic layouts: one compiled object from the DSL serves every shape.

``mark_layout_dynamic`` and ``mark_compact_shape_dynamic`` exist so one compiled kernel serves
every shape. Each sequence compiles once per signature (a compact layout may declare two
divisibilities), then runs every shape through that same compiled object with the DSL's tracer
forbidden: a compile by any path (the harness's cache missing, or the DSL tracing the kernel
again for a new shape) fails the test, and every shape's result is checked as the gpu tier's are.
"""

import pytest
import torch
from cutlass.base_dsl.dsl import BaseDSL

from fixtures.cases import matrix
from fixtures.cases.dtypes import DTYPES
from fixtures.cases.matrix import Case
from fixtures.cases.stages import BUILT_IN_STAGES
from fixtures.dsl import runner
from fixtures.dsl.compiler import Compiler
from fixtures.plugin.params import sequence_marks

pytestmark = pytest.mark.gpu

# tile-aligned shapes for the unpredicated stages, every family for the predicated one
ALIGNED = ((128, 2048), (256, 1024), (64, 4096), (1024, 2048))
ANY = ALIGNED + tuple(s for family in ("odd", "unit", "tall", "wide") for s in matrix.SHAPE_FAMILIES[family])

REUSE = [
    pytest.param(
        stage, layout, dtype, shapes, id=f"{stage}-{dtype}-align16-{layout}",
        marks=sequence_marks([Case(BUILT_IN_STAGES[stage], DTYPES[dtype], "align16", layout, s, "reuse") for s in shapes], "gpu"),
    )
    for stage, shapes in (("tv_remap", ALIGNED), ("apply_mul_relu", ALIGNED), ("predicated", ANY))
    for layout in ("dynamic", "compact")
    for dtype in ("fp16", "fp32")
]


@pytest.mark.parametrize(("stage", "layout", "dtype", "shapes"), REUSE)
def test_one_compile_serves_every_shape(stage, layout, dtype, shapes, seed, monkeypatch):
    cases = [Case(BUILT_IN_STAGES[stage], DTYPES[dtype], "align16", layout, shape, "reuse") for shape in shapes]
    assert [c.id for c in cases if matrix.outside_domain(c)] == []
    compiler = Compiler()  # this test's own: nothing compiled before it counts
    firsts = {}
    for case in cases:
        firsts.setdefault(case.signature, case)
    compiled = {sig: runner.prepare(case, seed, compiler).compiled for sig, case in firsts.items()}
    assert sum(compiler.compiles.values()) == len(compiled)
    # compact layouts differ only in declared divisibility; dynamic ones share one signature
    assert len(compiled) <= 2 if layout == "compact" else len(compiled) == 1, list(compiled)

    def traced_again(*args, **kwargs):
        raise AssertionError("the DSL traced the kernel again: a shape did not reuse the compiled object")

    monkeypatch.setattr(BaseDSL, "generate_mlir", traced_again)
    for i, case in enumerate(cases):
        launch = runner.prepare(case, seed + i, compiler)
        assert launch.compiled is compiled[case.signature], case.id
        launch.launch()
        torch.cuda.synchronize()
        launch.verify()
