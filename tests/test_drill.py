"""``python -m reports drill``: a planted-slowdown drill proves the gate only where every planted
bandwidth-size case was called slower; the launch-bound size is reported, not judged."""

import dataclasses
import json
import re

import pytest

from reports import __main__ as cli
from reports import drill
from reports.model import BandwidthRecord, CaseResult, Fingerprint, GpuRecord, RunResult

pytestmark = pytest.mark.harness


def _case(name: str, size: str, gbps: float, verdict: str, planted: float | None = 0.01, delta: float | None = -1.0):
    record = BandwidthRecord(
        case=name, stage=name.split("-")[0], dtype="fp16", size=size, shape=[16384, 8192], bytes=3 << 28, gbps=gbps,
        median_s=1e-4, spread_s=1e-7, samples=74, rel_noise=0.002, ceiling_gbps=3000.0, pct_ceiling=gbps / 30,
        planted_slowdown=planted, verdict=verdict, delta_pct=delta, threshold_pct=0.5 if size == "bandwidth" else 2.0,
    )
    return CaseResult(f"suites/bench/test_bandwidth.py::test_stage_bandwidth[{name}]",
                      "failed" if verdict == "slower" else "passed", "bench", 1.0, bandwidth=record)


def _run(*cases: CaseResult) -> RunResult:
    return RunResult(fingerprint=Fingerprint(), arch="sm_90a", started="", cases=list(cases))


def test_every_planted_bandwidth_case_slower_proves_the_gate_and_says_what_was_measured():
    planted = _run(_case("tv-16384x8192", "bandwidth", 2960.0, "slower", 0.0117, -1.2),
                   _case("naive-16384x8192", "bandwidth", 2970.0, "slower", 0.01, -0.9),
                   _case("tv-256x4096", "launch", 1400.0, "same", 0.25, -1.5),
                   CaseResult("suites/bench/test_bandwidth.py::test_stage_bandwidth[mul_relu-16384x8192]", "xfailed", "bench", 0.1))
    aa = _run(_case("tv-16384x8192", "bandwidth", 3000.0, "same", None, 0.1),
              _case("naive-16384x8192", "bandwidth", 3000.0, "same", None, 0.0))
    result = drill.judge(planted, aa)
    assert result.proved
    assert result.lines == [
        "bandwidth: 2 of 2 planted cases slower; planted 1.00% .. 1.17%, -1.20% .. -0.90% against the baseline "
        "(thresholds 0.50%); measured 1.01% .. 1.35% slower than the A/A run (median 1.18%)",
        "launch: 0 of 1 planted cases slower (not judged); planted 25.00%, -1.50% against the baseline (thresholds 2.00%)",
        "not measured: mul_relu-16384x8192 (xfailed)",
        "drill PROVED: the gate called every planted bandwidth-size case slower",
    ]


def test_a_missed_case_is_named_and_the_drill_not_proved():
    result = drill.judge(_run(_case("tv-16384x8192", "bandwidth", 2990.0, "slower"),
                              _case("naive-16384x8192", "bandwidth", 2995.0, "same", delta=-0.4)))
    assert not result.proved
    assert "  missed: naive-16384x8192 (same, -0.40%)" in result.lines
    assert result.lines[-1] == "drill NOT PROVED: the gate missed a planted bandwidth-size case (above)"


def test_a_run_without_planted_cases_is_no_drill():
    result = drill.judge(_run(_case("tv-16384x8192", "bandwidth", 3000.0, "same", None, 0.1)))
    assert not result.proved
    assert result.lines == ["drill NOT PROVED: no case of this run was planted: not a --bandwidth-plant-slowdown run, or "
                            "its bench cases never measured (bench cases: 1 passed)"]


def test_a_run_that_is_no_drill_is_one_short_line_however_many_bench_cases_it_skipped():
    """A run without a GPU skips its 151 bench cases: their ids once made a 7.5 KB line."""
    skipped = [CaseResult(f"suites/bench/test_bandwidth.py::test_stage_bandwidth[tv-fp16-{n}x8192]", "skipped", "bench",
                          0.0, reason="no CUDA device") for n in range(151)]
    (line,) = drill.judge(_run(*skipped)).lines
    assert line.endswith("(bench cases: 151 skipped)") and len(line) < 200


def test_unmeasured_cases_of_a_drill_are_named_up_to_ten():
    unmeasured = [CaseResult(f"suites/bench/test_bandwidth.py::test_stage_bandwidth[tv-{n}]", "skipped", "bench", 0.0)
                  for n in range(12)]
    result = drill.judge(_run(_case("tv-16384x8192", "bandwidth", 2960.0, "slower"), *unmeasured))
    assert result.proved
    assert result.lines[-2] == "not measured: " + ", ".join(f"tv-{n} (skipped)" for n in range(10)) + " and 2 more"


def test_the_command_exits_0_on_a_proved_drill_1_on_a_miss_4_on_a_file_that_is_no_run_or_no_aa_run(tmp_path, capsys):
    proved = tmp_path / "proved.json"
    proved.write_text(json.dumps(_run(_case("tv-16384x8192", "bandwidth", 2960.0, "slower")).to_json()))
    missed = tmp_path / "missed.json"
    missed.write_text(json.dumps(_run(_case("tv-16384x8192", "bandwidth", 2990.0, "same", delta=-0.3)).to_json()))
    aa = tmp_path / "aa.json"
    aa.write_text(json.dumps(_run(_case("tv-16384x8192", "bandwidth", 3000.0, "same", None)).to_json()))
    assert cli.main(["drill", str(proved), "--against", str(aa)]) == 0
    assert cli.main(["drill", str(missed)]) == 1
    assert cli.main(["drill", str(missed), "--against", str(proved)]) == 4  # a drill is no A/A run
    capsys.readouterr()
    assert cli.main(["drill", str(tmp_path / "nothing.json")]) == 4
    assert capsys.readouterr().err.startswith(f"reports drill: {tmp_path / 'nothing.json'}: no such file")


