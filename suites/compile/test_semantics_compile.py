"""The semantics family's GPU kernels compile for ``--arch`` on a machine without a GPU: one case of
each kind of operation on each type (the gpu tier compiles every case; this sample keeps the compile
tier's share small), so a kernel the DSL will not build is found before any GPU runs it."""

import pytest

from fixtures.cases import semantics as sem
from fixtures.plugin.semantics import semantics_params

pytestmark = pytest.mark.compile


def _sample() -> list[sem.SemanticsCase]:
    """The first case of each (kind, type, form): for a conversion, of each (target, source kind)."""
    seen, sample = set(), []
    for case in sem.cases():
        key = (case.op.kind, case.type.id, case.rhs, case.source.is_float if case.source else None)
        if key not in seen:
            seen.add(key)
            sample.append(case)
    return sample


@pytest.mark.parametrize("case", semantics_params("gpu", _sample(), compile_only=True))
def test_semantics_kernel_compiles(case, compiled_by_the_gpu_tier, semantics_runner):
    from fixtures.dsl import semantics as run

    run.require_export(case, "compile")
    semantics_runner.compile_gpu(case)
