"""The semantics family's plan, as data: ids read like the case and are unique, every record names
types of the family, every known limitation covers cases, and the integer domains hold no input
where the operation is undefined."""

import pytest

from fixtures.cases import semantics as sem

pytestmark = pytest.mark.harness


def test_ids_read_like_the_case_and_are_unique():
    ids = [case.id for case in sem.cases()]
    assert len(ids) == len(set(ids))
    for expected in ("semantics-floordiv-i8-tensor", "semantics-floordiv-i8-scalar", "semantics-mod-u8-composed",
                     "semantics-to-f32-i8", "semantics-to-tf32-f32", "semantics-exp2-bf16", "semantics-reduce_max-u16",
                     "semantics-where_relu-u8", "semantics-where_relu-u8-composed", "semantics-broadcast_add-i64"):
        assert expected in ids, expected
    assert not [i for i in ids if "composed" in i and any(f"-{t}-" in i for t in sem.FLOATS)], "composed: integers only"


def test_records_name_family_types_and_one_kind_each():
    kinds = {"binary", "compare", "bitwise", "shift", "unary", "math", "math2", "where", "reduce", "broadcast", "convert"}
    for op in sem.OPERATIONS.values():
        assert set(op.types) <= set(sem.TYPES), op.name
        assert op.kind in kinds, op.name
        assert set(op.rhs) <= {"tensor", "scalar", "composed", "elements"}, op.name


def test_every_known_limitation_covers_cases():
    cases = sem.cases()
    idle = [lim.reason[:60] for lim in sem.KNOWN_LIMITATIONS if not any(lim.applies(c) for c in cases)]
    assert idle == []


def test_integer_division_never_divides_by_zero_or_min_by_minus_one():
    for case in sem.cases():
        if case.op.name in ("floordiv", "mod") and not case.type.is_float:
            inputs = case.inputs()
            divisors = case.scalars() if case.rhs == "scalar" else inputs.b
            low = -(2 ** (case.type.bits - 1)) if case.type.signed else 0
            assert 0 not in divisors, case.id
            pairs = [(inputs.a[k], d) for k in range(len(inputs.a)) for d in divisors] if case.rhs == "scalar" else zip(inputs.a, inputs.b)
            assert (low, -1) not in set(pairs) or not case.type.signed, case.id


def test_shift_counts_stay_below_the_width():
    for case in sem.cases():
        if case.op.kind == "shift":
            counts = case.scalars() if case.rhs == "scalar" else case.inputs().b
            assert all(0 <= c < case.type.bits for c in counts), case.id


# what the CPU machine's host JIT (4.8.1, an AMD EPYC without AVX512-BF16, GCC 12's libgcc) could
# not link on 2026-12-06: 'Symbols not found: [ __truncsfbf2 ]'
FAILED_TO_LINK_WITHOUT_NARROWING = (
    "add-bf16-tensor add-bf16-scalar sub-bf16-tensor sub-bf16-scalar mul-bf16-tensor mul-bf16-scalar "
    "truediv-bf16-tensor truediv-bf16-scalar floordiv-bf16-tensor floordiv-bf16-scalar mod-bf16-tensor "
    "mod-bf16-scalar mul_relu-bf16 sqrt-bf16 rsqrt-bf16 sin-bf16 cos-bf16 tan-bf16 exp-bf16 exp2-bf16 log-bf16 "
    "log2-bf16 log10-bf16 tanh-bf16 asin-bf16 acos-bf16 atan-bf16 sinh-bf16 cosh-bf16 expm1-bf16 log1p-bf16 "
    "floor-bf16 ceil-bf16 trunc-bf16 atan2-bf16 reduce_add-bf16 reduce_mul-bf16 reduce_max-bf16 reduce_min-bf16 "
    "broadcast_add-bf16 to-bf16-i16 to-bf16-i32 to-bf16-i64 to-bf16-u8 to-bf16-u16 to-bf16-u32 to-bf16-u64 "
    "to-bf16-f16 to-bf16-f32").split()
# the BFloat16 cases another limitation holds there first (they failed otherwise, or never ran)
HELD_BY_ANOTHER = "erf-bf16 erfc-bf16 asinh-bf16 acosh-bf16 atanh-bf16 cbrt-bf16 to-bf16-e4m3 to-bf16-e5m2 to-bf16-i8 to-bf16-f64".split()


