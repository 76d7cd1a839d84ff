"""The frontend family's GPU kernels compile for ``--arch`` on a machine without a GPU, under the
run's frontend: a construct the frontend cannot rewrite into a kernel is found before a GPU runs
it (the gpu tier then runs every case)."""

import pytest

from fixtures.plugin.frontend import frontend_params

pytestmark = pytest.mark.compile


@pytest.mark.parametrize("case", frontend_params("gpu", compile_only=True))
def test_frontend_kernel_compiles(case, compiled_by_the_gpu_tier, frontend_runner):
    frontend_runner.compile(case, "gpu")
