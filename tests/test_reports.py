"""Run reports: atomic writes, the summary a CI job shows, and how phase reports become outcomes."""

import dataclasses
import json
import os
import stat
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import pytest

from fixtures.plugin import collector

from reports import atomic, baseline, summary
from reports.model import (
    PLAN_SAMPLE,
    SCHEMA,
    TIERS,
    ApiDrift,
    BandwidthRecord,
    BaselineInfo,
    CaseRecord,
    CaseResult,
    CompileTally,
    Fingerprint,
    MergedRun,
    RunResult,
    Span,
    Timeline,
)

pytestmark = pytest.mark.harness


def test_write_json_replaces_content_and_leaves_no_temp_files(tmp_path):
    """Readers see whole documents: the new one replaces the old, and nothing else stays behind."""
    path = tmp_path / "nested" / "results.json"
    atomic.write_json(path, {"run": 1})
    atomic.write_json(path, {"run": 2, "cases": ["b", "a"]})
    assert json.loads(path.read_text()) == {"run": 2, "cases": ["b", "a"]}
    assert path.read_text().endswith("}\n")
    assert [p.name for p in path.parent.iterdir()] == ["results.json"]


def test_unserialisable_data_keeps_the_previous_file(tmp_path):
    """A report that can't be encoded must not destroy the last good one."""
    path = tmp_path / "results.json"
    atomic.write_json(path, {"run": 1})
    with pytest.raises(TypeError):
        atomic.write_json(path, {"run": 2, "bad": object()})
    assert json.loads(path.read_text()) == {"run": 1}
    assert [p.name for p in tmp_path.iterdir()] == ["results.json"]


def test_failure_while_writing_keeps_the_previous_file(tmp_path, monkeypatch):
    """A crash after the temporary file exists (here: fsync) removes it and leaves the old content."""
    path = tmp_path / "summary.md"
    atomic.write_text(path, "old\n")

    def broken_fsync(fd):
        raise OSError("disk gone")

    monkeypatch.setattr(os, "fsync", broken_fsync)
    with pytest.raises(OSError, match="disk gone"):
        atomic.write_text(path, "new\n")
    assert path.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["summary.md"]


def test_written_file_has_the_umask_mode(tmp_path):
    """Report files must be as readable as any other file the job writes (junit.xml gets 0644)."""
    old = os.umask(0o022)
    try:
        atomic.write_text(tmp_path / "summary.md", "x\n")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "summary.md").stat().st_mode) == 0o644


def case(nodeid, outcome, tier="host", reason="", message=""):
    return CaseResult(nodeid=nodeid, outcome=outcome, tier=tier, duration_s=0.1, reason=reason, message=message)


NO_GPU = "no CUDA device"


@pytest.fixture
def run():
    return RunResult(
        fingerprint=Fingerprint(dsl="4.8.1", gpu="no GPU"),
        arch="sm_90a",
        started="2026-01-01T00:00:00+00:00",
        exit_status=1,
        api_drift=[
            ApiDrift("benchmark", "cutlass.testing.benchmark", "cutlass.testing.benchmark", False),
            ApiDrift("make_rmem_tensor", "cutlass.cute.make_fragment", "cutlass.cute.make_rmem_tensor", True),
            ApiDrift("JitArguments", None, "cutlass.testing.JitArguments", True),
        ],
        cases=[
            case("h::ok1", "passed"),
            case("h::ok2", "passed"),
            case("h::bad", "failed", message="AssertionError: widths differ\nsecond line"),
            case("c::fp8", "xfailed", tier="compile", reason="fp8 cannot lower"),
            case("c::xp", "xpassed", tier="compile"),
            case("g::a", "skipped", tier="gpu", reason=NO_GPU),
            case("g::b", "skipped", tier="gpu", reason=NO_GPU),
            case("g::c", "error", tier="gpu", message="fixture exploded"),
        ],
    )


