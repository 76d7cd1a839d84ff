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
        assert set(op.rhs) <= {"tensor", "scalar", "composed"}, op.name


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
