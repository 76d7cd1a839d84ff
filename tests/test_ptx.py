"""The PTX access parser: widths from vector count x element bits, whatever the spelling."""

from collections import Counter

import pytest

from fixtures.dsl.ptx import Accesses, global_accesses, index_widths

pytestmark = pytest.mark.harness


@pytest.mark.parametrize(
    ("line", "kind", "width"),
    [
        pytest.param("ld.global.v4.b32 {%r1, %r2, %r3, %r4}, [%rd1];", "ld", 16, id="v4.b32"),
        pytest.param("ld.global.b16 %rs1, [%rd1];", "ld", 2, id="b16"),
        pytest.param("ld.global.u16 %rs1, [%rd1];", "ld", 2, id="old-u16"),
        pytest.param("ld.global.f32 %f1, [%rd1];", "ld", 4, id="old-f32"),
        pytest.param("ld.global.v2.f64 {%fd1, %fd2}, [%rd1];", "ld", 16, id="old-v2.f64"),
        pytest.param("ld.global.s8 %rs1, [%rd1];", "ld", 1, id="s8"),
        pytest.param("ld.global.nc.v4.u32 {%r1, %r2, %r3, %r4}, [%rd1];", "ld", 16, id="nc-modifier"),
        pytest.param("ld.global.L1::no_allocate.v2.b64 {%rd3, %rd4}, [%rd1];", "ld", 16, id="eviction-modifier"),
        pytest.param("ld.global.L2::128B.b32 %r1, [%rd1];", "ld", 4, id="prefetch-size-not-a-type"),
        pytest.param("@%p1 st.global.b8 [%rd1], %rs1;", "st", 1, id="predicated-b8"),
        pytest.param("@!%p2 st.global.v4.b32 [%rd1+16], {%r1, %r2, %r3, %r4};", "st", 16, id="negated-predicate-offset"),
    ],
)
def test_one_access_width(line, kind, width):
    """Each spelling a release has emitted reduces to one access of the right width and kind."""
    accesses = global_accesses(line)
    counted = accesses.loads if kind == "ld" else accesses.stores
    other = accesses.stores if kind == "ld" else accesses.loads
    assert counted == Counter({width: 1})
    assert other == Counter()


@pytest.mark.parametrize(
    "line",
    [
        pytest.param("ld.shared.v4.b32 {%r1, %r2, %r3, %r4}, [%r5];", id="ld.shared"),
        pytest.param("ld.param.u64 %rd1, [kernel_param_0];", id="ld.param"),
        pytest.param("st.local.b32 [%rd2], %r1;", id="st.local"),
        pytest.param("st.shared.b16 [%r3], %rs1;", id="st.shared"),
        pytest.param("cp.async.ca.shared.global [%r1], [%rd1], 16;", id="cp.async"),
        pytest.param("cvta.to.global.u64 %rd2, %rd1;", id="cvta"),
    ],
)
def test_non_global_accesses_are_ignored(line):
    """Only ld/st to the global state space move the bytes the access model reasons about."""
    assert global_accesses(line) == Accesses(Counter(), Counter())


@pytest.mark.parametrize(
    "line",
    [
        pytest.param("ld.volatile.global.b32 %r1, [%rd1];", id="volatile"),
        pytest.param("st.relaxed.gpu.global.b32 [%rd1], %r1;", id="relaxed-scope"),
    ],
)
def test_ordering_qualified_global_access_is_counted(line):
    """PTX puts .volatile/.relaxed.scope/.acquire before the state space; those are global accesses too."""
    accesses = global_accesses(line)
    assert sum(accesses.loads.values()) + sum(accesses.stores.values()) == 1


@pytest.mark.parametrize(
    "line",
    [
        pytest.param("ld.global.v4 {%r1, %r2, %r3, %r4}, [%rd1];", id="vector-only"),
        pytest.param("st.global.nc [%rd1], %r1;", id="modifier-only"),
    ],
)
def test_access_without_element_type_is_rejected(line):
    """A width the parser cannot compute must stop the check, not count as zero bytes."""
    with pytest.raises(ValueError, match="no element type"):
        global_accesses(line)