def test_summary_tier_by_outcome_table(run):
    """One row per tier, columns in the fixed outcome order, and a total row."""
    lines = summary.render(run).splitlines()
    assert "| tier | passed | failed | error | xfailed | xpassed | skipped |" in lines
    start = lines.index("| tier | passed | failed | error | xfailed | xpassed | skipped |")
    assert lines[start + 2 : start + 6] == [
        "| compile | 0 | 0 | 0 | 1 | 1 | 0 |",
        "| gpu | 0 | 0 | 1 | 0 | 0 | 2 |",
        "| host | 2 | 1 | 0 | 0 | 0 | 0 |",
        "| **all** | 2 | 1 | 1 | 1 | 1 | 2 |",
    ]


def test_each_tier_of_the_run_says_what_it_checks_under_the_table(run):
    lines = summary.render(run).splitlines()
    start = lines.index("| **all** | 2 | 1 | 1 | 1 | 1 | 2 |")
    assert lines[start + 1 : start + 5] == ["", f"- host: {summary.TIER_CHECKS['host']}",
                                            f"- compile: {summary.TIER_CHECKS['compile']}", f"- gpu: {summary.TIER_CHECKS['gpu']}"]
    assert set(summary.TIER_CHECKS) == set(TIERS)


def test_planted_stages_rows_are_explained_once(run):
    run.cases = [CaseResult(f"c::{stage}", "passed", tier, 0.1, case=CaseRecord(f"{stage}-fp16", stage, "fp16"))
                 for stage in ("planted_sub", "naive") for tier in ("compile", "gpu")]
    text = summary.render(run)
    assert text.count("Stages named `planted_*` are wrong on purpose, neither the DSL's nor yours") == 1
    run.cases = [c for c in run.cases if c.case.stage == "naive"]
    assert "planted_" not in summary.render(run)


def test_the_compile_count_says_why_it_differs_from_the_cases_and_signatures(run):
    run.compiles = CompileTally(1316, 1306)
    (line,) = [line for line in summary.render(run).splitlines() if line.startswith("- kernel compiles:")]
    assert line.startswith("- kernel compiles: `1316` for `8` cases, `1306` distinct signatures (cases of one signature "
                           "share a process's compile; each xdist worker compiles")


def test_pytests_empty_parameter_set_skip_is_explained(run):
    run.cases.append(case("g::plan", "skipped", tier="gpu", reason="got empty parameter set for (case)"))
    assert ("| skipped | 1 | got empty parameter set for (case): pytest's words for a test left with no parameters in "
            "this run (no case of its plan for the run's stages and options), so it had nothing to check |"
            in summary.render(run).splitlines())


def test_summary_header_fingerprint_and_exit_status(run):
    """The summary names the install, the arch and the exit status before anything else."""
    text = summary.render(run)
    for line in ("- dsl: `4.8.1`", "- gpu: `no GPU`", "- arch: `sm_90a`", "- exit status: `1`"):
        assert line in text.splitlines()


def test_summary_lists_failures_errors_and_xpasses_by_first_message_line(run):
    """What needs a human: failed, error and unexpected passes, each with its message's first line."""
    section = summary.render(run).split("## Failures\n\n", 1)[1].split("\n\n", 1)[0]
    assert section.splitlines() == [
        "- `h::bad`: AssertionError: widths differ",
        "- `c::xp`: xpassed",
        "- `g::c`: fixture exploded",
    ]


def test_summary_counts_skip_and_xfail_reasons(run):
    """Skips are grouped by reason with counts, so one missing GPU reads as one line, not hundreds."""
    text = summary.render(run)
    assert f"| skipped | 2 | {NO_GPU} |" in text.splitlines()
    assert "| xfailed | 1 | fp8 cannot lower |" in text.splitlines()


