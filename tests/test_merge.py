"""``python -m reports merge``: several runs as one report, and the per-GPU view of a run."""

import dataclasses
import json
from xml.etree import ElementTree

import pytest

from reports import __main__ as cli
from reports import merge, summary
from reports.model import BandwidthRecord, CaseResult, Fingerprint, GpuRecord, RunResult

pytestmark = pytest.mark.harness

INSTALL = {"dsl": "4.8.1", "dsl_libs": "cu13", "dsl_cuda": "13.0", "torch": "2.11.0+cu130", "torch_cuda": "13.0",
           "driver": "580.159.04", "gpu": "NVIDIA H100 80GB HBM3"}


def gpu(index: int, name: str = "NVIDIA H100 80GB HBM3", host: str = "runner-a") -> GpuRecord:
    return GpuRecord(index, f"GPU-{host}-{index}", name, 81559, 2619, host)


def run_of(*cases: CaseResult, gpus=(), exit_status: int = 0, **fingerprint) -> RunResult:
    listed = list(gpus)
    return RunResult(fingerprint=Fingerprint(**{**INSTALL, **fingerprint}), arch="sm_90a", started="2026-11-24T03:00:00+00:00",
                     finished="2026-11-24T03:05:00+00:00", exit_status=exit_status, cases=list(cases),
                     host=listed[0].host if listed else "runner-a", gpus=listed, collected=len(cases))


def case(nodeid: str, outcome: str = "passed", tier: str = "gpu", on: GpuRecord | None = None,
         ceiling: float | None = None) -> CaseResult:
    bandwidth = None
    if ceiling is not None:
        bandwidth = BandwidthRecord(nodeid, "tv", "fp16", "bandwidth", [16384, 8192], 1, 3000.0, 1e-3, 1e-5, 100, 0.001,
                                    ceiling, 99.0)
    return CaseResult(nodeid, outcome, "bench" if bandwidth else tier, 0.5, message="boom" if outcome == "failed" else "",
                      gpu=on.uuid if on else "", bandwidth=bandwidth)


def test_runs_of_two_gpu_models_keep_both_results_of_a_case():
    h100, h200 = gpu(0), gpu(0, "NVIDIA H200", host="runner-b")
    a = run_of(case("t::x", on=h100), case("t::host", tier="host"), gpus=[h100])
    b = run_of(case("t::x", on=h200), case("t::host", tier="host"), gpus=[h200], gpu="NVIDIA H200")
    merged = merge.merge([("a", a), ("b", b)])
    assert [(c.nodeid, c.gpu, c.source) for c in merged.cases] == [
        ("t::x", h100.uuid, 0), ("t::host", "", 0), ("t::x", h200.uuid, 1), ("t::host", "", 1)]
    assert merged.fingerprint.gpu == "NVIDIA H100 80GB HBM3 + NVIDIA H200" and merged.fingerprint.dsl == "4.8.1"
    assert merged.gpus == [h100, h200] and merged.passed
    assert [m.path for m in merged.merged_from] == ["a", "b"]


def test_a_rerun_replaces_the_earlier_result_of_the_same_case():
    h100 = gpu(0)
    first = run_of(case("t::flaky", "failed", on=h100), case("t::ok", on=h100), gpus=[h100], exit_status=1)
    rerun = run_of(case("t::flaky", on=gpu(3)), gpus=[gpu(3)])
    merged = merge.merge([("first", first), ("rerun", rerun)])
    assert [(c.nodeid, c.outcome, c.source) for c in merged.cases] == [("t::flaky", "passed", 1), ("t::ok", "passed", 0)]
    assert merged.exit_status == 0 and merged.passed
    assert "1 results of an earlier run were replaced by a later run's (a re-run)" in merged.notes


def test_a_failure_or_an_interrupt_survives_the_merge():
    failed = merge.merge([("a", run_of(case("t::a", "failed"), exit_status=1)), ("b", run_of(case("t::b")))])
    assert failed.exit_status == 1 and not failed.passed
    stopped = run_of(case("t::a"), exit_status=2)
    stopped.status, stopped.collected = "interrupted", 5
    merged = merge.merge([("a", stopped), ("b", run_of(case("t::b")))])
    assert (merged.exit_status, merged.status, merged.not_run) == (2, "interrupted", 4)
    assert "a ended interrupted (4 cases not run)" in merged.notes


