"""Red on purpose: one gpu case of each way a case fails, for the reproducers' GPU check
(``examples/repro_check.sh``, docs/reproducers.md). Never part of ``suites``: every case fails.

    python3 -m pytest examples/repro_drill.py -n 2 --require-gpu --repro-dir=/tmp/repro
"""

import pytest

from fixtures.cases.dtypes import DTYPES
from fixtures.cases.matrix import Case, outside_domain_cases
from fixtures.cases.ops import ADD
from fixtures.cases.stages import Stage
from fixtures.dsl.kernels import bind
from suites.gpu import _faulting_stage, _wrong_stage

pytestmark = pytest.mark.gpu

SUBTRACTS = bind(Stage("planted_sub", ADD), _wrong_stage.subtracts_instead_of_adding)
WILD_WRITE = bind(Stage("planted_wild_write", ADD), _faulting_stage.wild_write)
OUTSIDE = {case.stage.name: case for case in outside_domain_cases()}

RED = {  # the failure class each case's test fails with
    "Mismatch": Case(SUBTRACTS, DTYPES["fp32"], "align16", "dynamic", (97, 101), "odd"),
    "Mismatch in place": Case(SUBTRACTS, DTYPES["i32"], "natural", "static", (100, 2048), "odd", alias="c_is_b"),
    "Unwritten": OUTSIDE["naive"],  # 97x101: the grid drops the tail
    "OutOfBoundsWrite": OUTSIDE["tv"],  # 64x520: the second column tile writes past the tensor
    "a CUDA fault": Case(WILD_WRITE, DTYPES["fp16"], "align16", "static", (128, 2048), "drill"),
}


@pytest.mark.parametrize("case", RED.values(), ids=[case.id for case in RED.values()])
def test_planted_red(case, run_case):
    run_case(case)