def test_summary_lists_only_drifted_capabilities(run):
    """A capability on its current spelling is not news; an old spelling or a missing one is."""
    section = summary.render(run).split("## API drift\n\n", 1)[1]
    assert section.splitlines() == [
        "- `make_rmem_tensor`: uses `cutlass.cute.make_fragment` (current spelling `cutlass.cute.make_rmem_tensor`)",
        "- `JitArguments`: absent in this release (current spelling `cutlass.testing.JitArguments`)",
    ]


def test_clean_run_has_no_optional_sections(run):
    """Sections appear only when they have something to say."""
    run.cases = [case("h::ok", "passed")]
    run.api_drift = run.api_drift[:1]
    text = summary.render(run)
    assert "## Failures" not in text
    assert "## Skips and expected failures" not in text
    assert "## API drift" not in text


def test_run_result_json_has_schema_and_counts(run):
    """results.json is keyed by schema so readers can refuse a layout they don't know."""
    data = run.to_json()
    assert data["schema"] == SCHEMA
    assert data["counts"] == {"passed": 2, "failed": 1, "xfailed": 1, "xpassed": 1, "skipped": 2, "error": 1}
    assert data["cases"][0] == {"nodeid": "h::ok1", "outcome": "passed", "tier": "host",
                                "duration_s": 0.1, "reason": "", "message": "", "case": None, "bandwidth": None,
                                "ptx": None, "gpu": "", "source": None, "repro": None,
                                "host_costs": [], "semantics": [], "worker": "", "start_s": None, "stop_s": None,
                                "cpu_s": None}
    json.dumps(data)


def bandwidth_record(stage: str, gbps: float) -> BandwidthRecord:
    return BandwidthRecord(case=f"{stage}-fp16-16384x8192", stage=stage, dtype="fp16", size="bandwidth",
                           shape=[16384, 8192], bytes=805306368, gbps=gbps, median_s=0.27, spread_s=0.0003, samples=10,
                           rel_noise=0.001, ceiling_gbps=3000.0, pct_ceiling=gbps / 30.0)


def test_results_json_round_trips(run):
    """What the collector writes, the comparison reads back unchanged."""
    run.cases[0].bandwidth = bandwidth_record("tuned", 2900.0)
    run.cases[0].worker, run.cases[0].start_s, run.cases[0].stop_s, run.cases[0].cpu_s = "gw3", 20.5, 21.25, 0.625
    run.baseline = BaselineInfo(note="--baseline not given")
    run.timeline = Timeline(epoch=1.8e9, spans=[Span("gw3", "start-up", 0.0, 9.5), Span("bench", "measure", 140.0, 189.5)],
                            parallel_end_s=159.1, bench_go_s=140.0, end_s=192.7)
    assert RunResult.from_json(json.loads(json.dumps(run.to_json()))) == run


def test_schema_1_results_load_with_defaults(run):
    """Reports written before bandwidth existed still load: the new fields take their defaults."""
    data = run.to_json()
    data["schema"] = "cute-dsl-harness/results/1"
    del data["baseline"]
    for c in data["cases"]:
        del c["case"], c["bandwidth"]
    loaded = RunResult.from_json(data)
    assert loaded.baseline == BaselineInfo() and loaded.cases[0].bandwidth is None and loaded.cases == run.cases


@pytest.mark.parametrize(
    ("mangle", "reason"),
    [
        pytest.param(lambda d: [d], "expected a JSON object, got list", id="not-a-dict"),
        pytest.param(lambda d: d | {"schema": "other/9"}, "unknown schema 'other/9'", id="wrong-schema"),
        pytest.param(lambda d: {k: v for k, v in d.items() if k != "schema"}, "unknown schema None", id="no-schema"),
        pytest.param(lambda d: {k: v for k, v in d.items() if k != "arch"}, "run: missing arch", id="no-arch"),
        pytest.param(lambda d: {k: v for k, v in d.items() if k != "cases"}, "'cases' is missing", id="no-cases"),
        pytest.param(lambda d: d | {"cases": [{"nodeid": "x"}]}, "case 0: missing outcome, tier, duration_s",
                     id="case-missing-keys"),
        pytest.param(lambda d: d | {"cases": ["x"]}, "case 0: expected a JSON object", id="case-not-a-dict"),
        pytest.param(lambda d: d | {"fingerprint": "4.8.1"}, "fingerprint: expected a JSON object, got str",
                     id="fingerprint-not-a-dict"),
        pytest.param(lambda d: d | {"fingerprint": {"dsl": 4.8}}, "fingerprint: dsl not a string", id="fingerprint-value"),
    ],
)
def test_from_json_refuses_in_one_line(run, mangle, reason):
    """A file that is not a readable results.json says why in one line, never a traceback deep inside."""
    with pytest.raises(ValueError, match=reason) as refused:
        RunResult.from_json(mangle(run.to_json()))
    assert "\n" not in str(refused.value)