def test_an_interrupted_run_run_again_in_full_no_longer_stands():
    """An interrupted gate and its complete rerun of the same cases merge as the rerun: complete."""
    stopped = run_of(case("t::a"), exit_status=2)
    stopped.status, stopped.collected = "interrupted", 3
    rerun = run_of(case("t::a"), case("t::b"), case("t::c"))
    merged = merge.merge([("gate", stopped), ("rerun", rerun)])
    assert (merged.exit_status, merged.status, merged.not_run, merged.collected) == (0, "complete", 0, 3)
    assert "gate ended interrupted; rerun, a later complete run, ran every one of its cases again" in merged.notes
    partial = run_of(case("t::b"))  # a rerun of only some cases leaves the interruption standing
    assert merge.merge([("gate", stopped), ("partial", partial)]).status == "interrupted"


def test_different_installs_are_refused_unless_meant():
    old, new = run_of(case("t::a"), dsl="4.7.1"), run_of(case("t::a", "failed"))
    with pytest.raises(ValueError, match=r"^the runs are of different installs \(dsl 4.7.1, torch 2.11.0\+cu130 in old; "
                                         r"dsl 4.8.1, torch 2.11.0\+cu130 in new\); pass --mixed-installs"):
        merge.merge([("old", old), ("new", new)])
    merged = merge.merge([("old", old), ("new", new)], mixed_installs=True)
    assert len(merged.cases) == 2
    section = summary.render(merged).split("## Outcomes per install\n\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert section[2:] == ["| dsl 4.7.1, torch 2.11.0+cu130 | 1 | 0 | 0 | 0 | 0 | 0 |",
                           "| dsl 4.8.1, torch 2.11.0+cu130 | 0 | 1 | 0 | 0 | 0 | 0 |"]


def test_the_extension_compiler_lane_is_another_install():
    """Runs of the two compiler lanes (CUTE_DSL_USE_EXTENSION_COMPILER) merge only as different
    installs, side by side: a case that passes in one lane and fails in the other shows as such."""
    legacy, ext = run_of(case("t::a"), compiler="legacy"), run_of(case("t::a", "failed"), compiler="extension")
    with pytest.raises(ValueError, match=r"dsl 4.8.1, torch 2.11.0\+cu130, extension compiler in ext"):
        merge.merge([("legacy", legacy), ("ext", ext)])
    merged = merge.merge([("legacy", legacy), ("ext", ext)], mixed_installs=True)
    section = summary.render(merged).split("## Outcomes per install\n\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert section[2:] == ["| dsl 4.8.1, torch 2.11.0+cu130 | 1 | 0 | 0 | 0 | 0 | 0 |",
                           "| dsl 4.8.1, torch 2.11.0+cu130, extension compiler | 0 | 1 | 0 | 0 | 0 | 0 |"]
    assert len(merge.merge([("old", run_of(case("t::a"))), ("legacy", legacy)]).cases) == 1  # a record without the field


def test_the_cli_writes_the_three_reports(tmp_path, capsys):
    h100, h200 = gpu(0), gpu(1, "NVIDIA H200")
    for name, run in (("a", run_of(case("t::x", on=h100), case("t::s", "skipped"), gpus=[h100])),
                      ("b", run_of(case("t::x", "failed", on=h200), gpus=[h200], gpu="NVIDIA H200", exit_status=1))):
        (tmp_path / name).mkdir()
        (tmp_path / name / "results.json").write_text(json.dumps(run.to_json()))
    status = cli.main(["merge", str(tmp_path / "a"), str(tmp_path / "b"), "--out", str(tmp_path / "merged")])
    assert status == 1  # the merged run has a failure
    assert capsys.readouterr().out.startswith("FAILED: 1 of 3 cases need a human")
    written = json.loads((tmp_path / "merged" / "results.json").read_text())
    assert written["counts"] == {"passed": 1, "failed": 1, "skipped": 1}
    suite = ElementTree.parse(tmp_path / "merged" / "junit.xml").getroot().find("testsuite")
    assert (suite.get("tests"), suite.get("failures"), suite.get("skipped")) == ("3", "1", "1")
    names = [t.get("name") for t in suite.iter("testcase")]
    assert names == ["x [NVIDIA H100 80GB HBM3, dsl 4.8.1, torch 2.11.0+cu130]", "s",
                     "x [NVIDIA H200, dsl 4.8.1, torch 2.11.0+cu130]"]
    assert "## Merged from" in (tmp_path / "merged" / "summary.md").read_text()


