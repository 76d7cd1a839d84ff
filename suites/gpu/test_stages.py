"""Every stage across the gpu plan, run on the device and compared with torch: results,
every output element written, inputs untouched, no write outside any tensor."""

import pytest

from fixtures import runner
from fixtures.params import case_params

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("case", case_params("gpu"))
def test_stage_matches_torch(case, request):
    runner.run_case(case, seed=runner.seed_for(request.node.nodeid))
