"""compute-sanitizer's reports in the harness's words: the parsing on a recorded memcheck report
(the planted tail over-read on an H100, DSL 4.8.1), reads before an operand and several cases in
one process, the tool list, a refusal, the plugin's verdicts with the tool stubbed by a script,
and the NVTX shim that tells the tool each operand's extent."""

import stat
from pathlib import Path

import pytest

from fixtures.cases import failures
from fixtures.dsl import extents, sanitizer
from fixtures.plugin import sanitize

RECORDED = (Path(__file__).parent / "data" / "sanitizer" / "memcheck_tail_overread.txt").read_text()


def test_a_recorded_over_read_is_named_with_its_operand_and_thread():
    (finding,) = sanitizer.findings("memcheck", RECORDED)
    assert finding.kind == "out-of-bounds read"
    assert finding.kernel == "kernel_cutlass__tail_overread_kernel"
    assert finding.where == "0 bytes past the end of operand a (element 1 after its last)"
    assert finding.thread == "thread (236,0,0) of block (4,0,0)"
    assert sanitizer.refusal(RECORDED, sanitizer.ERROR_EXIT) is None


def test_an_address_inside_an_operand_is_its_element():
    placed = [sanitizer.Allocation("a", 1000, 200, 1000, 2), sanitizer.Allocation("b", 4000, 200, 4002, 2)]
    assert sanitizer.locate(4010, placed) == "operand b, element 4 of its storage"
    assert sanitizer.locate(1203, placed) == "3 bytes past the end of operand a (element 2 after its last)"
    assert sanitizer.locate(10**9, placed) == "address 0x3b9aca00, outside every operand"


@pytest.mark.parametrize(
    ("line", "kind"),
    [
        ("========= Invalid __global__ write of size 16 bytes", "out-of-bounds write"),
        ("========= Misaligned __global__ read of size 16 bytes", "misaligned read"),
        ("========= Uninitialized __global__ memory read of size 4 bytes", "uninitialized read"),
        ("========= Error: Race reported between Write access at 0x1d0 in k and Read access at 0x2e0 in k [8 hazards]",
         "race (Write / Read)"),
        ("========= Barrier error detected. Divergent thread(s) in warp", "barrier misuse"),
    ],
)
def test_each_tools_report_kind_in_the_harness_words(line, kind):
    (finding,) = sanitizer.findings("tool", f"========= COMPUTE-SANITIZER\n{line}\n=========     at k+0x10\n")
    assert finding.kind == kind


def test_a_clean_run_has_no_finding_and_no_refusal():
    clean = "========= COMPUTE-SANITIZER\ncase: conforms\n========= ERROR SUMMARY: 0 errors\n"
    assert sanitizer.findings("memcheck", clean) == []
    assert sanitizer.refusal(clean, 0) is None


def test_a_tool_that_does_not_run_the_case_says_why():
    refused = "========= COMPUTE-SANITIZER\n========= Error: Device not supported\n"
    assert sanitizer.refusal(refused, 1) == "Error: Device not supported"
    assert sanitizer.refusal("Segmentation fault\n", -11).startswith("compute-sanitizer exited -11 without a report")


def test_the_tool_list_defaults_to_memcheck_and_names_an_unknown_one():
    assert sanitizer.parse_tools("") == ("memcheck",)
    assert sanitizer.parse_tools("racecheck, initcheck") == ("racecheck", "initcheck")
    with pytest.raises(ValueError, match=r"^--sanitize: unknown tool suites/gpu \(choose from memcheck"):
        sanitizer.parse_tools("suites/gpu")


