"""The access model's expectations on chosen cases: which operands the compiler may vectorise, and how much each thread moves."""

import pytest

from fixtures.cases import access, matrix
from fixtures.cases.dtypes import DTYPES
from fixtures.cases.matrix import Case
from fixtures.cases.stages import BUILT_IN_STAGES
from tests.conftest import FOUR_ROWS

pytestmark = pytest.mark.harness


def make_case(stage, dtype="fp16", align="align16", layout="static", shape=(128, 2048), family="aligned"):
    return Case(FOUR_ROWS if stage == "four_rows" else BUILT_IN_STAGES[stage], DTYPES[dtype], align, layout, shape, family)


@pytest.mark.parametrize(
    ("case", "vectors"),
    [
        pytest.param(make_case("tv"), "abc", id="tv-align16-static"),
        pytest.param(make_case("tv", dtype="i8"), "abc", id="tv-i8-align16-static"),
        pytest.param(make_case("vectorized"), "abc", id="vectorized-align16-static"),
        pytest.param(make_case("naive"), "", id="naive-never"),
        pytest.param(make_case("tv", align="natural"), "", id="tv-natural"),
        pytest.param(make_case("tv", align="offset"), "", id="tv-offset"),
        pytest.param(make_case("tv", layout="dynamic"), "", id="tv-dynamic-declares-no-divisibility"),
        pytest.param(make_case("tv", layout="strided"), "", id="tv-strided-odd-pitch"),
        pytest.param(make_case("tv", layout="compact"), "abc", id="tv-compact-N-divisible"),
        pytest.param(make_case("predicated", layout="compact", shape=(1000, 1003), family="odd"), "",
                     id="predicated-compact-N-indivisible"),
        pytest.param(make_case("tv", layout="colmajor"), "abc", id="tv-colmajor-values-span-rows"),
        pytest.param(make_case("vectorized", layout="colmajor"), "", id="vectorized-colmajor-one-row"),
        pytest.param(make_case("tv", layout="bcast"), "abc", id="tv-bcast-even-N"),
        pytest.param(make_case("predicated", layout="bcast", shape=(1000, 1003), family="odd"), "b",
                     id="predicated-bcast-odd-N-only-b"),
    ],
)
def test_vector_operands(case, vectors):
    """16-byte accesses need an align16 base, a vectorisable stage and strides that keep runs aligned."""
    assert access.vector_operands(case) == frozenset(vectors)


@pytest.mark.parametrize("plan", sorted(p for p in matrix.PLANS if matrix.cases(p)))
def test_naive_never_vectorizes(plan):
    """The naive stage touches one element per thread: no case of it may expect a vector."""
    naive = [c for c in matrix.cases(plan) if c.stage.name == "naive"]
    assert naive
    assert [c.id for c in naive if access.expected(c).vectors] == []


@pytest.mark.parametrize(
    ("case", "fragment_bytes", "load_widths", "store_width", "predicated"),
    [
        pytest.param(make_case("naive"), 2, {2}, 2, False, id="naive-fp16"),
        pytest.param(make_case("vectorized"), 16, {16}, 16, False, id="vectorized-fp16"),
        pytest.param(make_case("tv"), 256, {16}, 16, False, id="tv-fp16-16x16B"),
        pytest.param(make_case("tv", dtype="fp64", align="natural"), 256, {8}, 8, False, id="tv-fp64-natural"),
        pytest.param(make_case("four_rows", layout="colmajor"), 64, {8}, 8, False, id="four-rows-fp16-colmajor-8B"),
        pytest.param(make_case("four_rows", dtype="i8", layout="colmajor"), 64, {4}, 4, False, id="four-rows-i8-colmajor-4B"),
        pytest.param(make_case("four_rows", dtype="fp32", layout="colmajor"), 64, {16}, 16, False, id="four-rows-fp32-colmajor-16B"),
        pytest.param(make_case("tuned", layout="colmajor"), 32, {2}, 2, False, id="tuned-fp16-colmajor-one-row-elementwise"),
        pytest.param(make_case("tuned", layout="compact"), 32, {16}, 16, False, id="tuned-fp16-compact-2x16B"),
        pytest.param(make_case("tuned", dtype="u8", layout="compact"), 16, {16}, 16, False, id="tuned-u8-compact-16B"),
        pytest.param(make_case("predicated", layout="bcast", shape=(1000, 1003), family="odd"), 256, {2, 16}, 2, True,
                     id="predicated-bcast-mixed-loads"),
    ],
)
def test_expected_widths_and_bytes(case, fragment_bytes, load_widths, store_width, predicated):
    """Bytes per thread come from the stage's values, widths from the vector rule, else one element."""
    want = access.expected(case)
    assert want.fragment_bytes == fragment_bytes
    assert want.load_widths == load_widths
    assert want.width("c") == store_width
    assert want.predicated is predicated


def test_broadcast_input_flag_follows_layout():
    """Only the bcast layout lets an input be read fewer times than the output is written."""
    assert access.expected(make_case("tv", layout="bcast")).broadcast_inputs == 1
    assert access.expected(make_case("tv", layout="static")).broadcast_inputs == 0


def test_explain_names_vectors_element_width_and_paths():
    """The failure message of the compile tier; it must say what was expected in plain words."""
    assert access.expected(make_case("tv")).explain() == (
        "16-byte vectors on [a,b,c], else 2-byte; 256 B per tensor per thread, 1 path"
    )
    assert access.expected(make_case("predicated", align="natural")).explain() == (
        "16-byte vectors on [none], else 2-byte; 256 B per tensor per thread on the full-tile path, 2 B in the boundary loop"
    )
    boundary_only = make_case("predicated", shape=(97, 101), family="odd")
    assert access.expected(boundary_only).explain() == (
        "16-byte vectors on [none], else 2-byte; the boundary loop only, 2 B per tensor"
    )
    assert access.expected(boundary_only).bytes_stored == 2
