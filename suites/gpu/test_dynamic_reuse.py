"""Dynamic layouts: one compile per signature, then many shapes through it.

``mark_layout_dynamic`` and ``mark_compact_shape_dynamic`` exist so one compiled kernel serves
every shape; this runs a sequence of shapes through each and asserts both the results and
that the signature was compiled exactly once (every later shape a cache hit).
"""

import pytest

from fixtures.cases import matrix
from fixtures.cases.dtypes import DTYPES
from fixtures.cases.matrix import Case
from fixtures.cases.stages import STAGES
from fixtures.dsl import compiler, runner
from fixtures.plugin.params import sequence_marks

pytestmark = pytest.mark.gpu

# tile-aligned shapes for the unpredicated stages, every family for the predicated one
ALIGNED = ((128, 2048), (256, 1024), (64, 4096), (1024, 2048))
ANY = ALIGNED + tuple(s for family in ("odd", "unit", "tall", "wide") for s in matrix.SHAPE_FAMILIES[family])

REUSE = [
    pytest.param(
        stage, layout, dtype, shapes, id=f"{stage}-{dtype}-align16-{layout}",
        marks=sequence_marks([Case(STAGES[stage], DTYPES[dtype], "align16", layout, s, "reuse") for s in shapes], "gpu"),
    )
    for stage, shapes in (("tv_remap", ALIGNED), ("apply_mul_relu", ALIGNED), ("predicated", ANY))
    for layout in ("dynamic", "compact")
    for dtype in ("fp16", "fp32")
]


@pytest.mark.parametrize(("stage", "layout", "dtype", "shapes"), REUSE)
def test_one_compile_serves_every_shape(stage, layout, dtype, shapes, request):
    cases = [Case(STAGES[stage], DTYPES[dtype], "align16", layout, shape, "reuse") for shape in shapes]
    signatures = {c.signature for c in cases}
    for i, case in enumerate(cases):
        assert matrix.outside_domain(case) is None, case.id
        runner.run_case(case, seed=runner.seed_for(f"{request.node.nodeid}-{i}"))
    compiles = {sig: compiler.COMPILES[sig] for sig in signatures}
    assert all(n == 1 for n in compiles.values()), f"signatures compiled more than once: {compiles}"
    # compact layouts differ only in declared divisibility; dynamic ones share one signature
    assert len(signatures) <= 2 if layout == "compact" else len(signatures) == 1, signatures