def test_the_cli_refuses_mixed_installs_in_one_line(tmp_path, capsys):
    for name, dsl in (("a", "4.7.1"), ("b", "4.8.1")):
        (tmp_path / f"{name}.json").write_text(json.dumps(run_of(case("t::a"), dsl=dsl).to_json()))
    assert cli.main(["merge", str(tmp_path / "a.json"), str(tmp_path / "b.json"), "--out", str(tmp_path / "m")]) == 4
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith("reports merge: the runs are of different installs (")
    assert not (tmp_path / "m").exists()


@pytest.mark.parametrize(
    ("existing", "refusal"),
    [
        pytest.param({"results.json": json.dumps(run_of(*(case(f"t::{n}") for n in range(45))).to_json())},
                     "holds the report of an earlier run (started 2026-11-24T03:00:00+00:00); choose a new folder, or "
                     "remove that one first", id="a-report"),
        pytest.param({"summary.md": "# my notes\n"},
                     "holds files that are not a run's report (summary.md), never overwritten; choose an empty or new folder",
                     id="other-files"),
    ],
)
def test_the_cli_never_writes_over_a_report_or_other_files(tmp_path, capsys, existing, refusal):
    """``--out`` an existing report replaced a 5,658-case report by a 45-case merge once."""
    (tmp_path / "a.json").write_text(json.dumps(run_of(case("t::a")).to_json()))
    out = tmp_path / "out"
    out.mkdir()
    for name, text in existing.items():
        (out / name).write_text(text)
    assert cli.main(["merge", str(tmp_path / "a.json"), "--out", str(out)]) == 4
    (line,) = capsys.readouterr().err.splitlines()
    assert line == f"reports merge: --out {out}: {refusal}"
    assert {p.name: p.read_text() for p in out.iterdir()} == existing


# the per-GPU view of one run

def test_each_gpus_row_says_what_its_bandwidth_was_judged_by_and_a_board_without_runs_is_named_with_what_to_do():
    gpus = [dataclasses.replace(gpu(i), serial=f"165492200{i}", vbios="96.00.99", power_limit_w=700.0) for i in range(2)]
    own, travelling = (case(f"t::c{i}[-gpu{i}]", on=gpus[i], ceiling=3010.0) for i in range(2))
    own.bandwidth = dataclasses.replace(own.bandwidth, basis="board", verdict="same", baseline_runs=3)
    travelling.bandwidth = dataclasses.replace(travelling.bandwidth, basis="traveling", verdict="same",
                                               yardstick="torch_add-fp16-16384x8192", yardstick_gbps=3013.0,
                                               baseline_runs=5)
    text = summary.render(run_of(own, travelling, gpus=gpus))
    table = text.split("## GPUs\n\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert table[2].endswith("| 1654922000 (VBIOS 96.00.99, 700 W) | 2619 | 1 | 1 | 0 | 0 | 0 | 0 | 0 | 3010 "
                             "| its board's own runs (3) | 1 / 0 / 0 / 0 | ok |")
    assert table[3].endswith("| 3010 | traveling verdict (no runs of its own) | 1 / 0 / 0 / 0 | ok |")
    assert ("**gpu 1 (board 1654922001): no baseline runs of its own board, so never judged on another board's "
            "figures.**") in text
    assert "python3 -m pytest suites/bench -m bench --require-gpu --bandwidth-save --same-start` three times on it" in text
    assert "| `torch_add-fp16-16384x8192` on this GPU |" in text