def report(when, outcome, **extra):
    return SimpleNamespace(
        when=when, outcome=outcome, passed=outcome == "passed", failed=outcome == "failed",
        skipped=outcome == "skipped", **extra,
    )


@pytest.mark.parametrize(
    ("phase", "expected"),
    [
        pytest.param(report("setup", "passed"), None, id="setup-passed-says-nothing"),
        pytest.param(report("setup", "failed"), "error", id="setup-failed-is-error"),
        pytest.param(report("setup", "skipped"), "skipped", id="setup-skipped"),
        pytest.param(report("call", "passed"), "passed", id="call-passed"),
        pytest.param(report("call", "failed"), "failed", id="call-failed"),
        pytest.param(report("call", "skipped"), "skipped", id="call-skipped"),
        pytest.param(report("call", "skipped", wasxfail="fp8"), "xfailed", id="call-xfailed"),
        pytest.param(report("call", "passed", wasxfail="fp8"), "xpassed", id="call-xpassed"),
        pytest.param(report("setup", "skipped", wasxfail="fp8"), "xfailed", id="setup-xfailed"),
        pytest.param(report("teardown", "passed"), None, id="teardown-passed-says-nothing"),
        pytest.param(report("teardown", "failed"), "error", id="teardown-failed-is-error"),
    ],
)
def test_classify(phase, expected):
    """Every phase report maps to the case outcome pytest's own summary would show."""
    assert collector.classify(phase) == expected


@pytest.mark.parametrize(
    ("properties", "expected"),
    [
        pytest.param([("tier", "gpu")], {"tier": "gpu", "case": None, "bandwidth": None}, id="stamped-gpu"),
        pytest.param([("other", 1), ("tier", "host")], {"tier": "host", "case": None, "bandwidth": None},
                     id="stamped-host"),
        pytest.param([], {"tier": "harness", "case": None, "bandwidth": None}, id="unstamped-is-harness"),
        pytest.param([("tier", "bench"), ("case", {"id": "x", "stage": "tuned", "dtype": "fp16"}), ("bandwidth", bandwidth_record("tuned", 1.0).to_dict())],
                     {"tier": "bench", "case": CaseRecord("x", "tuned", "fp16"), "bandwidth": bandwidth_record("tuned", 1.0)},
                     id="bench-case"),
    ],
)
def test_recorded_case_takes_what_the_plugin_stamped(properties, expected):
    """Tier, matrix case and bandwidth come from the item's user properties, never from folder names."""
    recorder = collector.Recorder.__new__(collector.Recorder)  # no fingerprint needed to record a case
    recorder._cases = {}
    phase = report("call", "passed", nodeid="n::1", duration=0.5, user_properties=properties)
    recorder.pytest_runtest_logreport(phase)
    recorded = recorder._cases["n::1"]
    assert {"tier": recorded.tier, "case": recorded.case, "bandwidth": recorded.bandwidth} == expected


DATA = Path(__file__).parent / "data"


def recorded(name: str) -> RunResult:
    return RunResult.from_json(json.loads((DATA / name).read_text()))


def section(text: str, title: str) -> list[str]:
    return text.split(f"## {title}\n\n", 1)[1].split("\n## ", 1)[0].splitlines()


