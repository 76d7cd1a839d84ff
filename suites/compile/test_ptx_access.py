"""Every stage x dtype x alignment x layout, compiled for ``--arch`` with no GPU: the PTX's
global-memory accesses are as wide as the layout allows, and move exactly the bytes each
thread owns (``fixtures.cases.access`` holds the rules and why)."""

from dataclasses import replace

import pytest

from fixtures.cases import access, failures, limitations, matrix
from fixtures.dsl.compiler import Compiler

pytestmark = pytest.mark.compile


@pytest.mark.plan("compile")
def test_ptx_access_widths_and_bytes(case, compile_on_host):
    accesses = compile_on_host(case).accesses
    limitation = limitations.known(case, "compile")
    if limitation and limitation.fails_as == "unproven_alignment":
        # a release with the aligned-rows defect: its PTX must be exactly what the defect
        # predicts, and then the case fails as that defect (a strict xfail)
        check_accesses(case, accesses, access.expected(case, aligned_rows=True))
        raise failures.UnprovenAlignment(f"{case.id}: PTX has {accesses.describe()}: {limitation.reason}")
    check_accesses(case, accesses, access.expected(case))


def test_an_offset_base_compiles_as_a_natural_one(compile_on_host):
    """``Case.signature`` gives a natural and an offset base one compile: the DSL compiles
    against the alignment claim (the element's own for both), never the pointer. A release
    that read the pointer would make the offset cases' shared kernel wrong for them."""
    natural = next(c for c in matrix.cases("compile") if c.id == "tv-fp16-natural-static-128x2048")
    offset = replace(natural, align="offset")
    assert natural.signature == offset.signature
    assert Compiler().on_host(offset).ptx == compile_on_host(natural).ptx


def check_accesses(case, accesses, want: access.Expected) -> None:
    seen = f"{case.id}: expected {want.explain()}; PTX has {accesses.describe()}"
    loads, stores = set(accesses.loads), set(accesses.stores)
    if want.predicated:
        # the boundary loop is element-wide; the full-tile path has the operands' widths
        assert stores <= {want.elem, want.width("c")}, seen
        assert loads <= {want.elem} | want.load_widths, seen
        assert (access.VECTOR_BYTES in stores) == ("c" in want.vectors), seen
        if "a" in want.vectors:
            assert access.VECTOR_BYTES in loads, seen
        if not want.vectors & {"a", "b"}:
            assert access.VECTOR_BYTES not in loads, seen
    else:
        assert stores == {want.width("c")}, seen
        assert loads == want.load_widths, seen
    assert accesses.bytes_stored() == want.bytes_stored, seen

    if want.broadcast_inputs:
        # a broadcast input's rows (or columns) share addresses: read at least once, at most fully
        full_inputs = 2 - want.broadcast_inputs
        assert full_inputs * accesses.bytes_stored() < accesses.bytes_loaded() <= 2 * accesses.bytes_stored(), seen
    else:
        assert accesses.bytes_loaded() == 2 * accesses.bytes_stored(), seen
