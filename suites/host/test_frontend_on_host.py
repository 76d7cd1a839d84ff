"""The frontend family (``fixtures.cases.frontend``) on the host JIT: every construct's body, as
the run's frontend rewrites it (``--frontend``), run for each thread index in turn and judged
against the same body run as plain Python (and what it prints, for a record that prints); where
the run has the gpu tier's test of a case, the two are compared by whichever ends second
(``fixtures.plugin.meeting``). Select with ``-k frontend``, a construct (``-k frontend-loop_if``)."""

import pytest

from fixtures.cases import frontend as fe
from fixtures.plugin.frontend import frontend_params

pytestmark = pytest.mark.host


@pytest.mark.parametrize("case", frontend_params("host"))
def test_frontend_on_host(case, meeting, frontend_runner, host_jit):
    import os

    from fixtures.dsl import frontend as run

    frontend = fe.frontend_in(os.environ)
    reference = run.expected(case)
    host = frontend_runner.run(case, "host")
    if meeting.apart and fe.known(case, "gpu", frontend) is None and fe.known(case, "host", frontend) is None:
        gpu = meeting.leave("host", host, "gpu")  # the gpu tier's result, if its test ended first
        if gpu is not None:
            run.check_paths_agree(case, gpu, host, reference)
    run.check_against_reference(case, "host", host, reference)
