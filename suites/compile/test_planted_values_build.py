"""The gpu tier's planted wrong stages (``suites/gpu/_planted_values.py``) build for ``--arch``
with no GPU, so a run on a device fails only if the edge values miss them."""

import pytest

from fixtures.cases.dtypes import DTYPES
from fixtures.cases.matrix import Case
from suites.gpu._planted_values import PLANTED

pytestmark = pytest.mark.compile


@pytest.mark.parametrize(
    "case",
    [
        pytest.param(Case(p.stage, DTYPES[d], "align16", "static", (97, 101), "planted"), id=f"{p.stage.name}-{d}")
        for p in PLANTED
        for d in p.dtypes
    ],
)
def test_planted_stage_compiles(case, compile_on_host):
    assert compile_on_host(case).accesses.stores, f"{case.id}: no global store in the PTX"