def test_a_traveling_case_left_unjudged_says_why():
    """A yardstick the run did not select (``-k``) or no baseline run measured: ``new``, and why."""
    on = gpu(0)
    unmeasured, unsaved = (case(f"t::c{i}", on=on, ceiling=3010.0) for i in range(2))
    unmeasured.bandwidth = dataclasses.replace(unmeasured.bandwidth, basis="traveling", verdict="new",
                                               yardstick="torch_add-fp16-16384x8192")
    unsaved.bandwidth = dataclasses.replace(unsaved.bandwidth, basis="traveling", verdict="new",
                                            yardstick="torch_add-fp16-16384x8192", yardstick_gbps=3000.0)
    text = summary.render(run_of(unmeasured, unsaved, gpus=[on]))
    assert "| new | not judged: `torch_add-fp16-16384x8192` was not measured in this run (select it too) |" in text
    assert "| new | not judged: no baseline run measured it beside `torch_add-fp16-16384x8192` |" in text


def test_failures_on_one_gpu_of_several_point_at_that_gpu():
    gpus = [gpu(i) for i in range(4)]
    cases = [case(f"t::c{i}", on=gpus[i % 4]) for i in range(12)] + [case("t::bad1", "failed", on=gpus[2]),
                                                                    case("t::bad2", "failed", on=gpus[2])]
    text = summary.render(run_of(*cases, gpus=gpus, exit_status=1))
    table = text.split("## GPUs\n\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert table[4] == ("| 2 | NVIDIA H100 80GB HBM3 | `GPU-runner-a-2` | ? (VBIOS ?, – W) | 2619 | 5 | 3 | 2 | 0 | 0 | 0 | 0 | – "
                        "| – | – | ok |")
    assert "**Every gpu/bench failure (2) ran on gpu 2**; the other 3 GPUs ran their cases cleanly" in text
    assert "GPUs: 4 x NVIDIA H100 80GB HBM3" in summary.verdict(run_of(*cases, gpus=gpus, exit_status=1))


def test_failures_spread_over_gpus_are_not_blamed_on_one():
    gpus = [gpu(0), gpu(1)]
    text = summary.render(run_of(case("t::a", "failed", on=gpus[0]), case("t::b", "failed", on=gpus[1]), gpus=gpus))
    assert "Every gpu/bench failure" not in text


def test_gpus_of_one_model_show_their_ceiling_spread_and_bench_rows_their_gpu():
    gpus = [gpu(0), gpu(1)]
    text = summary.render(run_of(case("b::x", on=gpus[0], ceiling=3000.0), case("b::y", on=gpus[1], ceiling=2940.0),
                                 gpus=gpus))
    assert "Copy ceiling across the 2 NVIDIA H100 80GB HBM3 GPUs: 2940-3000 GB/s (spread 2.0%)." in text
    rows = text.split("## Bandwidth\n\n", 1)[1].split("\n\n", 1)[1].splitlines()
    assert rows[0].startswith("| gpu | stage |") and rows[2].startswith("| 0 | tv |") and rows[3].startswith("| 1 | tv |")


def test_gpus_of_two_runners_with_one_host_name_are_told_apart():
    """Runners often share a host name (containers): a merged report names colliding indices by UUID."""
    h100, h200 = gpu(0), GpuRecord(0, "GPU-other-0", "NVIDIA H200", 143771, 3201, "runner-a")
    merged = merge.merge([("a", run_of(case("t::x", on=h100), gpus=[h100])),
                          ("b", run_of(case("t::x", on=h200), gpus=[h200], gpu="NVIDIA H200"))])
    assert [summary.gpu_label(merged, g.uuid) for g in merged.gpus] == ["0 (GPU-runner-a)", "0 (GPU-other-0)"]


def test_a_plot_that_fails_costs_neither_the_record_nor_the_summary(tmp_path, monkeypatch):
    """The report folder (a run's and a merge's) keeps results.json and summary.md when a plot raises."""
    from reports import plots, report_files

    def broken(run, folder):
        raise RuntimeError("no backend")

    monkeypatch.setattr(plots, "write", broken)
    written = report_files.write(run_of(case("t::x")), tmp_path, None)
    assert written == [tmp_path / "results.json", tmp_path / "summary.md"]
    assert json.loads((tmp_path / "results.json").read_text())["notes"] == ["plots not written: RuntimeError: no backend"]
    assert "plots not written: RuntimeError: no backend" in (tmp_path / "summary.md").read_text()
