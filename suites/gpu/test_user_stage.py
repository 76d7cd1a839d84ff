"""A kernel of your own goes through the same runner and checks: a wrong one fails with the
same message a tutorial stage would, naming the case, the first bad index and the count."""

import pytest

from fixtures.cases import failures, matrix
from fixtures.cases.dtypes import DTYPES
from fixtures.cases.ops import ADD
from fixtures.cases.stages import Stage
from fixtures.dsl.kernels import bind
from suites.gpu import _wrong_stage

pytestmark = pytest.mark.gpu


def test_a_wrong_user_kernel_fails_with_the_mismatch_message(run_case):
    stage = bind(Stage("my_sub_as_add", ADD), _wrong_stage.subtracts_instead_of_adding)
    case = matrix.Case(stage, DTYPES["fp32"], "align16", "dynamic", (97, 101), "odd")
    with pytest.raises(failures.Mismatch, match=r"my_sub_as_add-fp32-align16-dynamic-97x101: \d+ of 9797 elements differ from torch \(exactly\); first at \(\d+, \d+\): a=.+, b=.+: got"):
        run_case(case)
