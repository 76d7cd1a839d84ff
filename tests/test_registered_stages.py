"""A kernel author's flow, end to end on the CPU: registered stages through the compile tier, their
PTX facts in results.json, declared widths asserted, and a section per stage in summary.md."""

import json

import pytest

from tests.conftest import ADD_KERNEL, ROOT

pytestmark = pytest.mark.harness

USER_STAGES = ADD_KERNEL + '''
from fixtures.dsl.kernels import register, vectorized


@cute.jit
def elementwise(mA: cute.Tensor, mB: cute.Tensor, mC: cute.Tensor, stream: cuda.CUstream):
    m, n = mC.shape
    _add_kernel(mA, mB, mC).launch(grid=((m * n + 255) // 256, 1, 1), block=(256, 1, 1), stream=stream)


register("elementwise")(elementwise)
register("claims_vectors", vector_bytes=16)(elementwise)
register("vectors", vector_bytes=16)(vectorized.vectorized_elementwise_add)
'''


@pytest.fixture
def author(project):
    project.makepyfile(user_stages=USER_STAGES)
    (project.path / "suites").symlink_to(ROOT / "suites", target_is_directory=True)
    return project


def test_declared_widths_are_asserted_and_undeclared_ones_reported(author):
    out = author.path / "out"
    result = author.runpytest_subprocess(
        "suites/compile/test_registered_ptx.py", "--stage-module", "user_stages", "-k", "fp16 and (static or dynamic) and not large",
        f"--report-dir={out}",
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    cases = {c["case"]["id"]: c for c in json.loads((out / "results.json").read_text())["cases"]}
    assert len(cases) == 3 * 3 * 2  # stages x alignments x layouts
    failed = {i: c["message"] for i, c in cases.items() if c["outcome"] != "passed"}
    assert list(failed) == ["claims_vectors-fp16-align16-static-128x2048"]
    assert "no 16-byte store, though declared" in failed["claims_vectors-fp16-align16-static-128x2048"]
    vec = cases["vectors-fp16-align16-static-128x2048"]["ptx"]
    assert (vec["widest_load"], vec["widest_store"], vec["layout_allows"], vec["judged"]) == (16, 16, 16, True)
    plain = cases["elementwise-fp16-align16-static-128x2048"]["ptx"]
    assert (plain["widest_store"], plain["layout_allows"], plain["guarded"], plain["judged"]) == (2, 16, True, False)
    summary = (out / "summary.md").read_text()
    assert "## Your kernel `elementwise`" in summary and "## Your kernel `vectors`" in summary
    assert "reported, not judged: the stage declares no `vector_bytes`" in summary
    assert "**1 of 6 cases access narrower than the layout allows**" in summary


def test_the_widths_a_registered_kernel_indexes_in_are_reported_on_the_large_family(author):
    """A flat Int32 index (``elementwise``) is 32-bit past 2**31 elements; the DSL's dynamic
    layouts put the tutorial's vectorized kernel's offsets in 64 bits there."""
    out = author.path / "out"
    result = author.runpytest_subprocess(
        "suites/compile/test_registered_ptx.py", "--stage-module", "user_stages", "-k", "i8 and 32832x65536 and not mixed and not alias and not claims",
        f"--report-dir={out}",
    )
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()[-2000:]
    cases = {c["case"]["id"]: c["ptx"]["index_widths"] for c in json.loads((out / "results.json").read_text())["cases"]}
    assert cases["elementwise-i8-align16-static-32832x65536"] == "32"
    assert cases["vectors-i8-align16-dynamic-32832x65536"] == "64"