def _fake_tool(tmp_path, monkeypatch, output: str, status: int) -> None:
    """compute-sanitizer replaced by a script that prints ``output`` and exits ``status``."""
    (tmp_path / "report.txt").write_text(output)
    tool = tmp_path / "compute-sanitizer"
    tool.write_text(f"#!/bin/sh\ncat {tmp_path / 'report.txt'}\nexit {status}\n")
    tool.chmod(tool.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setattr(sanitizer, "find_tool", lambda: str(tool))


def test_a_finding_fails_the_case_in_the_harness_words(tmp_path, monkeypatch):
    _fake_tool(tmp_path, monkeypatch, RECORDED, sanitizer.ERROR_EXIT)
    with pytest.raises(failures.SanitizerFinding) as raised:
        sanitize.run("tv-fp16-align16-dynamic-97x101", "memcheck", [], required=False)
    first, second = str(raised.value).splitlines()[:2]
    assert first == ("tv-fp16-align16-dynamic-97x101: memcheck: out-of-bounds read in kernel_cutlass__tail_overread_kernel, "
                     "0 bytes past the end of operand a (element 1 after its last), thread (236,0,0) of block (4,0,0) [1 reported]")
    assert second == "Invalid __global__ read of size 2 bytes"


def test_a_failure_the_tool_does_not_explain_still_fails(tmp_path, monkeypatch):
    _fake_tool(tmp_path, monkeypatch, "========= COMPUTE-SANITIZER\nMismatch: ...\n========= ERROR SUMMARY: 0 errors\n", 1)
    with pytest.raises(failures.ConformanceError, match=r"failed under compute-sanitizer --tool memcheck \(exit 1\)"):
        sanitize.run("tv-fp16-align16-dynamic-97x101", "memcheck", [], required=False)


@pytest.mark.parametrize("required", [False, True])
def test_a_refusing_tool_skips_or_fails_when_required(tmp_path, monkeypatch, required):
    _fake_tool(tmp_path, monkeypatch, "========= COMPUTE-SANITIZER\n========= Error: Device not supported\n", 1)
    outcome = pytest.fail.Exception if required else pytest.skip.Exception
    with pytest.raises(outcome, match="compute-sanitizer --tool memcheck does not run here: Error: Device not supported"):
        sanitize.run("tv-fp16-align16-dynamic-97x101", "memcheck", [], required=required)


def test_a_read_before_an_operand_is_named_by_how_far_before_its_first_element():
    placed = [sanitizer.Allocation("a", 1002, 200, 1002, 2), sanitizer.Allocation("b", 4000, 200, 4000, 2)]
    assert sanitizer.locate(1000, placed) == "2 bytes before the start of operand a (element 1 before its first)"
    assert sanitizer.locate(3997, placed) == "3 bytes before the start of operand b (element 2 before its first)"


# two cases in one child, the second's A one element past a 16-byte boundary and read before it
# (memcheck's lines as compute-sanitizer 2025.3.1 wrote them for an NVTX region on an H100)
TWO_CASES = f"""========= COMPUTE-SANITIZER
{sanitizer.CASE_TAG}tv-fp16-align16-static-128x2048
{sanitizer.RANGES_TAG}[{{"operand": "a", "start": 4096, "size": 512, "view_start": 4096, "element_bytes": 2}}]
tv-fp16-align16-static-128x2048: conforms
{sanitizer.CASE_TAG}predicated-fp16-offset-dynamic-97x101
{sanitizer.RANGES_TAG}[{{"operand": "a", "start": 139794583650306, "size": 19594, "view_start": 139794583650306, "element_bytes": 2}}]
========= Invalid __global__ read of size 4 bytes
=========     at kernel_cutlass__head_pair_kernel_tensorptrf16gmem+0x110
=========     by thread (0,0,0) in block (0,0,0)
=========     Access to 0x7f2476800000 is out of bounds
=========     and is 2 bytes before the nearest allocation at 0x7f2476800002 of size 19,594 bytes
========= ERROR SUMMARY: 1 error
"""


def test_each_finding_is_mapped_to_the_operands_of_the_case_it_came_in():
    (finding,) = sanitizer.findings("memcheck", TWO_CASES)
    assert finding.case == "predicated-fp16-offset-dynamic-97x101"
    assert finding.where == "2 bytes before the start of operand a (element 1 before its first)"
    assert finding.kernel == "kernel_cutlass__head_pair_kernel"


def test_several_cases_in_one_process_fail_as_the_case_that_read_outside(tmp_path, monkeypatch):
    _fake_tool(tmp_path, monkeypatch, TWO_CASES, sanitizer.ERROR_EXIT)
    with pytest.raises(failures.SanitizerFinding, match=r"^predicated-fp16-offset-dynamic-97x101: memcheck: out-of-bounds read in "
                       r"kernel_cutlass__head_pair_kernel, 2 bytes before the start of operand a"):
        sanitize.run(["tv-fp16-align16-static-128x2048", "predicated-fp16-offset-dynamic-97x101"], "memcheck", [], required=False)


def test_a_child_that_cannot_mark_the_extents_is_a_refusal_saying_why(tmp_path, monkeypatch):
    said = f"========= COMPUTE-SANITIZER\n{sanitizer.REFUSED_TAG}cannot tell it each operand's exact extent: no C compiler\n" \
           "========= ERROR SUMMARY: 0 errors\n"
    assert sanitizer.refusal(said, 3) == "cannot tell it each operand's exact extent: no C compiler"
    _fake_tool(tmp_path, monkeypatch, said, 3)
    with pytest.raises(pytest.skip.Exception, match="does not run here: cannot tell it each operand's exact extent"):
        sanitize.run("tv-fp16-align16-dynamic-97x101", "memcheck", [], required=False)


def test_without_a_c_compiler_the_extents_cannot_be_marked(monkeypatch):
    monkeypatch.setattr(extents.shutil, "which", lambda name: None)
    with pytest.raises(extents.ExtentsUnavailable, match="no C compiler"):
        extents.build(None)


def test_the_nvtx_headers_are_found_in_cuda_home_first(tmp_path, monkeypatch):
    (tmp_path / "include" / "nvtx3").mkdir(parents=True)
    (tmp_path / "include" / extents.HEADER).write_text("")
    monkeypatch.setenv("CUDA_HOME", str(tmp_path))
    assert extents.include_dir(None) == tmp_path / "include"


def test_the_shim_builds_and_its_calls_are_no_ops_outside_the_tool():
    """Outside compute-sanitizer NVTX has no tool to tell: marking and widening do nothing."""
    try:
        library = extents.build(None)
    except extents.ExtentsUnavailable as exc:
        pytest.skip(f"no NVTX shim on this machine: {exc}")
    assert library.is_file() and extents.build(None) == library  # built once
    marks = extents.Extents(None)
    extent = extents.Extent(allocation=0x10000, allocation_bytes=4098, start=0x10002, bytes=4096)
    marks.widen(marks.mark(extent), extent)
