"""What a false 16-byte alignment claim does at launch when the harness's own check is
bypassed: DSL 4.8.1 refuses it while converting the arguments, before anything reaches
the GPU. Recorded so a release that stops checking shows up."""

import pytest
from cutlass.cute.runtime import from_dlpack

from fixtures.cases.dtypes import DTYPES
from fixtures.cases.matrix import Case
from fixtures.cases.stages import BUILT_IN_STAGES
from fixtures.dsl import runner, tensors

pytestmark = pytest.mark.gpu


def test_dsl_refuses_a_false_alignment_claim_at_launch(compiler):
    claiming = Case(BUILT_IN_STAGES["vectorized"], DTYPES["fp16"], "align16", "static", (128, 2048), "claims")
    lying = Case(BUILT_IN_STAGES["vectorized"], DTYPES["fp16"], "offset", "static", (128, 2048), "claims")
    placed = tensors.place_operands(lying, "cuda")
    aligned = tensors.place_operands(claiming, "cuda")
    compiled = compiler.compile(claiming, *(tensors.to_cute(claiming, aligned[n].view, n) for n in "abc"))
    operands = [from_dlpack(placed[n].view, assumed_align=16) for n in "abc"]
    with pytest.raises(RuntimeError, match="Tensor data pointer is not aligned to 16 bytes"):
        compiled.function(*operands, runner.current_stream())