@pytest.mark.parametrize("narrowing", ["instruction", "libgcc", "none", "unmeasured"])
def test_the_narrowing_limitations_follow_how_the_host_narrows(monkeypatch, narrowing):
    """Without the CPU's instruction: exactly the cases that failed to link on the CPU machine are
    the narrowing's (the others held first), a strict xfail where libgcc lacks the call, skipped
    where it links by process; the flush only where the CPU narrows itself."""
    from fixtures.cases import host_cpu

    monkeypatch.setattr(host_cpu, "how", lambda _narrowing: narrowing)
    by_case = {c.id.removeprefix("semantics-"): sem.known(c, "host") for c in sem.cases()}
    reasons = {case: limitation.reason if limitation else "" for case, limitation in by_case.items()}
    linking = [case for case, reason in reasons.items() if "__truncsfbf2" in reason]
    calls = narrowing in ("none", "libgcc")
    assert linking == (FAILED_TO_LINK_WITHOUT_NARROWING if calls else [])
    assert all("__truncsfbf2" not in reasons[case] for case in HELD_BY_ANOTHER)
    assert ("flushes BFloat16 subnormals" in reasons["add-bf16-tensor"]) == (narrowing == "instruction")
    assert ("__truncdfhf2" in reasons["to-f16-f64"]) == calls
    if calls:  # never links: a strict xfail; links by process: skipped
        fails_as = {"none": "error", "libgcc": "process-dependent"}[narrowing]
        assert {by_case[case].fails_as for case in [*linking, "to-f16-f64"]} == {fails_as}
    assert reasons["neg-bf16"] == reasons["to-f32-bf16"] == reasons["to-f16-f32"] == ""


def test_the_host_narrows_by_its_cpu_flags_then_by_what_libgcc_defines(monkeypatch, tmp_path):
    from fixtures.cases import host_cpu

    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text("processor\t: 0\nflags\t\t: fpu sse2 avx2 avx512f avx512_bf16\n\nprocessor\t: 1\n")
    assert "avx512_bf16" in host_cpu.cpu_flags(cpuinfo)
    assert host_cpu.cpu_flags(tmp_path / "absent") == set()
    assert host_cpu.libgcc_defines("__udivti3") and not host_cpu.libgcc_defines("__no_such_symbol_here")

    def how(flags: set[str], defined: bool, machine: str = "x86_64") -> str:
        host_cpu.how.cache_clear()
        monkeypatch.setattr(host_cpu, "cpu_flags", lambda: flags)
        monkeypatch.setattr(host_cpu, "libgcc_defines", lambda symbol: defined and symbol == "__truncsfbf2")
        monkeypatch.setattr(host_cpu.platform, "machine", lambda: machine)
        try:
            return host_cpu.how(host_cpu.F32_TO_BF16)
        finally:
            host_cpu.how.cache_clear()

    assert how({"avx2", "avx512_bf16"}, False) == "instruction"
    assert how({"avx2", "avx_ne_convert"}, True) == "instruction"
    assert how({"avx2", "avx512_fp16"}, True) == "libgcc"  # Float16's extension is not BFloat16's
    assert how({"avx2"}, False) == "none"
    assert how({"bf16"}, False, machine="aarch64") == "unmeasured"


def test_shifts_and_invert_run_element_by_element_where_tensorssa_cannot():
    """Every integer type has -elements cases of <<, >> and ~ with no limitation on either path, while
    their TensorSSA forms stay the strict xfail with its release range."""
    for name in ("lshift", "rshift", "invert"):
        for type_id in sem.INTS:
            forms = {case.rhs: case for case in sem.cases() if case.op.name == name and case.type.id == type_id}
            assert sem.known(forms["elements"], "host") is None and sem.known(forms["elements"], "gpu") is None
            limitation = sem.known(forms["tensor"], "host")
            assert limitation and limitation.fails_as == "error" and limitation.releases == ">=4.3", (name, type_id)
    assert sem.case_by_id("semantics-rshift-i8-elements") in sem.meaning_cases()


@pytest.mark.parametrize("path", ["gpu", "host"])
def test_each_case_is_in_one_compile_group_of_cases_that_can_share_one(path):
    """One compile serves a group of cases on each path: every case is in exactly one; a group's
    cases store their operands in one type and hold comparisons or conversions only with their
    own kind; a case whose known limitation stops the compile or the process is alone (in a
    group it would take the others down with it), as are the whole-tensor kinds."""
    cases = sem.cases()
    groups = {sem.compile_group(c.id, path) for c in cases}
    assert sorted(c.id for g in groups for c in g) == sorted(c.id for c in cases)
    for group in groups:
        assert 1 <= len(group) <= sem.GROUP_SIZE[path]
        if len(group) == 1:
            continue
        assert len({(c.source or c.type).id for c in group}) == 1, [c.id for c in group]
        assert len({c.op.kind if c.op.kind in ("compare", "convert") else "" for c in group}) == 1, [c.id for c in group]
        for case in group:
            limitation = sem.known(case, path)
            assert limitation is None or limitation.fails_as == "wrong_result", case.id
            assert case.op.kind not in ("reduce", "broadcast"), case.id
    assert len(groups) < len(cases) / 2, "the groups buy few compiles"
    assert sem.compile_group("semantics-nothing-i8", path) == ()
