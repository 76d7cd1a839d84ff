"""The frontend family (``fixtures.cases.frontend``) on the host JIT: every construct's body, as
the run's frontend rewrites it (``--frontend``), run for each thread index in turn and judged
against the same body run as plain Python (and what it prints, for a record that prints). Select with ``-k frontend``, a construct
(``-k frontend-loop_if``)."""

import pytest

from fixtures.plugin.frontend import frontend_params

pytestmark = pytest.mark.host


@pytest.mark.parametrize("case", frontend_params("host"))
def test_frontend_on_host(case, compared_on_the_gpu, frontend_runner, host_jit):
    from fixtures.dsl import frontend as run

    run.check_against_reference(case, "host", frontend_runner.run(case, "host"), run.expected(case))