@pytest.mark.parametrize("path", [*sorted(DATA.glob("*.json")), *sorted(baseline.FOLDER.glob("*.json"))],
                         ids=lambda p: p.name)
def test_every_fingerprint_on_disk_reads_and_is_written_back_as_it_was(path):
    """The reports and baselines committed here (schemas and fields of their day) read as a
    ``Fingerprint`` that writes back the same object."""
    data = json.loads(path.read_text())
    if "machine_info" in data:  # a baseline
        written = data["machine_info"][baseline.FINGERPRINT_KEY]
        assert baseline.load(path).fingerprint.to_json() == written
    else:
        assert RunResult.from_json(data).to_json()["fingerprint"] == data["fingerprint"]


def test_a_fingerprint_is_written_with_the_fields_it_records():
    """A run its install stopped at start records four fields: only they are written, in a merged
    run's record and a baseline's too, and read back as they were."""
    partial = Fingerprint(dsl="4.8.1", dsl_libs="cu12+cu13", torch="2.13.0", python="3.12.3")
    run = RunResult(fingerprint=partial, arch="", started="", baseline=BaselineInfo("b.json", partial, 3),
                    merged_from=[MergedRun("a", "host", "", partial, "install broken", 6, 0)])
    data = json.loads(json.dumps(run.to_json()))
    written = {"dsl": "4.8.1", "dsl_libs": "cu12+cu13", "torch": "2.13.0", "python": "3.12.3"}
    assert data["fingerprint"] == data["baseline"]["fingerprint"] == data["merged_from"][0]["fingerprint"] == written
    assert RunResult.from_json(data) == run


def test_summary_matrix_is_stage_by_dtype_per_tier():
    """One table per tier that ran matrix cases, so a compile-tier pass never reads as device
    conformance; one cell per stage and dtype: all good shows the count, anything bad bad/total."""
    text = summary.render(recorded("run_481.json"))
    lines = section(text, "Matrix: gpu tier (stage x dtype)")
    assert lines[:4] == ["| stage | bf16 | fp32 | u8 |", "|---|---|---|---|",
                         "| tv_remap | ✅ 1 | ✅ 1 |  |", "| predicated | ❌ 1/2 | ✅ 1 |  |"]
    assert "| apply_mul_relu | ✅ 1 |  | xfail 1 |" in lines
    assert section(text, "Matrix: compile tier (stage x dtype)")[2] == "| tv_remap | ✅ 1 | ✅ 1 |"
    assert "## Matrix: bench tier" not in text  # the bandwidth table is its matrix


def test_a_tier_that_only_skipped_has_no_matrix_and_the_verdict_says_why():
    """What a CPU machine's run shows: the gpu tier's cases all skipped, so no gpu matrix (its
    ✅-free skip cells would read like device results), and a verdict line naming the reason."""
    data = recorded("run_481.json")
    for c in data.cases:
        if c.tier in ("gpu", "bench"):
            c.outcome, c.reason = "skipped", NO_GPU
    data.fingerprint, data.exit_status = dataclasses.replace(data.fingerprint, gpu="no GPU"), 0
    text = summary.render(data)
    assert "## Matrix: gpu tier" not in text and "## Matrix: compile tier" in text
    assert text.splitlines()[2] == (
        "**PASSED WITHOUT A GPU: 7 cases ran (6 passed, 1 xfailed: known limitations failing as recorded), 20 skipped "
        "· ran: host 3, compile 4 · not run: gpu (9 skipped: no CUDA device); "
        "bench (11 skipped: no CUDA device) · bandwidth: not measured · GPU: no GPU**"
    )


