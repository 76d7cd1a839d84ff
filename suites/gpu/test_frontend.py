"""The frontend family on the GPU: every construct's body run by each thread of a one-block
kernel, as the run's frontend rewrites it (``--frontend``), judged against the same body run as
plain Python and against the host JIT's result (the host tier's test of the case, where the run
has it: ``fixtures.plugin.meeting``; a GPU/host disagreement is its own failure,
``GpuHostDisagreement``, whichever path matches the reference); what a record prints
(``cute.printf``) is captured and judged too. Select with ``-k frontend``."""

import pytest

from fixtures.cases import frontend as fe
from fixtures.plugin.frontend import frontend_params

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("case", frontend_params("gpu"))
def test_frontend_on_gpu(case, frontend_runner, meeting):
    import os

    from fixtures.dsl import frontend as run

    frontend = fe.frontend_in(os.environ)
    reference = run.expected(case)
    gpu = frontend_runner.run(case, "gpu")
    if "host" in case.construct.paths and fe.known(case, "host", frontend) is None:  # else not compared
        if not meeting.apart:  # the host tier's test is not in the run: the host JIT runs here
            host = frontend_runner.run(case, "host")
        else:  # it is: of the two, the one that ends second compares
            host = meeting.leave("gpu", gpu, "host") if fe.known(case, "gpu", frontend) is None else None
        if host is not None:
            run.check_paths_agree(case, gpu, host, reference)
    run.check_against_reference(case, "gpu", gpu, reference)
