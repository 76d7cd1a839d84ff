"""The frontend family on the GPU: every construct's body run by each thread of a one-block
kernel, as the run's frontend rewrites it (``--frontend``), judged against the same body run as
plain Python and against the host JIT's result (a GPU/host disagreement is its own failure,
``GpuHostDisagreement``, whichever path matches the reference); what a record prints
(``cute.printf``) is captured and judged too. Select with ``-k frontend``."""

import pytest

from fixtures.cases import frontend as fe
from fixtures.plugin.frontend import frontend_params

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("case", frontend_params("gpu"))
def test_frontend_on_gpu(case, frontend_runner):
    import os

    from fixtures.dsl import frontend as run

    reference = run.expected(case)
    gpu = frontend_runner.run(case, "gpu")
    if "host" in case.construct.paths and fe.known(case, "host", fe.frontend_in(os.environ)) is None:  # else not compared
        run.check_paths_agree(case, gpu, frontend_runner.run(case, "host"), reference)
    run.check_against_reference(case, "gpu", gpu, reference)