@pytest.mark.parametrize(
    ("changes", "head"),
    [
        pytest.param({"exit_status": 1}, "FAILED: 3 of 8 cases need a human", id="failed"),
        pytest.param({"exit_status": 2, "status": "interrupted", "collected": 20}, "INTERRUPTED after 8 of 20 cases (12 not run)",
                     id="interrupted"),
        pytest.param({"exit_status": 1, "status": "stopped early", "collected": 9}, "STOPPED EARLY after 8 of 9 cases (1 not run)",
                     id="maxfail"),
    ],
)
def test_verdict_opens_with_how_the_run_ended(run, changes, head):
    for name, value in changes.items():
        setattr(run, name, value)
    assert summary.verdict(run) == head + " · ran: host 3, compile 2, gpu 1 · bandwidth: not measured · GPU: no GPU"


def test_a_sampled_runs_verdict_says_so(run):
    run.selection = f"-m 'compile' {PLAN_SAMPLE}pairs"
    assert summary.verdict(run) == ("FAILED: 3 of 8 cases need a human · ran: host 3, compile 2, gpu 1 · plans sampled "
                                    f"({PLAN_SAMPLE}pairs): each plan's strength-2 sample, not all its cases · "
                                    "bandwidth: not measured · GPU: no GPU")


def test_summary_has_no_matrix_without_matrix_cases(run):
    assert "## Matrix" not in summary.render(run)


def test_summary_bandwidth_table_against_a_baseline():
    """Rows by size, then dtype, then stage (references last); slower is bold; PNGs linked by name."""
    text = summary.render(recorded("run_481.json"), [Path("/r/bandwidth.png"), Path("/r/pct_ceiling.png")])
    lines = section(text, "Bandwidth")
    assert lines[0] == ("Ceiling (D2D copy, this session): **3034 GB/s** · spec peak: 3352 GB/s · "
                        "baseline `runs/453/results.json` (dsl 4.5.3)")
    assert lines[2].startswith("| stage | dtype | size | shape | GB/s | % ceiling | % spec peak | noise % "
                               "| placement spread % | samples | baseline GB/s | baseline runs | start spread % | delta % "
                               "| threshold % (smallest slowdown caught) | verdict | judged by |")
    rows = [line.split(" | ")[:3] for line in lines[4:15]]
    assert [r[0].lstrip("| ") for r in rows[:5]] == ["tv_remap", "predicated", "tuned", "torch_add", "d2d_copy"]
    assert [r[2] for r in rows] == ["bandwidth"] * 9 + ["launch"] * 2
    assert ("| tv_remap | bf16 | bandwidth | 8192x8192 | 2141 | 70.6 | 63.9 | 0.6 | 14.1 | 50 | 2398 | – | – | -10.7 | 5.0 "
            "| **slower** | – |") in lines
    assert "| tuned | bf16 | bandwidth | 8192x8192 | 2902 | 95.6 | 86.6 | 0.6 | – | 50 | – | – | – | – | – | new | – |" in lines
    assert any("| 50 (3 throttled) |" in line for line in lines)
    assert lines[-2:] == ["![bandwidth](bandwidth.png)", "![pct_ceiling](pct_ceiling.png)"]


def test_summary_bandwidth_without_baseline_says_why_and_drops_its_columns():
    lines = section(summary.render(recorded("run_453.json")), "Bandwidth")
    assert lines[0].endswith("· baseline: none (--baseline not given)")
    assert lines[2] == "| stage | dtype | size | shape | GB/s | % ceiling | % spec peak | noise % | placement spread % | samples |"
    assert not any(line.startswith("![") for line in lines)


def test_summary_has_no_bandwidth_section_without_bench_cases(run):
    assert "## Bandwidth" not in summary.render(run)


