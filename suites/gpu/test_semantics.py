"""The semantics family on the GPU: every record (``fixtures.cases.semantics``) on every type it is
defined on, inside a kernel (one compile per case, whatever else runs), judged against the
record's reference and against the host JIT's result for the same operands (the host tier's
test of the case, where the run has it: ``fixtures.plugin.meeting``). A GPU/host disagreement is
its own failure (``GpuHostDisagreement``), whichever path matches the reference; a meaning the DSL
defines itself that differs from its release line's pin is ``MeaningChanged``.
Select with ``-k semantics``, a record (``-k semantics-floordiv``), a type (``-k 'semantics and u8'``)."""

import pytest

from fixtures.cases import semantics as sem
from fixtures.plugin.semantics import SEMANTICS_KEY, semantics_params

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("case", semantics_params("gpu"))
def test_semantics_on_gpu(case, semantics_runner, meeting, request):
    from fixtures.dsl import semantics as run

    run.require_export(case, "GPU")
    ops, gpu, expected = semantics_runner.run(case, "gpu")
    found = run.meanings(case, "gpu", ops, gpu)
    host = None
    if sem.known(case, "host") is None:  # a host path that cannot run it (or runs it wrongly) is not compared
        if not meeting.apart:  # the host tier's test is not in the run: the host JIT runs here
            _, host, _ = semantics_runner.run(case, "host")
            found += run.meanings(case, "host", ops, host)
        elif sem.known(case, "gpu") is None:  # it is: of the two, the one that ends second compares
            host = meeting.leave("gpu", gpu, "host")
    request.node.user_properties.append((SEMANTICS_KEY, found))
    run.judge(case, found, *([lambda: run.check_paths_agree(case, ops, gpu, host, expected)] if host is not None else []),
              lambda: run.check_against_reference(case, "GPU", ops, gpu, expected), path="gpu", ops=ops, got=gpu)
