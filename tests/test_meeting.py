"""A family case's two tests, one a path, compared where they meet (``fixtures.plugin.meeting``):
whichever ends second compares, in either order; a test whose counterpart is not in the run
computes both paths itself. Planted: two paths that disagree, each order of the two tests."""

import pytest

from fixtures.plugin.meeting import Meeting

pytestmark = pytest.mark.harness


def test_the_second_to_leave_gets_the_firsts_result_whichever_path_it_is(tmp_path):
    for first, second in (("gpu", "host"), ("host", "gpu")):
        meeting = Meeting(tmp_path / first, "semantics-floordiv-i8-tensor")
        assert meeting.leave(first, [1, 2, 3], second) is None
        assert meeting.leave(second, [1, 2, 4], first) == [1, 2, 3]


def test_every_element_type_a_path_computes_comes_back_as_left(tmp_path):
    """Planted by the first GPU run: a plain pickle of a uint16-64 or fp8 tensor does not load back."""
    import torch

    left = [torch.arange(5).to(dtype) for dtype in (torch.uint16, torch.uint32, torch.uint64, torch.float8_e4m3fn,
                                                  torch.float8_e5m2, torch.bfloat16, torch.bool, torch.int8)]
    meeting = Meeting(tmp_path, "semantics-to-u64-u8")
    meeting.leave("gpu", left, "host")
    back = meeting.leave("host", [], "gpu")
    assert [t.dtype for t in back] == [t.dtype for t in left]
    assert all(torch.equal(a.view(torch.uint8), b.view(torch.uint8)) for a, b in zip(back, left))


def test_case_ids_that_are_no_file_names_meet_apart(tmp_path):
    meeting, other = (Meeting(tmp_path, case_id) for case_id in ("a/b", "a-b"))
    meeting.leave("gpu", "a/b", "host")
    assert other.leave("host", "a-b", "gpu") is None
    assert meeting.leave("host", "host of a/b", "gpu") == "a/b"


# a family's two tests as the suites name them, each computing one path; ``WRONG`` plants a wrong host path
FAMILY = '''
import pytest

WRONG = {wrong!r}

def compute(path, case):
    return [1, 2, 4] if path == "host" and case in WRONG else [1, 2, 3]

def judge(mine, path, other):
    if other is not None:
        gpu, host = (mine, other) if path == "gpu" else (other, mine)
        assert gpu == host, f"GPU vs host JIT: {{gpu}} != {{host}}"

@pytest.mark.parametrize("case", ["semantics-a", "semantics-b"])
def test_semantics_on_{first}(case, meeting):
    mine = compute("{first}", case)
    other = meeting.leave("{first}", mine, "{second}") if meeting.apart else compute("{second}", case)
    judge(mine, "{first}", other)

@pytest.mark.parametrize("case", ["semantics-a", "semantics-b"])
def test_semantics_on_{second}(case, meeting):
    mine = compute("{second}", case)
    other = meeting.leave("{second}", mine, "{first}") if meeting.apart else compute("{first}", case)
    judge(mine, "{second}", other)
'''

CONFTEST = '''
import pytest
from fixtures.plugin import run_state

pytest_plugins = ["fixtures.plugin.meeting"]

@pytest.hookimpl(tryfirst=True)
def pytest_configure(config):
    run_state.of(config).scratch = config.rootpath / "scratch"
'''


def _run(pytester, first: str, second: str, *args: str, wrong=("semantics-b",)):
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_family=FAMILY.format(first=first, second=second, wrong=set(wrong)))
    return pytester.runpytest_inprocess("-p", "no:xdist", "-p", "no:cacheprovider", "-p", "no:randomly", *args)


@pytest.mark.parametrize("first, second", [("gpu", "host"), ("host", "gpu")])
def test_a_disagreement_is_red_on_the_test_that_ends_second(pytester, first, second):
    result = _run(pytester, first, second)
    result.assert_outcomes(passed=3, failed=1)
    result.stdout.fnmatch_lines(["*AssertionError: GPU vs host JIT: [[]1, 2, 3[]] != [[]1, 2, 4[]]",
                                 f"FAILED test_family.py::test_semantics_on_{second}[[]semantics-b[]]*"])


def test_paths_that_agree_are_green_and_each_left_its_result(pytester):
    result = _run(pytester, "gpu", "host", wrong=())
    result.assert_outcomes(passed=4)
    assert sorted(p.name for p in (pytester.path / "scratch" / "meeting").iterdir()) == [
        "semantics-a.gpu.pt", "semantics-a.host.pt", "semantics-b.gpu.pt", "semantics-b.host.pt"]


def test_a_test_whose_counterpart_is_not_in_the_run_computes_both_paths(pytester):
    result = _run(pytester, "gpu", "host", "-k", "on_gpu")
    result.assert_outcomes(passed=1, failed=1, deselected=2)
    result.stdout.fnmatch_lines(["*AssertionError: GPU vs host JIT: [[]1, 2, 3[]] != [[]1, 2, 4[]]",
                                 "FAILED test_family.py::test_semantics_on_gpu[[]semantics-b[]]*"])
    assert not (pytester.path / "scratch" / "meeting").exists()