def test_summary_marks_cases_judged_against_too_few_machine_starts():
    """A verdict against a baseline of fewer than baseline.MIN_RUNS starts says so, with the run count and spread."""
    data = recorded("run_481.json")
    rows = [c.bandwidth for c in data.bench_cases() if c.bandwidth.verdict == "same"]
    rows[0].baseline_runs, rows[0].baseline_spread_pct = 1, 0.0
    rows[1].baseline_runs, rows[1].baseline_spread_pct = 3, 0.8
    data.baseline.runs = 3
    lines = section(summary.render(data), "Bandwidth")
    assert lines[0].endswith("baseline `runs/453/results.json` (dsl 4.5.3, 3 runs)")
    first, second = (next(line for line in lines if line.startswith(f"| {r.stage} | {r.dtype} | {r.size} |")) for r in rows[:2])
    assert first.endswith("| 1 | 0.0 | +1.2 | 5.0 | same (baseline from 1 run) | – |")
    assert second.endswith(f"| 3 | 0.8 | {rows[1].delta_pct:+.1f} | 5.0 | same | – |")


def test_a_registered_stage_gets_its_own_section_with_bandwidth_against_torch_add(run):
    run.registered_stages = ["my_add"]
    gpu_case = CaseRecord("my_add-fp16-align16-dynamic-97x101", "my_add", "fp16", "align16", "dynamic", "odd")
    run.cases = [
        CaseResult("g1", "passed", "gpu", 0.1, case=gpu_case),
        CaseResult("g2", "failed", "gpu", 0.1, case=replace(gpu_case, id="my_add-fp16-align16-static-97x101", layout="static")),
        CaseResult("b1", "passed", "bench", 1.0, case=CaseRecord("x", "my_add", "fp16", "align16", "compact", "bandwidth"),
                   bandwidth=bandwidth_record("my_add", 1500.0)),
        CaseResult("b2", "passed", "bench", 1.0, bandwidth=bandwidth_record("torch_add", 3000.0)),
    ]
    lines = section(summary.render(run), "Your kernel `my_add`")
    assert "| family | dynamic | static |" in lines
    assert "| odd | ✅ 1 | ❌ 1/1 |" in lines
    assert "| fp16 | compact | bandwidth | 16384x8192 | 1500 | 3000 | 0.50x | 50.0 | no baseline |" in lines


def test_the_timeline_renders_processes_tiers_and_the_tail(run):
    """``python -m reports timeline``: each process's busy, CPU and idle time, worker time by tier, the
    longest cases and the tail; a run that recorded none is refused in one line, a case that recorded
    no CPU time (a run before schema 12, a crashed worker's case) leaves its cell empty."""
    from reports import timeline

    with pytest.raises(ValueError, match="no timeline recorded"):
        timeline.render(run, "old-run")
    for i, case in enumerate(run.cases):
        case.worker, case.start_s, case.stop_s = f"gw{i % 2}", 20.0 + i, 20.5 + i + (3 if i == 0 else 0)
        case.cpu_s = (3.0 if i == 0 else 0.5) if i % 2 == 0 else None  # gw0's cases: 4.5 s of CPU in 5.0 s held
    run.timeline = Timeline(epoch=1.8e9, spans=[Span("gw0", "start-up", 0.0, 9.0), Span("gw0", "collection", 9.0, 15.0)],
                            parallel_end_s=30.0, bench_go_s=28.0, end_s=33.0, controller_start_s=-12.25)
    text = timeline.render(run, "this-run")
    assert "- the controller's process started 12.2 s before the run's start" in text
    assert "- beyond the cases' calls (their setup, teardown and reports): 6.2 s, 0.4 s of it in the 1 xfailed cases'" in text
    assert "| gw0 | 9.0 | 15.0 | 20.0 | 26.5 | 4 | 5.0 | 4.5 | 1.5 |" in text  # cases 0, 2, 4, 6: busy 3.5 + 3 x 0.5 of 6.5
    assert "| gw1 |  |  | 21.0 | 27.5 | 4 | 2.0 |  | 4.5 |" in text  # no CPU recorded: an empty cell, not 0
    assert "worker time 7 s; their processes' CPU time 4 s (90% of those cases' worker time)" in text
    assert "- the bench phase was told to measure at 28.0 s" in text
    assert text.index(f"`{run.cases[0].nodeid}`") < text.index(f"`{run.cases[1].nodeid}`")  # the longest first
    assert "## The tail" in text
