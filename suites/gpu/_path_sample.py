"""The gpu plan's cases the other call paths run (``suites/gpu/test_call_paths.py``,
``suites/gpu/test_aot.py``): per stage, one case of each of ``CLASSES`` (13: every layout, the
three alignments, operands laid out apart in a static and a dynamic call, the three in-place
calls) taken from the gpu plan's own cases on its odd and aligned shapes; in the ``s``-th stage
class ``i`` takes the ``(i + s)``-th arithmetic dtype (the next one the plan has there, where it
has none), so every stage meets every dtype, and the ``(i + s)``-th of the plan's cases of that
class and dtype, so the shapes and the per-operand layouts vary. Deterministic: 117 cases over
the built-in stages.
"""

from __future__ import annotations

from fixtures.cases import matrix
from fixtures.cases.matrix import Case
from fixtures.cases.stages import BUILT_IN_STAGES

# (alignment, layout, kind): kind None a plain case, "mixed" operands laid out apart, else an in-place call
CLASSES = (
    ("align16", "static", None),
    ("align16", "dynamic", None),
    ("align16", "compact", None),
    ("natural", "colmajor", None),
    ("offset", "strided", None),
    ("natural", "bcast", None),
    ("natural", "dynamic", None),
    ("offset", "compact", None),
    ("align16", "static", "mixed"),
    ("align16", "dynamic", "mixed"),
    ("align16", "dynamic", "c_is_a"),
    ("align16", "colmajor", "c_is_b"),
    ("align16", "static", "a_is_b"),
)
FAMILIES = ("odd", "aligned")  # no unit shapes: a 1x1 tensor has no leading dimension to deduce (below)


def kind(case: Case) -> str | None:
    return "mixed" if case.operands else case.alias


def sample(stages=BUILT_IN_STAGES) -> list[Case]:
    """The sample (the module's docstring says how it is chosen)."""
    found: dict[tuple, dict[str, list[Case]]] = {}
    for case in matrix.cases("gpu", stages):
        if case.family in FAMILIES:
            key = (case.stage.name, case.align, case.layout, kind(case))
            found.setdefault(key, {}).setdefault(case.dtype.id, []).append(case)
    dtypes = matrix.ARITHMETIC_DTYPES
    picked = []
    for s, stage in enumerate(stages.values()):
        for i, class_ in enumerate(CLASSES):
            by_dtype = found.get((stage.name, *class_), {})
            k = (i + s) % len(dtypes)
            dtype = next((d for d in dtypes[k:] + dtypes[:k] if d in by_dtype), None)
            if dtype is not None:
                picked.append(by_dtype[dtype][(i + s) % len(by_dtype[dtype])])
    return picked
