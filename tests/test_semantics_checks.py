"""The semantics family's judgements, each with a planted defect: a GPU result that differs from the
host JIT's is ``GpuHostDisagreement`` (saying which path matches the reference), a wrong value is
``Mismatch``, an output left as poisoned is ``Unwritten``; the untouched results pass. The "GPU"
outputs here are the host JIT's, altered: the checks are the same on a GPU."""

import pytest
import torch

from fixtures.cases import semantics as sem
from fixtures.cases.failures import GpuHostDisagreement, Mismatch, Unwritten

pytestmark = pytest.mark.harness


@pytest.fixture(scope="module")
def floordiv_i8():
    from fixtures.dsl import compat, semantics as run

    if compat.host_jit_unavailable():
        pytest.skip(compat.host_jit_unavailable())
    case = sem.case_by_id("semantics-floordiv-i8-tensor")
    ops, host, expected = run.Runner().run(case, "host")
    return case, ops, host, expected


def _altered(outputs, index: int, value):
    from fixtures.dsl.semantics import Outputs

    tensors = [t.clone() for t in outputs.tensors]
    tensors[0][index] = value
    return Outputs(tensors)


def test_untouched_results_pass(floordiv_i8):
    from fixtures.dsl import semantics as run

    case, ops, host, expected = floordiv_i8
    run.check_paths_agree(case, ops, host, host, expected)
    run.check_against_reference(case, "GPU", ops, host, expected)


def test_a_gpu_that_differs_from_the_host_is_its_own_failure(floordiv_i8):
    from fixtures.dsl import semantics as run

    case, ops, host, expected = floordiv_i8
    gpu = _altered(host, 1, int(host.tensors[0][1]) + 1)
    with pytest.raises(GpuHostDisagreement, match=r"`a // b` on Int8, a tensor on the right, GPU vs host JIT: "
                                                  r"1 of \d+ elements differ .*\(the host JIT matches the reference\)"):
        run.check_paths_agree(case, ops, gpu, host, expected)
    with pytest.raises(Mismatch, match=r"`a // b` on Int8, a tensor on the right, GPU: 1 of \d+ elements differ"):
        run.check_against_reference(case, "GPU", ops, gpu, expected)


def test_an_output_never_written_is_unwritten(floordiv_i8):
    from fixtures.dsl import semantics as run

    case, ops, host, expected = floordiv_i8
    poison = run._poison(expected[0].to(host.tensors[0].dtype))
    with pytest.raises(Unwritten, match="2 of .* output elements still hold the poison"):
        run.check_against_reference(case, "GPU", ops, _altered(_altered(host, 0, poison[0]), 3, poison[3]), expected)


def test_an_approximate_function_is_judged_in_ulps():
    """Within the table's bound passes, one ulp past it fails: exp2 on Float32 is 2 ulps."""
    from fixtures.dsl import semantics as run

    t = sem.TYPES["f32"]
    want = torch.tensor([1.5, 100.0], dtype=torch.float64)
    ulp = run._ulp(want, torch.float32)
    inside = (want + 2 * ulp).to(torch.float32)
    outside = (want + 3 * ulp).to(torch.float32)
    assert run._same(inside, want, sem.ulps("exp2", "f32"), t).all()
    assert not run._same(outside, want, sem.ulps("exp2", "f32"), t).any()
    assert sem.ulps("exp2", "f64") == 1 and sem.ulps("exp2", "bf16") == sem.HALF_ULPS and sem.ulps("add", "f32") == 0


def test_an_exact_function_is_judged_on_its_zeros_sign_too():
    """floor(-0.0) is -0.0: a +0.0 fails, whatever type the reference was computed in (it was equal
    before, since the float64 reference compared by value)."""
    from fixtures.dsl import semantics as run

    t = sem.TYPES["f32"]
    want = torch.tensor([-0.0, 1.0, float("nan")], dtype=torch.float64)
    assert run._same(torch.tensor([-0.0, 1.0, float("nan")]), want, 0, t).all()
    assert run._same(torch.tensor([0.0, 1.0, float("nan")]), want, 0, t).tolist() == [False, True, True]


def test_a_wrong_comparison_is_a_mismatch_not_an_output_never_written():
    """A bool output's poison is every value's complement: a wrong compare result equals it, so a
    bool output is never called unwritten (the Uint8 composition defect was reported so)."""
    from fixtures.dsl import compat, semantics as run

    if compat.host_jit_unavailable():
        pytest.skip(compat.host_jit_unavailable())
    case = sem.case_by_id("semantics-gt-u8-tensor")
    ops, host, expected = run.Runner().run(case, "host")
    wrong = _altered(host, 0, not bool(host.tensors[0][0]))
    with pytest.raises(Mismatch, match=r"`a > b` on Uint8, a tensor on the right, GPU: 1 of \d+ elements differ"):
        run.check_against_reference(case, "GPU", ops, wrong, expected)


def test_a_conversion_rule_needs_a_value_that_tested_it():
    """Out-of-range sources that are only NaN and inf: inf decides saturation now; a case whose
    sources test no rule (all NaN) gives no rule but the values."""
    from types import SimpleNamespace

    from fixtures.dsl import semantics as run
    from fixtures.dsl.semantics import Outputs

    case = sem.case_by_id("semantics-to-i32-f16")
    ops = SimpleNamespace(a=torch.tensor([float("nan"), float("inf"), -float("inf")]), observed=[0, 1, 2])
    saturated = Outputs([torch.tensor([0, 2**31 - 1, -2**31], dtype=torch.int32)])
    assert run._conversion_rule(case, ops, saturated) == "saturates"
    arbitrary = Outputs([torch.tensor([12345, 12345, 12345], dtype=torch.int32)])
    assert run._conversion_rule(case, ops, arbitrary) != "saturates"


def test_a_group_that_cannot_run_as_one_runs_each_case_alone(monkeypatch):
    """A compile group whose one host function fails (a new release's defect in one of its
    cases) is reported in a warning, and each case then runs alone: its own result, judged alone."""
    from fixtures.dsl import compat, semantics as run
    from fixtures.dsl.kernels import semantics as kernels

    if compat.host_jit_unavailable():
        pytest.skip(compat.host_jit_unavailable())
    case = sem.case_by_id("semantics-floordiv-i8-tensor")
    group = sem.compile_group(case.id, "host")
    assert len(group) > 1 and case in group

    def broken(*args):
        raise RuntimeError("planted: this group will not compile")

    monkeypatch.setattr(kernels, "group_on_host", broken)
    with pytest.warns(UserWarning, match=r"could not run as one host function .*planted.*each runs alone"):
        ops, got, expected = run.Runner().run(case, "host")
    run.check_against_reference(case, "host", ops, got, expected)
