"""The case matrix: readable unique ids, only cases a stage claims, and the coverage the plans promise."""

import re
from dataclasses import replace
from collections import defaultdict
from itertools import permutations, product
from pathlib import Path

import pytest
from packaging.version import Version

from fixtures.cases import access, failures, limitations, matrix, releases
from fixtures.cases.dtypes import DTYPES
from fixtures.cases.failures import ConformanceError
from fixtures.cases.matrix import (
    ALIGNMENTS,
    ARITHMETIC_DTYPES,
    LAYOUTS,
    NON_ARITHMETIC_DTYPES,
    SHAPE_FAMILIES,
    Case,
)
from fixtures.cases.ops import ADD
from fixtures.cases.stages import BUILT_IN_STAGES, Stage, with_registered
from fixtures.dsl import compat
from fixtures.plugin import gpus
from fixtures.plugin.params import plan_params
from tests.conftest import FOUR_ROWS, ROOT

DATA = Path(__file__).parent / "data"

pytestmark = pytest.mark.harness

PLANS = sorted(p for p in matrix.PLANS if matrix.cases(p))  # compile_registered is empty without --stage-module


def make_case(stage, dtype="fp16", align="align16", layout="static", shape=(128, 2048), family="aligned"):
    return Case(BUILT_IN_STAGES[stage], DTYPES[dtype], align, layout, shape, family)


def _alternatives(words):
    return "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))


ID = re.compile(
    rf"(?P<stage>{_alternatives(BUILT_IN_STAGES)})-(?P<dtype>{_alternatives(DTYPES)})"
    rf"-(?P<align>{_alternatives(ALIGNMENTS)})-(?P<layout>{_alternatives(LAYOUTS)})"
    rf"(?P<operands>(-[abc]_({_alternatives(matrix.OPERAND_LAYOUTS)}))*)(-(?P<alias>{_alternatives(matrix.ALIASES)}))?"
    rf"-(?P<m>\d+)x(?P<n>\d+)"
)


@pytest.mark.parametrize("plan", PLANS)
def test_ids_are_unique_and_read_stage_dtype_align_layout_shape(plan):
    """An id is all a report shows of a case: it must name every axis, in order, and name one case."""
    cases = matrix.cases(plan)
    assert len({c.id for c in cases}) == len(cases)
    for case in cases:
        parsed = ID.fullmatch(case.id)
        assert parsed, case.id
        own = "".join(f"-{op}_{kind}" for op, kind in zip("abc", case.operands or ()) if kind != "rowmajor")
        assert parsed.groupdict() == {
            "stage": case.stage.name,
            "dtype": case.dtype.id,
            "align": case.align,
            "layout": case.layout,
            "operands": own,
            "alias": case.alias,
            "m": str(case.shape[0]),
            "n": str(case.shape[1]),
        }
        assert matrix.case_from_id(case.id).signature == case.signature


def test_gpu_plan_ids_as_reports_spell_them():
    """Odd shapes reach the gpu plan only through stages whose domain admits them."""
    ids = {c.id for c in matrix.cases("gpu")}
    assert "tv_remap-bf16-align16-dynamic-128x2048" in ids
    assert "predicated-bf16-align16-dynamic-1000x1003" in ids
    assert "tv_remap-bf16-align16-dynamic-1000x1003" not in ids  # (64,512) tiles leave a tail unwritten


@pytest.mark.parametrize("plan", PLANS)
def test_every_case_is_inside_its_stage_domain(plan):
    """Nothing outside a stage's domain is collected: its failures would be the stage's design, not a bug."""
    outside = {c.id: matrix.outside_domain(c) for c in matrix.cases(plan)}
    assert {i: r for i, r in outside.items() if r is not None} == {}