KERNEL = """
.visible .entry kernel(.param .u64 kernel_param_0)
{
    .reg .pred %p<2>;
    ld.param.u64 %rd1, [kernel_param_0];
    ld.global.v4.b32 {%r1, %r2, %r3, %r4}, [%rd1];
    ld.global.nc.v4.u32 {%r5, %r6, %r7, %r8}, [%rd2];
    ld.global.b16 %rs1, [%rd3];
    ld.shared.v4.b32 {%r9, %r10, %r11, %r12}, [%r13];
    st.global.v4.b32 [%rd4], {%r1, %r2, %r3, %r4};
    @%p1 st.global.b16 [%rd5], %rs1;
    @%p1 st.global.b16 [%rd6], %rs1;
    st.local.b32 [%rd7], %r1;
    ret;
}
"""


def test_kernel_totals():
    """A kernel body: counts per width, bytes each way, and the description."""
    accesses = global_accesses(KERNEL)
    assert accesses.loads == Counter({16: 2, 2: 1})
    assert accesses.stores == Counter({16: 1, 2: 2})
    assert accesses.bytes_loaded() == 34
    assert accesses.bytes_stored() == 20
    assert accesses.describe() == "loads [1x2B, 2x16B], stores [2x2B, 1x16B]"


def test_empty_ptx():
    """No accesses: nothing moved, and the description says none rather than being blank."""
    accesses = global_accesses(".version 8.5\n.target sm_90a\n")
    assert accesses.bytes_loaded() == accesses.bytes_stored() == 0
    assert accesses.describe() == "loads [none], stores [none]"


# a block's tile offset as DSL 4.8.1 computes it for the tutorial's static 32832x65536 i8 tile,
# in 32 bits (the defect of docs/large-tensors.md), and as the corrected stage does, in 64
TILE_OFFSET_32 = """
    mov.u32 %r2, %ctaid.x;
    mul.hi.u32 %r3, %r2, 2143297521;
    shr.u32 %r4, %r3, 8;
    shl.b32 %r5, %r2, 22;
    mad.lo.s32 %r6, %r4, 2143290368, %r5;
    cvt.s64.s32 %rd4, %r6;
    cvta.to.global.u64 %rd8, %rd1;
    add.s64 %rd9, %rd8, %rd4;
    ld.global.v4.b32 {%r11, %r12, %r13, %r14}, [%rd9];
"""
TILE_OFFSET_64 = """
    mov.u32 %r2, %ctaid.x;
    mul.wide.u32 %rd4, %r2, 65536;
    cvta.to.global.u64 %rd8, %rd1;
    add.s64 %rd9, %rd8, %rd4;
    st.global.v4.b32 [%rd9], {%r11, %r12, %r13, %r14};
"""
# a flat Int32 element index made bytes by mul.wide: still a 32-bit index
FLAT_INDEX_32 = """
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, %ctaid.x;
    mad.lo.s32 %r3, %r2, 256, %r1;
    mul.wide.s32 %rd2, %r3, 2;
    add.s64 %rd3, %rd1, %rd2;
    ld.global.b16 %rs1, [%rd3];
"""
# a 64-bit index cut back to 32 bits before it is scaled by a row pitch
NARROWED = """
    mov.u32 %r2, %ctaid.x;
    mul.wide.u32 %rd2, %r2, 256;
    cvt.u32.u64 %r3, %rd2;
    mul.lo.s32 %r4, %r3, %r9;
    cvt.s64.s32 %rd3, %r4;
    add.s64 %rd4, %rd1, %rd3;
    st.global.b8 [%rd4], %rs1;
"""


@pytest.mark.parametrize(
    ("ptx", "widths"),
    [
        pytest.param(TILE_OFFSET_32, (32,), id="tile-offset-in-32-bits"),
        pytest.param(TILE_OFFSET_64, (64,), id="tile-offset-in-64-bits"),
        pytest.param(FLAT_INDEX_32, (32,), id="flat-int32-index-made-bytes"),
        pytest.param(NARROWED, (32,), id="cut-to-32-bits-then-scaled"),
        pytest.param(TILE_OFFSET_32 + TILE_OFFSET_64.replace("%rd", "%rd1"), (32, 64), id="one-access-of-each"),
        pytest.param("ld.global.b8 %rs1, [%rd1];", (), id="no-block-index"),
    ],
)
def test_the_widths_a_block_index_is_scaled_in(ptx, widths):
    assert index_widths(ptx) == widths
