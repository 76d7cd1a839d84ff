"""Every stage across the gpu plan, run on the device and compared with torch: results,
every output element written, inputs untouched, no write outside any tensor. The tutorial's
unpredicated stages also run once outside their domains, where the harness must catch them."""

import pytest

from fixtures.plugin.params import outside_domain_params

pytestmark = pytest.mark.gpu


@pytest.mark.plan("gpu")
def test_stage_matches_torch(case, run_case):
    run_case(case)


@pytest.mark.parametrize("case", outside_domain_params())
def test_outside_domain_is_caught(case, run_case):
    run_case(case)