@pytest.mark.parametrize(
    ("case", "reason_parts"),
    [
        pytest.param(make_case("naive", shape=(97, 101)), ["9797", "256"], id="naive-rejects-97x101"),
        pytest.param(make_case("naive", shape=(100, 2048)), None, id="naive-accepts-100x2048"),
        pytest.param(make_case("vectorized", shape=(64, 1003)), ["N=1003", "8-element"], id="vectorized-rejects-odd-N"),
        pytest.param(make_case("vectorized", dtype="fp32", shape=(64, 1002)), ["N=1002", "4-element"],
                     id="vectorized-fp32-rejects-N-not-multiple-of-4"),
        pytest.param(make_case("vectorized", shape=(16, 16)), ["32 vectors", "256"], id="vectorized-rejects-short-grid"),
        pytest.param(make_case("vectorized", shape=(100, 2048)), None, id="vectorized-accepts-100x2048"),
        pytest.param(make_case("tv", shape=(100, 2048)), ["100x2048", "(64,512)"], id="tv-rejects-100x2048"),
        pytest.param(make_case("tv", dtype="fp32", shape=(64, 128)), ["64x128", "(64,256)"], id="tv-fp32-tile-is-64x256"),
        pytest.param(make_case("apply_mul_relu", shape=(128, 2048)), None, id="apply-accepts-aligned"),
    ],
)
def test_stage_domain_rules(case, reason_parts):
    """Each rule names the number that breaks it, so a report's skip list says why a case is absent."""
    reason = matrix.outside_domain(case)
    if reason_parts is None:
        assert reason is None
    else:
        assert reason is not None
        for part in reason_parts:
            assert part in reason


