"""Claiming more alignment than a pointer has must be a usage error before launch, never a
fault or a silent wrong result. The harness refuses it when it builds the CuTe view. The DSL
checks only when the pointer is materialised, with a bare ``assert`` (gone under
``python -O``); recorded here so a release that changes either shows up."""

import sys

import pytest
import torch
from cutlass.cute.runtime import from_dlpack

from fixtures.cases.dtypes import DTYPES
from fixtures.cases.matrix import Case
from fixtures.cases.stages import BUILT_IN_STAGES
from fixtures.dsl import tensors

pytestmark = pytest.mark.host


def _offset_view(dtype_id: str) -> torch.Tensor:
    lying = Case(BUILT_IN_STAGES["vectorized"], DTYPES[dtype_id], "offset", "static", (64, 256), "claims")
    return tensors.place_operands(lying, "cpu")["a"].view


@pytest.mark.parametrize("dtype_id", ["fp16", "fp32", "i8"])
def test_harness_refuses_a_false_alignment_claim(dtype_id):
    claiming = Case(BUILT_IN_STAGES["vectorized"], DTYPES[dtype_id], "align16", "static", (64, 256), "claims")
    view = _offset_view(dtype_id)
    assert view.data_ptr() % 16 == DTYPES[dtype_id].bytes
    with pytest.raises(tensors.AlignmentClaimError, match=r"assumed_align=16 claimed for a base pointer \d+ bytes past"):
        tensors.to_cute(claiming, view, "a")


def test_dsl_checks_the_claim_only_when_the_pointer_is_materialised():
    """DSL 4.8.1: from_dlpack takes assumed_align on trust; ``.iterator`` asserts it, so under
    ``PYTHONOPTIMIZE`` (``python -O``) the DSL does not check it at all (the harness still does)."""
    claimed = from_dlpack(_offset_view("fp16"), assumed_align=16)
    if sys.flags.optimize:
        claimed.iterator  # the DSL's check is an assert: gone
        return
    with pytest.raises(AssertionError, match="pointer must be 16 bytes aligned"):
        claimed.iterator