def test_a_bench_case_that_failed_without_a_verdict_leaves_the_drill_unproved():
    """A case that ran out of memory or faulted was never judged: the drill proves nothing of it."""
    result = drill.judge(_run(_case("tv-16384x8192", "bandwidth", 2960.0, "slower"),
                              CaseResult("suites/bench/test_bandwidth.py::test_stage_bandwidth[naive-16384x8192]", "failed",
                                         "bench", 0.1, message="torch.OutOfMemoryError: CUDA out of memory")))
    assert not result.proved
    assert result.lines[-2:] == ["not measured: naive-16384x8192 (failed)",
                                 "drill NOT PROVED: a bench case failed without a bandwidth verdict (above): the gate was "
                                 "never asked of it"]


@pytest.mark.parametrize(("against", "refusal"), [
    pytest.param(_run(_case("tv-16384x8192", "bandwidth", 2990.0, "slower")), "--against: a drill run", id="a-drill"),
    pytest.param(RunResult(fingerprint=Fingerprint(driver="590.1"), arch="sm_90a", started="",
                           cases=[_case("tv-16384x8192", "bandwidth", 3000.0, "same", None)]),
                 "--against: a run of another install: driver 590.1 (drill: None)", id="another-install"),
    pytest.param(_run(dataclasses.replace(_case("tv-16384x8192", "bandwidth", 3000.0, "same", None), gpu="GPU-other")),
                 "--against: measured on other GPUs than the drill's", id="another-gpu"),
])
def test_an_against_run_that_is_no_aa_run_of_the_drills_install_and_gpu_is_refused(against, refusal):
    with pytest.raises(ValueError, match=f"^{re.escape(refusal)}"):
        drill.judge(_run(_case("tv-16384x8192", "bandwidth", 2960.0, "slower")), against)


def _on(gpu: str, case: CaseResult, basis: str = "board") -> CaseResult:
    return dataclasses.replace(case, gpu=gpu, nodeid=case.nodeid[:-1] + f"-gpu{gpu[-1]}]",
                               bandwidth=dataclasses.replace(case.bandwidth, basis=basis))


def test_a_run_of_several_gpus_is_proved_only_where_every_gpu_called_every_planted_case_slower():
    """Each GPU against its own A/A figures; one GPU's miss leaves the drill unproved, and names it."""
    gpus = [GpuRecord(i, f"GPU-{i}", "NVIDIA H100 80GB HBM3", 81559, 2619, "box") for i in range(2)]
    tv = _case("tv-16384x8192", "bandwidth", 2960.0, "slower", 0.0117, -1.2)
    drill_run = RunResult(fingerprint=Fingerprint(), arch="sm_90a", started="", gpus=gpus,
                          cases=[_on("GPU-0", tv), _on("GPU-1", dataclasses.replace(tv, bandwidth=dataclasses.replace(
                              tv.bandwidth, gbps=2900.0)), "traveling")])
    aa_run = RunResult(fingerprint=Fingerprint(), arch="sm_90a", started="", gpus=gpus,
                       cases=[_on("GPU-0", _case("tv-16384x8192", "bandwidth", 3000.0, "same", None)),
                              _on("GPU-1", _case("tv-16384x8192", "bandwidth", 2930.0, "same", None))])
    result = drill.judge(drill_run, aa_run)
    assert result.proved
    assert result.lines[0] == "gpu 0 (judged by: board):"
    assert result.lines[1].endswith("measured 1.35% slower than the A/A run (median 1.35%)")
    assert result.lines[2] == "gpu 1 (judged by: traveling):"
    assert result.lines[3].endswith("measured 1.03% slower than the A/A run (median 1.03%)")
    assert result.lines[-1] == "drill PROVED: the gate called every planted bandwidth-size case slower on each of 2 GPUs"
    missed = dataclasses.replace(drill_run, cases=[drill_run.cases[0], _on("GPU-1", _case("tv-16384x8192", "bandwidth", 2990.0,
                                                                                           "same", delta=-0.3))])
    result = drill.judge(missed)
    assert not result.proved
    assert "    missed: tv-16384x8192 (same, -0.30%)" in result.lines
    assert result.lines[-1] == "drill NOT PROVED: the gate missed a planted bandwidth-size case on gpu 1 (above)"


def test_drill_on_a_run_that_is_no_drill_is_bad_input(tmp_path, capsys):
    """A run that planted nothing (no --bandwidth-plant-slowdown) given to ``drill``: exit 4, one line
    on stderr, as every bad input of ``python -m reports`` (it was 1, "needs a human")."""
    plain = tmp_path / "plain.json"
    plain.write_text(json.dumps(_run(_case("tv-16384x8192", "bandwidth", 3000.0, "same", None, 0.1)).to_json()))
    assert cli.main(["drill", str(plain)]) == 4
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (f"reports drill: {plain}: no case of this run was planted: not a --bandwidth-plant-slowdown run, "
                            "or its bench cases never measured (bench cases: 1 passed)\n")