@pytest.mark.parametrize("shape", [s for shapes in SHAPE_FAMILIES.values() for s in shapes], ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("dtype", list(DTYPES))
def test_predicated_stage_accepts_every_shape(dtype, shape):
    """The predicated stage exists to handle every shape; its domain has no exceptions."""
    assert matrix.outside_domain(make_case("predicated", dtype=dtype, shape=shape, family="odd")) is None


def test_dtype_ids_are_not_substrings_of_each_other():
    """``-k fp16`` must not pick bf16, nor ``-k i8`` pick u8."""
    clashes = [(a, b) for a, b in permutations(DTYPES, 2) if a in b]
    assert clashes == []


@pytest.mark.parametrize("plan", PLANS)
def test_no_dtype_id_occurs_in_another_dtype_case_id(plan):
    """``-k <dtype>`` must not match another dtype's case through its stage, alignment, layout or shape."""
    stray = [(d, c.id) for c in matrix.cases(plan) for d in DTYPES if d != c.dtype.id and d in c.id]
    assert stray == []


def test_shape_families_do_not_share_shapes():
    """A case's id carries its shape, not its family: one shape in two families would make the family keyword ambiguous."""
    shapes = [s for family in SHAPE_FAMILIES.values() for s in family]
    assert len(shapes) == len(set(shapes))


@pytest.mark.parametrize(
    ("first", "second", "same"),
    [
        pytest.param(make_case("predicated", layout="dynamic"),
                     make_case("predicated", layout="dynamic", shape=(1000, 1003), family="odd"), True,
                     id="dynamic-shapes-share"),
        pytest.param(make_case("predicated", layout="static"),
                     make_case("predicated", layout="static", shape=(1000, 1003), family="odd"), False,
                     id="static-shapes-differ"),
        pytest.param(make_case("predicated", layout="compact"),
                     make_case("predicated", layout="compact", shape=(1, 4096), family="unit"), True,
                     id="compact-same-divisibility-shares"),
        pytest.param(make_case("predicated", layout="compact"),
                     make_case("predicated", layout="compact", shape=(1000, 1003), family="odd"), False,
                     id="compact-other-divisibility-differs"),
        pytest.param(make_case("predicated", layout="dynamic"),
                     make_case("predicated", layout="dynamic", align="natural"), False,
                     id="alignment-differs"),
    ],
)
def test_signature(first, second, same):
    """Cases share a compile exactly when nothing the compiler sees differs."""
    assert (first.signature == second.signature) is same


@pytest.mark.parametrize("plan", PLANS)
def test_shared_signatures_differ_only_in_dynamic_shape_or_an_unclaimed_offset(plan):
    """Within a plan, cases grouped under one signature must be one kernel: dynamic-shape cases
    of it, or a natural and an offset base (the same alignment claim) of one static shape."""
    groups = defaultdict(list)
    for case in matrix.cases(plan):
        groups[case.signature].append(case)
    shared = [g for g in groups.values() if len(g) > 1]
    assert shared, "the gpu and compile plans both have dynamic layouts over several shapes"
    for group in shared:
        group = [c for c in group if not c.alias]  # the DSL never sees aliasing: checked below
        if len(group) < 2:
            continue
        assert len({(c.stage.name, c.dtype.id, c.alignment.assumed_align, c.layout) for c in group}) == 1
        assert len({(c.align, c.shape) for c in group}) == len(group)
        if group[0].shape_is_static:
            assert {c.align for c in group} == {"natural", "offset"} and len({c.shape for c in group}) == 1


def test_compile_plan_covers_every_stage_dtype_alignment_layout():
    """The compile tier's promise: every stage x arithmetic dtype x alignment x layout, compiled once at least."""
    covered = {(c.stage.name, c.dtype.id, c.align, c.layout) for c in matrix.cases("compile")}
    missing = set(product(BUILT_IN_STAGES, ARITHMETIC_DTYPES, ALIGNMENTS, LAYOUTS)) - covered
    assert missing == set()


def test_compile_plan_has_the_predicated_boundary_shape():
    """The predicated stage's boundary path is only compiled on a shape no tile divides."""
    boundary = [c for c in matrix.cases("compile")
                if c.stage.name == "predicated" and c.shape == (1000, 1003) and not c.operands]
    assert len(boundary) == len(ARITHMETIC_DTYPES) * len(ALIGNMENTS) * len(LAYOUTS)


def test_fp8_is_non_arithmetic():
    """fp8 is the known limitation; it must not leak into the arithmetic plans."""
    assert set(NON_ARITHMETIC_DTYPES) == {"e4m3", "e5m2"}
    assert not set(NON_ARITHMETIC_DTYPES) & set(ARITHMETIC_DTYPES)


def test_fp8_cases_carry_known_limitation():
    """fp8 is compiled once per stage as a canary, always with its limitation; no arithmetic case has one there."""
    cases = matrix.cases("compile")
    fp8 = [c for c in cases if c.dtype.id in NON_ARITHMETIC_DTYPES]
    assert {(c.stage.name, c.dtype.id) for c in fp8} == set(product(BUILT_IN_STAGES, NON_ARITHMETIC_DTYPES))
    assert all("fp8" in limitations.known(c, "compile").reason for c in fp8)
    fp8_limited = [c for c in cases if limitations.known(c, "compile") and "fp8" in limitations.known(c, "compile").reason]
    assert [c.id for c in fp8_limited if c.dtype.id in ARITHMETIC_DTYPES] == []


@pytest.mark.parametrize(
    ("case", "plan", "reason_part"),
    [
        pytest.param(make_case("tv", dtype="e4m3"), "compile", "fp8", id="fp8-compile"),
        pytest.param(make_case("naive", dtype="e5m2"), "gpu", "fp8", id="fp8-gpu"),
        pytest.param(make_case("apply_mul_relu", dtype="u8"), "gpu", "Uint8", id="u8-mul_relu-gpu"),
        pytest.param(make_case("apply_mul_relu", dtype="u8"), "compile", None, id="u8-mul_relu-compiles"),
        pytest.param(make_case("apply_mul", dtype="u8"), "gpu", None, id="u8-mul-is-fine"),
        pytest.param(make_case("apply_mul_relu", dtype="i8"), "gpu", None, id="i8-mul_relu-is-fine"),
    ],
)
def test_known_limitation_is_scoped_to_its_plans_dtypes_and_ops(case, plan, reason_part):
    """A limitation must mark only the cases it describes: a wider one would hide real failures."""
    limitation = limitations.known(case, plan)
    if reason_part is None:
        assert limitation is None
    else:
        assert reason_part in limitation.reason


def test_every_limitation_a_plan_skips_has_a_canary_in_the_suites():
    """The skips name no file: the suites declare their canaries (``canary(PLAN, *FAILS_AS)``), and
    every way of failing that a plan skips is proved by one, in a plan that exists."""
    from fixtures.plugin.declared import marks
    from fixtures.plugin.params import SKIPPED

    canaries = [m for m in marks([str(ROOT / "suites")], []) if m.name == "canary"]
    assert {m.args[0] for m in canaries} <= set(matrix.PLANS)
    assert {fails_as for m in canaries for fails_as in m.args[1:]} == set(SKIPPED)


@pytest.mark.parametrize("plan", PLANS)
def test_known_limitations_become_strict_xfails_raising_what_they_fail_with(plan):
    """A DSL defect must fail as a DSL error, a wrong result as a ConformanceError; an unexpected pass fails the run."""
    params = plan_params(plan, BUILT_IN_STAGES)
    limited = [p for p in params if limitations.known(p.values[0], plan)]
    assert limited
    for param in limited:
        (mark,) = param.marks
        fails_as = limitations.known(param.values[0], plan).fails_as
        assert (mark.name, fails_as) != ("skip", "dsl_error")
        if fails_as in ("crash", "misaligned_address", "wild_write", "launch_crash"):
            assert mark.name == "skip" and "its canary proves it: -m canary" in mark.kwargs["reason"]
            continue
        assert mark.name == "xfail"
        assert mark.kwargs["strict"] is True
        expected = {"wrong_result": ConformanceError, "dsl_error": compat.resolve("DSLBaseError"),
                    "unproven_alignment": failures.UnprovenAlignment, "type_error": TypeError,
                    "ir_refused": (compat.resolve("MLIRError"), ValueError), "layout_refused": RuntimeError}[fails_as]
        assert mark.kwargs["raises"] == expected
    assert [p.id for p in params if p.marks and not limitations.known(p.values[0], plan)] == []


def _with_release(monkeypatch, version: str) -> None:
    monkeypatch.setattr(releases, "installed", lambda: Version(version))


@pytest.mark.parametrize(
    ("release", "case", "plan", "fails_as"),
    [
        pytest.param("4.3.5", make_case("tv_remap", layout="dynamic"), "compile", "crash", id="4.3-remap-dynamic-crashes"),
        pytest.param("4.3.5", make_case("apply_add", layout="compact"), "gpu", "crash", id="4.3-apply-compact-crashes"),
        pytest.param("4.3.5", make_case("tuned", layout="compact"), "gpu", None, id="4.3-unremapped-tuned-compact-fine"),
        pytest.param("4.3.5", make_case("predicated", layout="dynamic"), "gpu", "type_error", id="4.3-predicated-type-error"),
        pytest.param("4.3.5", make_case("tv_remap", layout="static"), "compile", None, id="4.3-remap-static-fine"),
        pytest.param("4.4.2", make_case("tv_remap", layout="dynamic"), "compile", "unproven_alignment",
                     id="4.4-remap-dynamic-vectorizes-unproven-rows"),
        pytest.param("4.4.2", make_case("tv_remap", layout="dynamic", align="natural"), "compile", None,
                     id="4.4-natural-alignment-fine"),
        pytest.param("4.4.2", make_case("vectorized", layout="dynamic"), "compile", None, id="4.4-single-row-stage-fine"),
        pytest.param("4.4.2", make_case("tv", layout="dynamic"), "gpu", None, id="4.4-compile-only-defect"),
        pytest.param("4.8.1", make_case("tv_remap", layout="dynamic"), "compile", None, id="4.8-fixed"),
        pytest.param("4.5.3", make_case("tv", layout="strided"), "gpu", "misaligned_address", id="4.5-odd-pitch-faults"),
        pytest.param("4.5.3", make_case("tv", layout="strided", dtype="fp16"), "bench", "misaligned_address",
                     id="4.5-odd-pitch-faults-in-bench-too"),
        pytest.param("4.6.3", make_case("tv", layout="strided"), "gpu", None, id="4.6-odd-pitch-fixed"),
    ],
)
def test_release_limitations_cover_only_their_releases_and_cases(monkeypatch, release, case, plan, fails_as):
    """A limitation found by the release matrix marks its releases' cases only: a release that
    fixed it gets the plain check back."""
    _with_release(monkeypatch, release)
    limitation = limitations.known(case, plan)
    assert (limitation.fails_as if limitation else None) == fails_as


def test_aligned_rows_faults_match_the_h100_run_of_4_5_3(monkeypatch):
    """The fault limitation covers exactly the gpu cases that faulted on an H100 with 4.5.3:
    fewer would crash workers, more would skip cases that conform."""
    _with_release(monkeypatch, "4.5.3")
    recorded = (DATA / "h100_dsl4.5.3_misaligned_address.txt").read_text().split("\n")
    # the tuned stage of that run had 4-row tiles; its one-row tiles since give the defect no row to misalign
    faulted = {line for line in recorded if line and not line.startswith(("#", "tuned-"))}
    # that run had the layout axis's plans only: no per-operand layouts, in-place calls or input classes
    then = [case for plan in matrix.PLANS["gpu"] if isinstance(plan, matrix.Plan) for case in plan.cases(BUILT_IN_STAGES)]
    covered = {c.id for c in then if (lim := limitations.known(c, "gpu")) and lim.fails_as == "misaligned_address"
               and matrix.outside_domain(c) is None}
    assert covered == faulted


def test_in_place_cases_share_the_compile_of_an_out_of_place_case():
    """The DSL never sees aliasing: every in-place case's signature is one the plan compiles anyway."""
    cases = matrix.cases("gpu")
    out_of_place = {c.signature for c in cases if not c.alias}
    in_place = [c for c in cases if c.alias]
    assert {c.alias for c in in_place} == set(matrix.ALIASES)
    assert [c.id for c in in_place if c.signature not in out_of_place] == []


def test_every_stage_claiming_aliasing_gets_every_alias_in_every_dtype():
    covered = {(c.stage.name, c.dtype.id, c.alias) for c in matrix.cases("gpu") if c.alias}
    assert covered == set(product(BUILT_IN_STAGES, ARITHMETIC_DTYPES, matrix.ALIASES))


def test_a_stage_that_does_not_claim_aliasing_gets_no_in_place_case():
    stage = replace(BUILT_IN_STAGES["predicated"], aliasing=False)
    case = Case(stage, DTYPES["fp16"], "align16", "static", (97, 101), "odd", alias="c_is_a")
    assert "does not claim in-place calls" in matrix.outside_domain(case)


@pytest.mark.parametrize("every_triple", [False, True], ids=["compile-pairs", "gpu-triples"])
def test_operand_layouts_meet_pairwise_in_every_stage(every_triple):
    """Both designs' promise: per stage, every two of (dtype, A's layout, B's, C's, mode) meet."""
    rows = matrix.OperandPlan(every_triple=every_triple).design()
    for i, j in ((0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3), (1, 4), (2, 4), (3, 4), (0, 4)):
        levels = [sorted({r[i] for r in rows}), sorted({r[j] for r in rows})]
        assert {(r[i], r[j]) for r in rows} == set(product(*levels)), (i, j)
    for stage in BUILT_IN_STAGES:
        triples = {(c.operand_layout("a"), c.operand_layout("b"), c.operand_layout("c"), c.mode)
                   for c in matrix.cases("gpu") if c.stage.name == stage and not c.alias}
        assert {(a, c) for a, _, c, _ in triples} >= set(product(matrix.OPERAND_LAYOUTS, ("rowmajor", "colmajor", "strided", "offset"))), stage


OUTPUT_LAYOUTS = tuple(k for k in matrix.OPERAND_LAYOUTS if k not in matrix.INPUT_ONLY_LAYOUTS)
EVERY_TRIPLE = set(product(matrix.OPERAND_LAYOUTS, matrix.OPERAND_LAYOUTS, OUTPUT_LAYOUTS))


def test_the_gpu_plans_design_holds_each_layout_triple_once():
    """144 rows, no more: the full product of the operands' layouts, dtype and mode chosen per row."""
    rows = matrix.OperandPlan(every_triple=True).design()
    assert len(rows) == len(EVERY_TRIPLE) == 144
    assert {(a, b, c) for _, a, b, c, _ in rows} == EVERY_TRIPLE
    assert {r[0] for r in rows} == set(ARITHMETIC_DTYPES) and {r[4] for r in rows} == {"static", "dynamic"}


def _triples(cases, stage: str) -> set:
    return {tuple(c.operand_layout(op) for op in "abc") for c in cases if c.stage.name == stage and not c.alias}


@pytest.mark.parametrize("stage", BUILT_IN_STAGES)
def test_every_operand_layout_triple_meets_the_stages_that_can_key_on_one(stage):
    """A fast path keyed on all three operands' layouts is drawn, out of place, in the stages
    written as production code is (``TRIPLE_STAGES``); the tutorial's layout-agnostic stages keep
    every pair (above), not every triple."""
    triples = _triples(matrix.cases("gpu"), stage)
    if stage in matrix.TRIPLE_STAGES:
        assert triples >= EVERY_TRIPLE
    else:
        assert len(triples) < len(EVERY_TRIPLE)


def test_a_registered_stage_gets_every_layout_triple_within_its_domain():
    stages = with_registered([Stage("mine", ADD)])
    assert _triples(matrix.cases("gpu", stages), "mine") >= EVERY_TRIPLE


def _large(stage: str) -> list:
    return [c for c in matrix.cases("gpu") if c.stage.name == stage and matrix.is_large(c)]


@pytest.mark.parametrize("stage", BUILT_IN_STAGES)
def test_the_large_family_lays_each_operand_out_every_way_and_in_place(stage):
    """Past 65,535 rows (where the stage's domain admits them) and past 2**31 elements, every
    placement in some operand, and in place; past 2**31 laid out otherwise too."""
    cases = _large(stage)
    assert {c.operand_layout(op) for c in cases for op in "abc"} == set(matrix.OPERAND_LAYOUTS)
    assert {c.alias for c in cases if c.shape == matrix.HUGE} >= {"c_is_a", "c_is_b"}
    assert [c for c in cases if c.shape == matrix.HUGE and c.operands and "colmajor" in c.operands]
    past_grid_y = {c.operand_layout(op) for c in cases if c.shape[0] > 65535 for op in "abc"}
    if stage != "tuned":  # its rows are its grid's y: such shapes are outside its domain
        assert past_grid_y == set(matrix.OPERAND_LAYOUTS)


def test_every_large_case_fits_an_80_gb_gpu_beside_15_other_workers_but_fp32_past_2_31():
    """The large family grew within what the memory check at start lets one H100 worker hold
    beside 15 others and the bench phase's process (the fp32 cases past 2**31 elements skip
    there, as before); a strided operand's gaps are counted."""
    h100 = 85_030_813_696
    room = gpus.large_room(h100, 16)
    too_big = {c.id for c in matrix.large_cases() if matrix.device_bytes(c) > room}
    assert too_big == {c.id for c in matrix.large_cases() if c.dtype.id == "fp32"}


def test_device_bytes_counts_what_each_operand_stores():
    plain = matrix.case_from_id("tv-fp16-align16-dynamic-32832x65536")
    strided = matrix.case_from_id("tv-fp16-align16-dynamic-a_strided-b_rowbcast-32832x65536")
    in_place = matrix.case_from_id("tv-fp16-align16-dynamic-c_is_a-32832x65536")
    m, n = matrix.HUGE
    assert matrix.stored_elements(strided, "a") == (m - 1) * (n + 1) + n
    assert matrix.stored_elements(strided, "b") == n
    assert matrix.device_bytes(plain) == 6 * m * n * 2 + 3 * m * n  # three operands, three copies, three masks
    assert matrix.device_bytes(in_place) == matrix.device_bytes(plain) - m * n * 2
    assert matrix.device_bytes(strided) - matrix.device_bytes(plain) == ((m - 1) - (m - 1) * n) * 2 + 3 * (m - 1)


@pytest.mark.parametrize("stage", BUILT_IN_STAGES)
def test_the_empty_family_meets_every_dtype_operand_layout_alias_and_shape(stage):
    cases = [c for c in matrix.cases("gpu") if c.stage.name == stage and c.family == "empty"]
    assert {c.dtype.id for c in cases} == set(ARITHMETIC_DTYPES)
    for op, layouts in zip("abc", (matrix.OPERAND_LAYOUTS, matrix.OPERAND_LAYOUTS, OUTPUT_LAYOUTS)):
        assert {c.operand_layout(op) for c in cases} == set(layouts), op
    assert {c.alias for c in cases} == {None, *matrix.ALIASES}
    assert {c.shape for c in cases} == set(matrix.EMPTY_SHAPES)
    assert {c.mode for c in cases if c.operands} == {"static", "dynamic"}


def test_the_sanitizer_sample_has_offset_bases_rows_past_grid_y_and_empty_tensors_in_every_stage():
    """Each stage meets, under the tool, a base one element off a 16-byte boundary (where only the
    exact extent shows a read before it), more rows than a grid's y extent where its domain admits
    them, and an empty tensor; nothing past 2**31 elements."""
    cases = matrix.sanitize_cases()
    for stage in BUILT_IN_STAGES:
        mine = [c for c in cases if c.stage.name == stage]
        assert any(c.base_offset("a") for c in mine) and any(c.align == "offset" for c in mine), stage
        assert any(c.family == "empty" for c in mine), stage
        assert any(c.shape[0] > 65535 for c in mine) or stage == "tuned", stage
        assert {c.dtype.id for c in mine} == set(ARITHMETIC_DTYPES), stage
    assert not [c for c in cases if c.shape == matrix.HUGE]


def _known(case) -> bool:
    return limitations.known(case, "gpu") is not None


def test_the_gate_sanitizer_sample_is_every_placement_class_of_every_stage_outside_known_limitations(monkeypatch):
    """Each stage's offset case at every element width and its strided, broadcast, column-major
    and in-place case at the narrowest, the dtypes of a width in turn, none a known defect: a read
    before or past any operand, by a whole word of a narrow type too, shows to the tool."""
    _with_release(monkeypatch, "4.8.1")
    cases = matrix.gate_sanitize_cases(ruled_out=_known)
    assert [(c.stage.name, matrix.placement_class(c), c.dtype.bytes) for c in cases] == [
        (stage, cls, width) for stage in BUILT_IN_STAGES for cls in matrix.GATE_SANITIZE_CLASSES
        for width in (matrix.WIDTHS if cls == "offset" else (1,))]
    assert not [c for c in cases if _known(c)]
    assert not [c for c in cases if matrix.outside_domain(c)]
    assert all(matrix.case_from_id(c.id).id == c.id for c in cases)  # the child finds each by its id
    offset = [c for c in cases if matrix.placement_class(c) == "offset"]
    assert all(c.base_offset(op) for c in offset for op in "abc")
    assert all(c.alias for c in cases if matrix.placement_class(c) == "in-place")
    assert {c.dtype.id for c in cases} == set(ARITHMETIC_DTYPES)


def test_on_a_release_with_more_known_defects_the_gate_sanitizer_sample_keeps_what_runs(monkeypatch):
    """4.3's remap crash over dynamic shapes and its misaligned vectors leave the block-remapped
    tutorial stages no case: the others keep theirs, none of them a known defect."""
    _with_release(monkeypatch, "4.3.5")
    cases = matrix.gate_sanitize_cases(ruled_out=_known)
    assert {"naive", "vectorized", "tv", "predicated", "tuned"} <= {c.stage.name for c in cases}
    assert not [c for c in cases if _known(c)]


def test_mixed_case_keeps_the_layout_axis_id_where_the_triple_is_one_of_its_layouts():
    stage, fp16 = BUILT_IN_STAGES["tv"], DTYPES["fp16"]
    assert matrix.mixed_case(stage, fp16, "align16", "static", ("rowmajor", "rowbcast", "rowmajor"), (128, 2048), "x").id == \
        "tv-fp16-align16-bcast-128x2048"
    assert matrix.mixed_case(stage, fp16, "align16", "dynamic", ("rowmajor",) * 3, (128, 2048), "x").id == \
        "tv-fp16-align16-dynamic-128x2048"
    assert matrix.mixed_case(stage, fp16, "align16", "dynamic", ("colmajor",) * 3, (128, 2048), "x").id == \
        "tv-fp16-align16-dynamic-a_colmajor-b_colmajor-c_colmajor-128x2048"


@pytest.mark.parametrize("text", ["tv-fp16-align16-static-c_is_x-1x1", "tv-fp16-align16-colmajor-a_strided-1x1",
                                  "tv-fp16-align16-static-a_colmajor-a_colmajor-1x1", "nope", "tv-fp16-align16-static-1"])
def test_case_from_id_refuses_what_names_no_case(text):
    assert matrix.case_from_id(text) is None


def test_each_operand_gets_its_own_strides_offset_and_claim():
    case = Case(BUILT_IN_STAGES["tv"], DTYPES["fp16"], "align16", "static", (97, 101), "odd", ("offset", "colbcast", "colmajor"))
    assert [case.strides(op) for op in "abc"] == [(101, 1), (1, 0), (1, 97)]
    assert [case.base_offset(op) for op in "abc"] == [1, 0, 0]
    assert [case.assumed_align(op) for op in "abc"] == [None, 16, 16]
    assert set(case.keywords) >= {"mixed", "odd", "add"}


def test_aligned_rows_defect_predicts_vectors_where_the_pitch_is_unproven():
    """The defect's rule aligns every row to the tile's height (16 bytes for the TV tiles, one
    element for the single-row vectorized stage); the safe rule only where the pitch is proven
    (here: an odd static pitch and a dynamic one are not)."""
    strided, dynamic = make_case("tv", layout="strided"), make_case("tv", layout="dynamic")
    for case in (strided, dynamic):
        assert access.vector_operands(case) == frozenset()
        assert set(access.access_widths(case, aligned_rows=True).values()) == {access.VECTOR_BYTES}
        assert access.aligned_rows_change(case)
    assert not access.aligned_rows_change(make_case("tv", layout="static"))
    assert not access.aligned_rows_change(make_case("vectorized", layout="dynamic"))
    # a tile 4 rows high: 4 fp16 elements, 8 bytes, is what the defect assumes there
    assert access.access_widths(Case(FOUR_ROWS, DTYPES["fp16"], "align16", "dynamic", (128, 2048), "aligned"),
                                aligned_rows=True) == {"a": 8, "b": 8, "c": 8}
    assert not access.aligned_rows_change(make_case("tuned", layout="dynamic"))


def test_predicated_static_shape_without_a_whole_tile_has_no_vectors():
    """An i8 tile is 1024 wide: on a static 1003-wide shape only the element-wise boundary path exists."""
    case = make_case("predicated", dtype="i8", shape=(1000, 1003), family="odd")
    assert access.access_widths(case, aligned_rows=True) == {"a": 1, "b": 1, "c": 1}
    assert access.vector_operands(make_case("predicated", dtype="fp16", layout="compact")) == frozenset("abc")


def _axis_pairs(cases) -> set:
    """Every pair of (stage, dtype, alignment, layout, each operand's placement, alias, family) the cases hold."""
    rows = [(c.stage.name, c.dtype.id, c.align, c.layout, *(c.operands or ("",) * 3), c.alias or "", c.family) for c in cases]
    return {(i, r[i], j, r[j]) for r in rows for i in range(len(r)) for j in range(i + 1, len(r))}


@pytest.mark.parametrize("plan", ["compile", "gpu"])
def test_a_plans_pairs_sample_holds_every_pair_its_cases_hold(plan):
    """``--plan-sample pairs`` (CI's release envs): a few of the plan's own cases, every pair of
    axis values the whole plan holds still held by one of them."""
    cases = matrix.cases(plan)
    sample = matrix.pairs_sample(cases)
    assert set(sample) <= set(cases) and len(sample) < len(cases) / 10
    assert _axis_pairs(sample) == _axis_pairs(cases)
    assert [c.id for c in sample] == [c.id for c in cases if c in set(sample)], "in the plan's order"
    assert matrix.pairs_sample(cases) == sample, "the same sample on every run"


def test_a_sample_one_case_short_misses_a_pair():
    """The check above can fail: the sample is minimal enough that some case of it holds a pair no other does."""
    sample = matrix.pairs_sample(matrix.cases("compile"))
    assert any(_axis_pairs(sample[:i] + sample[i + 1:]) != _axis_pairs(sample) for i in range(len(sample)))


def _risks(cases, name: str) -> set:
    return {key for c in cases for key in matrix.gate_risks(c) if key[0] == name}


def test_the_gates_sample_holds_every_pair_and_every_risk_the_gpu_plan_holds():
    """``--plan-sample gate``: the gpu plan's own cases, every pair and every ``GATE_RISKS`` key
    of the whole plan still held (each stage's operand triples, dtype x family, large and empty
    layouts); the other plans' strength-2 samples."""
    cases, sample = matrix.cases("gpu"), matrix.cases("gpu", sample="gate")
    assert set(sample) <= set(cases) and len(sample) < len(cases) / 2
    assert [c.id for c in sample] == [c.id for c in cases if c in set(sample)], "in the plan's order"
    assert _axis_pairs(sample) == _axis_pairs(cases)
    for name in matrix.GATE_RISKS:
        assert _risks(sample, name) == _risks(cases, name), name
    assert len(_risks(cases, "placements")) > 600  # every stage's triples and in-place calls: the bulk of it
    for plan in ("compile", "bench"):
        assert matrix.cases(plan, sample="gate") == matrix.pairs_sample(matrix.cases(plan))


def test_the_gates_sample_one_case_short_misses_a_pair_or_a_risk():
    sample = matrix.cases("gpu", sample="gate")
    held = [_axis_pairs([c]) | matrix.gate_risks(c) for c in sample]
    everything = set().union(*held)
    assert any(set().union(*(held[:i] + held[i + 1:])) != everything for i in range(len(sample)))


def test_plan_params_sample_the_plan_where_asked():
    full, sampled = plan_params("compile", BUILT_IN_STAGES), plan_params("compile", BUILT_IN_STAGES, sample="pairs")
    assert [p.id for p in sampled] == [c.id for c in matrix.pairs_sample(matrix.cases("compile"))]
    assert {p.id for p in sampled} < {p.id for p in full}


def test_a_stage_registered_again_gets_cases_of_its_own():
    """A user's stage registered by a second run in one process equals the first's record without
    being it: its cases hold the new record (the start's compile finds them by identity)."""
    first = replace(BUILT_IN_STAGES["naive"], name="mine", registered=True)
    second = replace(first)
    assert first == second and first is not second
    for stage in (first, second):
        mine = [c for c in matrix.cases("gpu", with_registered([stage])) if c.stage.name == "mine"]
        assert mine and all(c.stage is stage for c in mine)
    assert matrix.cases("gpu") is not matrix.cases("gpu") and matrix.cases("gpu") == matrix.cases("gpu")
