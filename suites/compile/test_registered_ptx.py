"""A kernel of your own (``--stage-module``) compiled for ``--arch`` with no GPU, in every dtype x
alignment x layout, and on the large family within its domain: its PTX facts (access widths and
counts, bytes per thread, guarded paths, the widths its block offsets are computed in) go into
the report, and where the stage declares what to expect (``register(..., vector_bytes=16)``) the
access widths are asserted: as wide as declared wherever the layout proves that alignment, and
never wider than the layout proves."""

from dataclasses import asdict

import pytest

from fixtures.cases import access
from fixtures.dsl import ptx
from reports.model import PTX_KEY, PtxFacts

pytestmark = pytest.mark.compile


@pytest.mark.plan("compile_registered", empty="no stage registered: load one with --stage-module")
def test_registered_stage_ptx(case, compile_on_host, request):
    compiled = compile_on_host(case)
    accesses = compiled.accesses
    expect = case.stage.expect
    allowed = access.declared_widths(case, expect.vector_bytes if expect else 16)
    facts = PtxFacts(
        accesses=accesses.describe(),
        widest_load=max(accesses.loads, default=0),
        widest_store=max(accesses.stores, default=0),
        bytes_loaded=accesses.bytes_loaded(),
        bytes_stored=accesses.bytes_stored(),
        guarded=ptx.guarded(compiled.ptx),
        layout_allows=min(allowed.values()),
        judged=expect is not None,
        index_widths=",".join(map(str, ptx.index_widths(compiled.ptx))),
    )
    request.node.user_properties.append((PTX_KEY, asdict(facts)))
    seen = f"{case.id}: PTX has {accesses.describe()}"
    assert accesses.stores, f"{seen}: no global store, so the kernel cannot write its output"
    if expect is None:
        return  # reported, not judged: the stage declared nothing to hold it to
    widest_input = max(allowed["a"], allowed["b"])
    assert facts.widest_store <= allowed["c"], f"{seen}: a store wider than the layout proves aligned ({allowed['c']} B)"
    assert facts.widest_load <= widest_input, f"{seen}: a load wider than the layout proves aligned ({widest_input} B)"
    if allowed["c"] == expect.vector_bytes:
        assert expect.vector_bytes in accesses.stores, f"{seen}: no {expect.vector_bytes}-byte store, though declared"
    if widest_input == expect.vector_bytes:
        assert expect.vector_bytes in accesses.loads, f"{seen}: no {expect.vector_bytes}-byte load, though declared"
