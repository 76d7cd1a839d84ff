"""The bench tier's CPU-side logic: the bandwidth verdict, baseline files, the plugin's options,
and the one private pytest-benchmark call the tier relies on."""

import json
import math
import statistics
from dataclasses import replace
from pathlib import Path

import pytest

from fixtures.dsl.environment import fingerprint
from fixtures.plugin import bench_plugin
from reports import baseline, gate
from reports.model import BandwidthRecord, Board, Fingerprint

pytestmark = pytest.mark.harness

ROOT = Path(__file__).resolve().parents[1]
H100 = "NVIDIA H100 80GB HBM3"
FOREIGN_GPU = "NVIDIA A100-SXM4-40GB"


def record(gbps: float, median_s: float = 1e-3, spread_s: float = 0.0, samples: int = 100, case: str = "naive-bf16") -> dict:
    """A case's bandwidth record with the fields the gate and a baseline need."""
    return {"case": case, "gbps": gbps, "median_s": median_s, "spread_s": spread_s, "samples": samples}


def measured(gbps: float, **fields) -> BandwidthRecord:
    """A bench case's record as the bench tier makes it, for the gate to judge."""
    return BandwidthRecord(**{**record(gbps), "stage": "naive", "dtype": "bf16", "size": "bandwidth", "shape": [8, 8],
                              "bytes": 384, "rel_noise": 0.0, "ceiling_gbps": 200.0, "pct_ceiling": gbps / 2, **fields})


def install(gpu: str = H100, **changes) -> Fingerprint:
    """A fingerprint as the committed baselines record it (written before dsl_loader, compiler and tvm_ffi)."""
    fp = {
        "dsl": "4.8.1", "dsl_libs": "cu13", "dsl_cuda": "13.4", "torch": "2.11.0+cu130", "torch_cuda": "13.0",
        "driver": "580.159.04", "driver_cuda": "13.0", "gpu": gpu, "compute_capability": "9.0", "python": "3.12.3",
    }
    return Fingerprint(**{**fp, **changes})


def document(fp: Fingerprint, *records: dict, runs: bool = True) -> dict:
    """A pytest-benchmark-like JSON document as ``--bandwidth-save`` writes it: one run of this
    harness's method (``runs=False``: as saved before runs were kept)."""
    doc = {
        "machine_info": {baseline.FINGERPRINT_KEY: fp.to_json()},
        "benchmarks": [{"name": f"test_stage_bandwidth[{r['case']}]", "extra_info": r} for r in records],
    }
    return {**doc, baseline.RUNS_KEY: [baseline.run_of(doc, "2026-01-01", "start-0").to_json()]} if runs else doc


def write(path: Path, data) -> Path:
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


# --- reports/gate.py ---------------------------------------------------------------------


def test_parse_override_splits_glob_and_percent():
    assert gate.parse_override("naive-*=5") == ("naive-*", 5.0)


@pytest.mark.parametrize("text", ["x", "=5", "a=0", "a=-1", "a=abc", "a=nan", "a=inf", "a=100"])
def test_bad_override_is_a_one_line_value_error(text):
    """A mistyped threshold must stop the run saying what was given and what is expected."""
    with pytest.raises(ValueError) as exc:
        gate.parse_override(text)
    message = str(exc.value)
    assert message.startswith(f"--bandwidth-threshold {text!r}: expected CASE_GLOB=PERCENT")
    assert "\n" not in message


def test_last_matching_override_wins():
    """Later options refine earlier ones; a case no glob matches keeps the derived threshold."""
    overrides = [("naive-*", 5.0), ("naive-bf16-*", 8.0)]
    assert gate.override_for("naive-bf16-bandwidth", overrides) == 8.0
    assert gate.override_for("naive-fp16-bandwidth", overrides) == 5.0
    assert gate.override_for("naive-bf16-bandwidth", overrides[::-1]) == 5.0
    assert gate.override_for("tv-bf16-bandwidth", overrides) is None


def docstring_median_error(r: dict) -> float:
    """The documented formula: 1.2533 x sigma / sqrt(samples), sigma = IQR / 1.349 (relative)."""
    return 1.2533 * (r["spread_s"] / 1.349 / r["median_s"]) / math.sqrt(r["samples"])


def reference(*records: dict) -> baseline.CaseReference:
    """A case's reference over runs, one record per machine start."""
    return baseline.CaseReference("naive-bf16", tuple(baseline.Figures.of(r) for r in records))


def quiet_reference(*rates: float) -> baseline.CaseReference:
    return reference(*(record(rate) for rate in rates))


def test_median_error_follows_the_documented_formula():
    r = record(100.0, median_s=2e-3, spread_s=1e-4, samples=25)
    assert baseline.Figures.of(r).median_error == pytest.approx(docstring_median_error(r))
    assert baseline.Figures.of({**r, "samples": 100}).median_error == pytest.approx(docstring_median_error(r) / 2)


def test_the_reference_is_the_median_of_the_runs_and_knows_their_spread():
    """One outlying start moves the reference little; the spread and the count say how far to trust it."""
    ref = quiet_reference(100.0, 97.5, 100.4)
    assert ref.gbps == 100.0 and ref.count == 3
    assert ref.spread_pct == pytest.approx(2.9)
    assert ref.between_sigma == pytest.approx(statistics.stdev([100.0, 97.5, 100.4]) / 100.0)
    assert quiet_reference(100.0).between_sigma == 0.0


@pytest.mark.parametrize("size", ["bandwidth", "launch"])
def test_quiet_runs_from_enough_starts_get_their_size_familys_floor(size):
    """Starts that agree closely and quiet medians: the floor, which in-run noise cannot see below."""
    quiet = quiet_reference(100.0, 100.02, 99.98)
    assert gate.threshold_pct(baseline.Figures.of(record(100.0)), quiet, size) == gate.FLOOR_PCT[size]
    assert gate.FLOOR_PCT["bandwidth"] < 1.0 < gate.FLOOR_PCT["launch"], "a 1% drop is called where bandwidth is the bound"


def test_a_baseline_from_too_few_starts_gets_the_wider_floor():
    now = baseline.Figures.of(record(100.0))
    for rates in ((100.0,), (100.0, 100.1)):
        assert gate.threshold_pct(now, quiet_reference(*rates), "bandwidth") == gate.FEW_RUNS_FLOOR_PCT
    assert gate.FEW_RUNS_FLOOR_PCT > max(gate.FLOOR_PCT.values())


def test_spread_between_starts_widens_the_threshold():
    """A case that moves between machine starts is judged by that movement, not by in-run noise."""
    ref = quiet_reference(100.0, 99.0, 101.0, 100.5)
    expected = gate.NOISE_SIGMAS * 100 * ref.between_sigma
    assert expected > gate.FLOOR_PCT["launch"]
    assert gate.threshold_pct(baseline.Figures.of(record(100.0)), ref, "launch") == pytest.approx(expected)


def test_noise_and_spread_add_in_quadrature():
    noisy = record(100.0, spread_s=1e-4, samples=25)
    ref = reference(noisy, {**noisy, "gbps": 99.0}, {**noisy, "gbps": 101.0})
    err = docstring_median_error(noisy)
    expected = gate.NOISE_SIGMAS * 100 * math.sqrt(ref.between_sigma**2 + 2 * err**2)
    assert gate.threshold_pct(baseline.Figures.of(noisy), ref, "bandwidth") == pytest.approx(expected)


def test_a_case_without_baseline_is_new():
    judged = gate.judge(measured(100.0), None)
    assert (judged.verdict, judged.baseline_gbps, judged.delta_pct) == ("new", None, None)


@pytest.mark.parametrize("size", ["bandwidth", "launch"])
@pytest.mark.parametrize(("change", "verdict"), [(-0.9, "same"), (-1.1, "slower"), (0.9, "same"), (1.1, "faster")])
def test_verdict_around_the_threshold(size, change, verdict):
    """Quiet runs from three starts are judged against their size's floor: a change within it is the same bandwidth."""
    floor = gate.FLOOR_PCT[size]
    judged = gate.judge(measured(100.0 + change * floor, size=size), quiet_reference(100.0, 100.0, 100.0))
    assert judged.verdict == verdict
    assert (judged.baseline_gbps, judged.baseline_runs, judged.baseline_spread_pct) == (100.0, 3, 0.0)
    assert judged.delta_pct == pytest.approx(change * floor)
    assert judged.threshold_pct == floor


def test_a_planted_1pct_slowdown_is_slower_at_the_bandwidth_size_against_starts_that_agree():
    """The gate's promise where bandwidth is the bound: starts within 0.1% of each other, a 1% drop called."""
    agree = quiet_reference(100.0, 100.05, 99.95)
    assert gate.judge(measured(99.0), agree).verdict == "slower"
    assert gate.judge(measured(99.0, size="launch"), agree).verdict == "same"


def test_override_replaces_the_derived_threshold():
    """A per-case override can both widen and narrow the band, spread notwithstanding."""
    wide = gate.judge(measured(95.0), quiet_reference(100.0), override=6.0)
    assert (wide.verdict, wide.threshold_pct) == ("same", 6.0)
    narrow = gate.judge(measured(97.0), quiet_reference(100.0, 95.0, 105.0), override=1.0)
    assert (narrow.verdict, narrow.threshold_pct) == ("slower", 1.0)


class Measurements:
    """``remeasured``'s "measure more": measurement n's figure over every placement so far is ``rates[n - 1]``."""

    def __init__(self, *rates: float) -> None:
        self.rates, self.asked = rates, []

    def __call__(self, measurement: int) -> BandwidthRecord:
        self.asked.append(measurement)
        return measured(self.rates[measurement - 1], measurements=measurement)


def judge_against(*runs: float):
    """The board's own judge over quiet starts at ``runs`` GB/s (a 0.5% floor at the bandwidth size)."""
    return lambda record: gate.judge(record, quiet_reference(*runs))


@pytest.mark.parametrize(("rate", "verdict"), [(100.0, "same"), (102.0, "faster")])
def test_a_first_verdict_other_than_slower_stands_without_measuring_again(rate, verdict):
    measure = Measurements(rate)
    judged = gate.remeasured(measure, judge_against(100.0, 100.0, 100.0))
    assert (judged.verdict, judged.measurements, measure.asked) == (verdict, 1, [1])
    assert gate.slower_failure(judged, 8) is None


def test_a_case_without_a_baseline_is_new_after_one_measurement():
    measure = Measurements(50.0)
    judged = gate.remeasured(measure, lambda record: gate.judge(record, None))
    assert (judged.verdict, measure.asked) == ("new", [1])


def test_a_first_slower_is_measured_again_and_judged_on_every_placement_so_far():
    """One placement set's luck: 2% slow at first, the same over both measurements' placements."""
    measure = Measurements(98.0, 99.8)
    judged = gate.remeasured(measure, judge_against(100.0, 100.0, 100.0))
    assert (judged.verdict, judged.measurements, judged.gbps, measure.asked) == ("same", 2, 99.8, [1, 2])
    assert gate.slower_failure(judged, 16) is None


def test_slower_in_every_measurement_fails_after_the_last():
    measure = Measurements(*[98.0] * gate.MEASUREMENTS)
    judged = gate.remeasured(measure, judge_against(100.0, 100.0, 100.0))
    assert (judged.verdict, judged.measurements) == ("slower", gate.MEASUREMENTS)
    assert measure.asked == list(range(1, gate.MEASUREMENTS + 1))
    assert gate.slower_failure(judged, 16) == (
        "naive-bf16: 98.0 GB/s is 2.00% below its board's baseline of 100.0 GB/s (threshold 0.50%, "
        f"over 16 placements in {gate.MEASUREMENTS} measurements)")


def test_a_traveling_verdict_fails_naming_its_yardstick_and_a_drill_its_planted_slowdown():
    yardstick = measured(200.0, case="torch_add-bf16-8x8", stage="torch_add")
    ratio = baseline.RatioReference("naive-bf16", "torch_add-bf16-8x8", (0.5, 0.5, 0.5), 0.0)
    measure = Measurements(95.0, 96.0)
    judged = gate.remeasured(lambda n: replace(measure(n), planted_slowdown=0.05),
                             lambda record: gate.judge_traveling(record, ratio, yardstick))
    assert (judged.verdict, measure.asked) == ("slower", [1, 2])
    assert gate.slower_failure(judged, 6) == (
        "naive-bf16: 96.0 GB/s is 4.00% below the 100.0 GB/s its yardstick torch_add-bf16-8x8 (200.0 GB/s on this GPU, "
        "at most what its own reference predicts) "
        "predicts (traveling verdict) (threshold 2.00%, over 6 placements in 2 measurements, 5.00% planted)")


# --- reports/baseline.py -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        pytest.param(None, "cannot read it (No such file or directory)", id="missing"),
        pytest.param("{not json", "not JSON (", id="not-json"),
        pytest.param({"machine_info": {}, "benchmarks": []}, f"no machine_info.{baseline.FINGERPRINT_KEY}", id="no-fingerprint"),
        pytest.param(
            {**document(install()), "benchmarks": [{"extra_info": {"case": "a", "gbps": 1.0, "median_s": 1e-3}}]},
            "benchmark 0 lacks extra_info spread_s, samples",
            id="lacks-extra-info",
        ),
        # wrong value types would pass the start and break (or blind) the gate mid-run
        pytest.param(document(install(), {**record(100.0), "gbps": "fast"}), "benchmark 0 extra_info.gbps is 'fast', expected a positive number",
                     id="gbps-not-a-number"),
        pytest.param(document(install(), {**record(100.0), "samples": 2.5}), "extra_info.samples is 2.5, expected a positive integer",
                     id="samples-not-an-int"),
        pytest.param(document(install(), {**record(100.0), "median_s": float("nan")}), "extra_info.median_s is nan", id="median-nan"),
        pytest.param({**document(install(), record(100.0)), baseline.RUNS_KEY: []}, f"{baseline.RUNS_KEY} is not a non-empty list",
                     id="runs-empty"),
        pytest.param({**document(install(), record(100.0)), baseline.RUNS_KEY: [{"cases": {"a": {"gbps": 1.0}}}]},
                     f"{baseline.RUNS_KEY}[0] case 'a' lacks median_s", id="run-case-incomplete"),
        pytest.param({**document(install(), record(100.0)), baseline.RUNS_KEY: [
                      {"cases": {"a": record(1.0)}, "board": {"serial": "1752624012317"}}]},
                     f"{baseline.RUNS_KEY}[0] board: board: missing uuid", id="board-without-uuid"),
        pytest.param({**document(install(), record(100.0)), baseline.RUNS_KEY: [{"cases": {"a": record(1.0)}, "board": "A"}]},
                     f"{baseline.RUNS_KEY}[0] board: board: expected a JSON object, got str", id="board-not-an-object"),
    ],
)
def test_load_refuses_in_one_line(tmp_path, content, reason):
    """A file that is not a baseline this harness saved stops the run with the reason, not a traceback."""
    path = tmp_path / "baseline.json"
    if content is not None:
        write(path, content)
    with pytest.raises(baseline.BaselineError) as exc:
        baseline.load(path)
    message = str(exc.value)
    assert message.startswith(f"baseline {path}: ")
    assert reason in message
    assert "\n" not in message


@pytest.mark.parametrize("path", sorted((ROOT / "reports" / "baselines").glob("*.json")), ids=lambda p: p.name)
def test_committed_baseline_loads_under_its_install_name(path):
    """``--bandwidth-baseline auto`` finds a committed baseline only by the name its fingerprint
    gives; one of runs measured by an older method says so instead of judging."""
    loaded = baseline.load(path)
    assert loaded.runs
    assert path.name == baseline.default_path(loaded.fingerprint).name
    if not loaded.current_runs:
        with pytest.raises(baseline.BaselineError, match="measured as fastest-placement"):
            baseline.check_current(loaded)


def test_runs_of_an_older_method_judge_nothing_and_the_next_save_drops_them(tmp_path):
    """Figures of the fastest placement are not the placements' trimmed mean: never compared."""
    fp = install()
    path = write(baseline.default_path(fp, tmp_path), document(fp, record(100.0), runs=False))
    chosen, note = baseline.select("auto", fp, tmp_path)
    assert chosen is None and "measured as fastest-placement" in note and "--bandwidth-save" in note
    with pytest.raises(baseline.BaselineError, match=r"^baseline .*: record this install's runs again with --bandwidth-save$"):
        baseline.select(str(path), fp, tmp_path)
    doc = document(fp, record(99.0), runs=False)
    merged = baseline.merge(doc, fp, baseline.load(path), saved_run(doc, "start-1"))
    assert [r["method"] for r in merged[baseline.RUNS_KEY]] == [baseline.METHOD]


def test_another_gpu_model_is_not_comparable(tmp_path):
    """Bandwidth differs by GPU model; a new driver on the same GPU is still comparable."""
    loaded = baseline.load(write(tmp_path / "h100.json", document(install(), record(100.0))))
    baseline.check_comparable(loaded, install(driver="590.1"))
    with pytest.raises(baseline.BaselineError) as exc:
        baseline.check_comparable(loaded, install(FOREIGN_GPU))
    message = str(exc.value)
    assert f"recorded on {H100}, this run is on {FOREIGN_GPU}" in message
    assert "\n" not in message


def test_select_none_compares_with_nothing(tmp_path):
    """``none`` ignores even a baseline that is there for this install."""
    fp = install()
    write(baseline.default_path(fp, tmp_path), document(fp, record(100.0)))
    assert baseline.select("none", fp, tmp_path) == (None, "no comparison (--bandwidth-baseline none)")


def test_select_auto_without_a_file_says_how_to_record_one(tmp_path):
    fp = install()
    chosen, note = baseline.select("auto", fp, tmp_path)
    assert chosen is None
    assert baseline.default_path(fp).name in note and "--bandwidth-save" in note


def test_select_auto_without_a_gpu_never_advises_a_save_it_would_refuse(tmp_path):
    chosen, note = baseline.select("auto", install(gpu="no GPU"), tmp_path)
    assert chosen is None
    assert "--bandwidth-save" not in note and note.endswith("none can be recorded without a GPU")


def test_select_auto_finds_this_installs_file(tmp_path):
    fp = install()
    path = write(baseline.default_path(fp, tmp_path), document(fp, record(100.0, case="tv-fp16")))
    chosen, note = baseline.select("auto", fp, tmp_path)
    assert chosen.path == path and set(chosen.references(chosen.current_runs)) == {"tv-fp16"}
    assert note == f"compared with {path}"


def test_select_explicit_path_loads_and_checks_it(tmp_path):
    """An explicit file may be another install's (older driver), but not another GPU's."""
    path = write(tmp_path / "older.json", document(install(driver="570.1"), record(90.0)))
    chosen, note = baseline.select(str(path), install(), tmp_path / "unused")
    assert chosen.references(chosen.current_runs)["naive-bf16"].gbps == 90.0
    assert note == f"compared with {path}"
    with pytest.raises(baseline.BaselineError, match="not comparable across GPU models"):
        baseline.select(str(path), install(FOREIGN_GPU), tmp_path / "unused")


def cases(doc: dict) -> list[tuple[str, float]]:
    return sorted((b["extra_info"]["case"], b["extra_info"]["gbps"]) for b in doc["benchmarks"])


def saved_run(doc: dict, boot_id: str, saved: str = "2026-01-01") -> baseline.SavedRun:
    return baseline.run_of(doc, saved, boot_id)


def test_merge_keeps_unmeasured_cases_and_adds_the_run(tmp_path):
    """A partial run refreshes the benchmarks it measured, keeps the rest, and joins the earlier runs."""
    fp = install()
    previous = baseline.load(write(tmp_path / "prev.json", document(fp, record(1.0, case="a"), record(2.0, case="b"))))
    this = {"machine_info": {"cpu": "x"}, "benchmarks": document(fp, record(20.0, case="b"), record(30.0, case="c"))["benchmarks"]}
    merged = baseline.merge(this, fp, previous, saved_run(this, "start-2"))
    assert cases(merged) == [("a", 1.0), ("b", 20.0), ("c", 30.0)]
    assert merged["machine_info"] == {"cpu": "x", baseline.FINGERPRINT_KEY: fp.to_json()}
    loaded = baseline.load(write(tmp_path / "merged.json", merged))
    refs = loaded.references(loaded.current_runs)
    assert {case: [f.gbps for f in ref.runs] for case, ref in refs.items()} == {"a": [1.0], "b": [2.0, 20.0], "c": [30.0]}


def test_three_starts_make_three_runs_and_a_second_save_from_one_start_replaces_its_run(tmp_path):
    fp = install()
    path = tmp_path / "b.json"
    previous = None
    for boot_id, rate in (("start-1", 100.0), ("start-2", 101.0), ("start-2", 99.0), ("start-3", 100.5)):
        doc = document(fp, record(rate))
        baseline.save(path, baseline.merge(doc, fp, previous, saved_run(doc, boot_id)))
        previous = baseline.load(path)
    assert [(r.boot_id, r.cases["naive-bf16"].gbps) for r in previous.runs] == [
        ("start-1", 100.0), ("start-2", 99.0), ("start-3", 100.5)]
    assert previous.references(previous.current_runs)["naive-bf16"].gbps == 100.0


def board(serial: str, **facts) -> Board:
    return Board(**{"uuid": f"GPU-{serial}", "serial": serial, "part_number": "692-2G520", "vbios": "96.00.99",
                    "memory_clock_mhz": 2619, "power_limit_w": 700.0, "cpu": "Xeon 8480", **facts})


def on_board(fp: Fingerprint, measured_on: Board, *records: dict) -> dict:
    """A bench process's document: the cases its GPU measured, naming its board."""
    doc = document(fp, *records, runs=False)
    doc["machine_info"][baseline.BOARD_KEY] = measured_on.to_json()
    return doc


def test_each_board_of_a_run_saves_a_run_of_its_own_into_its_models_file(tmp_path):
    """Every GPU measures every case; each GPU model's file gets one run per board."""
    h100, h200 = install(), install(gpu="NVIDIA H200")
    documents = [on_board(h100, board("A"), record(1.0, case="a")), on_board(h200, board("C"), record(2.0, case="a")),
                 on_board(h100, board("B"), record(3.0, case="a"))]
    grouped = baseline.by_install(documents)
    assert [(fp.gpu, len(docs)) for fp, docs in grouped] == [(H100, 2), ("NVIDIA H200", 1)]
    path = tmp_path / "h100.json"
    baseline.save(path, baseline.merge_runs(grouped[0][1], h100, None, path, "start-1"))
    saved = baseline.load(path)
    assert [(r.board.id, r.cases["a"].gbps) for r in saved.runs] == [("A", 1.0), ("B", 3.0)]
    assert saved.boards() == ["A", "B"]


def test_a_board_is_judged_by_its_own_runs_alone():
    """Another board's figures (however many) never judge a board; another VBIOS, power limit or
    CPU makes it another board, and says so; boards declared equivalent judge each other."""
    fp = install()
    runs = [baseline.run_of(on_board(fp, measured_on, record(rate)), "", f"start-{i}")
            for i, (measured_on, rate) in enumerate([(board("A"), 100.0), (board("A"), 100.2), (board("B"), 97.0)])]
    loaded = baseline.Baseline(Path("b.json"), fp, {}, runs)
    assert [r.cases["naive-bf16"].gbps for r in loaded.runs_of(board("A"))] == [100.0, 100.2]
    assert loaded.runs_of(board("Z")) == []
    assert loaded.runs_of(board("A", vbios="96.00.AA")) == []
    assert loaded.changed(board("A", vbios="96.00.AA")) == ["vbios 96.00.99 (now 96.00.AA)"]
    assert len(loaded.runs_of(board("Z"), (frozenset({"Z", "B"}),))) == 1
    assert loaded.runs_of(None) == []


def test_runs_before_boards_were_named_judge_no_board(tmp_path):
    fp = install()
    legacy = baseline.load(write(tmp_path / "legacy.json", document(fp, record(100.0))))
    assert legacy.runs[0].board is None and legacy.runs_of(board("A")) == []


def test_a_second_save_of_one_board_and_start_replaces_its_run_unless_same_start(tmp_path):
    """A runner that is not restarted between its baseline runs keeps each with ``same_start``;
    runs of other boards of the same machine start are never replaced."""
    fp, path = install(), tmp_path / "b.json"
    previous = None
    for measured_on, rate, same_start in ((board("A"), 100.0, False), (board("B"), 98.0, False),
                                          (board("A"), 101.0, False), (board("A"), 102.0, True)):
        doc = on_board(fp, measured_on, record(rate))
        baseline.save(path, baseline.merge(doc, fp, previous, saved_run(doc, "start-1"), same_start=same_start))
        previous = baseline.load(path)
    assert [(r.board.id, r.cases["naive-bf16"].gbps) for r in previous.runs] == [("B", 98.0), ("A", 101.0), ("A", 102.0)]


def test_the_ratio_reference_is_one_ratio_per_board():
    """The traveling verdict's spread is across boards: a board with many runs counts once."""
    fp = install()
    figures = [(board("A"), 100.0, 200.0), (board("A"), 101.0, 200.0), (board("A"), 102.0, 200.0),
               (board("B"), 96.0, 200.0), (None, 98.0, 196.0)]
    runs = []
    for i, (measured_on, case_rate, yard_rate) in enumerate(figures):
        doc = document(fp, record(case_rate), record(yard_rate, case="torch_add-bf16-8x8"), runs=False)
        if measured_on:
            doc["machine_info"][baseline.BOARD_KEY] = measured_on.to_json()
        runs.append(baseline.run_of(doc, "", f"start-{i}"))
    ref = baseline.Baseline(Path("b.json"), fp, {}, runs).ratio_reference("naive-bf16", "torch_add-bf16-8x8")
    assert ref.ratios == pytest.approx((0.505, 0.48, 0.5)) and ref.count == 3
    assert ref.ratio == pytest.approx(0.5)
    assert ref.between_sigma == pytest.approx(statistics.stdev([0.505, 0.48, 0.5]) / 0.5)
    assert baseline.Baseline(Path("b.json"), fp, {}, runs).ratio_reference("naive-bf16", "torch_add-fp16-8x8") is None


# --- the traveling verdict (reports/gate.py) ----------------------------------------------


def ratio_reference(*ratios: float) -> baseline.RatioReference:
    return baseline.RatioReference("naive-bf16", "torch_add-bf16-8x8", ratios, 0.0)


def test_the_yardstick_of_a_stage_is_torch_add_of_its_dtype_and_shape_and_of_torch_add_the_copy():
    assert gate.yardstick(measured(1.0, shape=[16384, 8192])) == "torch_add-bf16-16384x8192"
    assert gate.yardstick(measured(1.0, case="torch_add-bf16-16384x8192", stage="torch_add")) == "d2d_copy-1GiB"
    assert gate.yardstick(measured(1.0, case="d2d_copy-1GiB", stage="d2d_copy")) == ""


def test_a_board_slower_in_everything_is_the_same_under_the_traveling_verdict_and_a_stage_slower_than_its_yardstick_is_not():
    """The planted defects: a whole board 3% slow (another host) passes; a stage 3% slower than
    torch.add beside it fails; a board's own 1% slowdown is what only its own runs see."""
    ref = ratio_reference(0.99, 0.995, 0.985)
    torch_add = measured(97.0, case="torch_add-bf16-8x8", stage="torch_add")  # the slow host: everything 3% down
    same = gate.judge_traveling(measured(0.99 * 97.0), ref, torch_add)
    assert (same.verdict, same.basis, same.yardstick, same.yardstick_gbps) == ("same", "traveling", "torch_add-bf16-8x8", 97.0)
    assert same.baseline_gbps == pytest.approx(0.99 * 97.0) and same.baseline_runs == 3
    slower = gate.judge_traveling(measured(0.99 * 97.0 * 0.97), ref, torch_add)
    assert slower.verdict == "slower" and slower.delta_pct == pytest.approx(-3.0)
    assert slower.threshold_pct == gate.TRAVEL_FLOOR_PCT["bandwidth"]
    board_own = gate.judge(measured(0.99 * 97.0), quiet_reference(0.99 * 100.0, 0.99 * 100.0, 0.99 * 100.0))
    assert board_own.verdict == "slower" and board_own.basis == "board"


def test_a_yardstick_faster_than_its_own_reference_counts_at_what_that_predicts():
    """torch.add on a lucky placement (or a faster torch) reads 10% above what the copy predicts;
    a stage read against it would be 9% slow. Against what torch.add's reference predicts it is
    the same, a stage 5% slower than that is still slower, and a yardstick slower than its
    reference (a slow board) is taken as measured."""
    ref = ratio_reference(0.5, 0.5, 0.5)
    lucky = replace(measured(110.0, case="torch_add-bf16-8x8", stage="torch_add"), baseline_gbps=100.0, verdict="faster")
    same = gate.judge_traveling(measured(50.0), ref, lucky)
    assert (same.verdict, same.baseline_gbps, same.yardstick_gbps) == ("same", pytest.approx(50.0), 110.0)
    assert gate.judge_traveling(measured(0.95 * 50.0), ref, lucky).verdict == "slower"
    slow_board = replace(measured(90.0, case="torch_add-bf16-8x8", stage="torch_add"), baseline_gbps=100.0, verdict="slower")
    assert gate.judge_traveling(measured(45.0), ref, slow_board).verdict == "same"


def test_the_traveling_threshold_is_the_ratios_spread_across_boards_or_its_floor():
    under = measured(100.0, case="torch_add-bf16-8x8", stage="torch_add")
    spread = ratio_reference(1.0, 0.97, 1.03, 1.0)
    judged = gate.judge_traveling(measured(100.0), spread, under)
    assert judged.threshold_pct == pytest.approx(gate.NOISE_SIGMAS * 100 * spread.between_sigma)
    few = gate.judge_traveling(measured(100.0, size="launch"), ratio_reference(1.0, 1.0), under)
    assert few.threshold_pct == max(gate.FEW_RUNS_FLOOR_PCT, gate.TRAVEL_FLOOR_PCT["launch"])
    assert gate.TRAVEL_FLOOR_PCT["bandwidth"] > gate.FLOOR_PCT["bandwidth"]


def test_without_a_ratio_or_a_yardstick_figure_the_traveling_verdict_is_new():
    under = measured(100.0, case="torch_add-bf16-8x8", stage="torch_add")
    assert gate.judge_traveling(measured(100.0), None, under).verdict == "new"
    assert gate.judge_traveling(measured(100.0), None, under).yardstick_gbps == 100.0  # measured, but no run has the ratio
    assert gate.judge_traveling(measured(100.0), ratio_reference(1.0, 1.0, 1.0), None).verdict == "new"


def test_replace_starts_the_baseline_over(tmp_path):
    fp = install()
    previous = baseline.load(write(tmp_path / "prev.json", document(fp, record(1.0, case="a"))))
    doc = document(fp, record(30.0, case="c"))
    merged = baseline.merge(doc, fp, previous, saved_run(doc, "start-9"), replace=True)
    assert cases(merged) == [("c", 30.0)] and len(merged[baseline.RUNS_KEY]) == 1


@pytest.mark.parametrize("previous_fp", [install(driver="570.1"), None], ids=["other-install", "no-previous"])
def test_merge_keeps_nothing_from_another_install(tmp_path, previous_fp):
    """Figures of another driver (or none at all) must not pass for this install's."""
    fp = install()
    previous = previous_fp and baseline.load(write(tmp_path / "prev.json", document(previous_fp, record(1.0, case="a"))))
    doc = {"benchmarks": document(fp, record(30.0, case="c"))["benchmarks"]}
    merged = baseline.merge(doc, fp, previous, saved_run(doc, "start-1"))
    assert cases(merged) == [("c", 30.0)]
    assert merged["machine_info"][baseline.FINGERPRINT_KEY] == fp.to_json()
    assert [set(r["cases"]) for r in merged[baseline.RUNS_KEY]] == [{"c"}]


def test_a_file_without_runs_reads_as_one_run(tmp_path):
    """A baseline saved before runs were kept is one machine start's figures."""
    loaded = baseline.load(write(tmp_path / "old.json", {**document(install(), record(7.0), runs=False), "datetime": "2026-11-23"}))
    assert [(r.saved, r.boot_id, r.cases["naive-bf16"].gbps, r.method) for r in loaded.runs] == [
        ("2026-11-23", "", 7.0, baseline.OLDER_METHOD)]


def test_save_replaces_atomically_and_round_trips(tmp_path):
    """A saved baseline loads back as written and leaves no temporary file beside it."""
    fp = install()
    path = baseline.default_path(fp, tmp_path / "baselines")
    baseline.save(path, document(fp, record(1.0, case="a")))
    doc = document(fp, record(2.0, case="a"), record(3.0, case="b"))
    baseline.save(path, doc)
    assert [p.name for p in path.parent.iterdir()] == [path.name]
    loaded = baseline.load(path)
    assert loaded.document == doc and loaded.fingerprint == fp


# --- fixtures/plugin/bench_plugin.py, through pytester ---------------------------------------------


@pytest.fixture
def project(project):
    """The plugin around one trivial test (no DSL case is collected)."""
    project.makepyfile(test_one="def test_one():\n    pass\n")
    return project


@pytest.fixture
def bench_usage_error(project, usage_error):
    """``usage_error`` around the trivial test, with a report folder."""
    return lambda *args: usage_error(*args, "--report-dir", str(project.path / "out"), "test_one.py")


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        pytest.param(("--bandwidth-threshold", "bad"), "ERROR: --bandwidth-threshold 'bad': expected CASE_GLOB=PERCENT", id="threshold"),
        # a threshold that is not a finite percent below 100 would switch the gate off
        pytest.param(("--bandwidth-threshold", "x=nan"), "ERROR: --bandwidth-threshold 'x=nan': expected", id="threshold-nan"),
        pytest.param(("--bandwidth-threshold", "x=inf"), "ERROR: --bandwidth-threshold 'x=inf': expected", id="threshold-inf"),
        pytest.param(("--bandwidth-save", "/proc/nope/b.json"), "ERROR: --bandwidth-save /proc/nope/b.json: folder", id="save-nowhere"),
        pytest.param(("--replace",), "ERROR: --replace: only means something with --bandwidth-save", id="replace-alone"),
        pytest.param(("--same-start",), "ERROR: --same-start: only means something with --bandwidth-save", id="same-start-alone"),
        pytest.param(("--bandwidth-equivalent", "1654922001234"), "ERROR: --bandwidth-equivalent '1654922001234': expected two "
                     "or more distinct board serials", id="equivalent-one-board"),
        pytest.param(("--bandwidth-equivalent", "A,A"), "ERROR: --bandwidth-equivalent 'A,A': expected two", id="equivalent-twice"),
        pytest.param(("--bandwidth-verdict", "relative"), "ERROR: --bandwidth-verdict 'relative': expected one of auto, traveling",
                     id="verdict"),
        pytest.param(
            ("--bandwidth-baseline", "/nonexistent.json"), "ERROR: baseline /nonexistent.json: cannot read it", id="missing-baseline"
        ),
        pytest.param(
            ("--bandwidth-plant-slowdown", "2"), "ERROR: --bandwidth-plant-slowdown 2.0: expected a fraction in (0, 1)", id="plant"
        ),
        # a drill's cases without a reference pass as new: saved, their slowed figures would become the baseline
        pytest.param(
            ("--bandwidth-plant-slowdown", "0.01", "--bandwidth-save"), "ERROR: --bandwidth-plant-slowdown: a drill's figures",
            id="plant-and-save",
        ),
    ],
)
def test_bad_bench_option_is_a_one_line_usage_error(bench_usage_error, args, expected):
    assert bench_usage_error(*args).startswith(expected)


def test_malformed_baseline_stops_the_run_and_stays_as_it_was(project, bench_usage_error):
    """Named both to compare with and to save to, a torn file is refused before anything runs."""
    path = write(project.path / "torn.json", '{"machine_info": {')
    before = path.read_bytes()
    line = bench_usage_error("--bandwidth-baseline", str(path), "--bandwidth-save", str(path))
    assert line.startswith(f"ERROR: baseline {path}: not JSON (")
    assert path.read_bytes() == before


def test_save_refuses_to_replace_another_gpus_baseline(project, bench_usage_error):
    """``--bandwidth-save`` onto another GPU's baseline is refused at start, so the file is never overwritten."""
    here = fingerprint().gpu
    assert here != FOREIGN_GPU
    path = write(project.path / "foreign.json", document(install(FOREIGN_GPU), record(100.0)))
    before = path.read_bytes()
    line = bench_usage_error("--bandwidth-save", str(path))
    assert line.startswith("ERROR: --bandwidth-save: refusing to replace it: baseline foreign.json ")
    assert f"recorded on {FOREIGN_GPU}, this run is on {here}" in line
    assert path.read_bytes() == before


def test_forget_drops_cases_from_every_run_and_the_benchmarks(tmp_path):
    """Dropped cases leave each run and the benchmarks; a run of dropped cases alone goes too."""
    fp = install()
    path = tmp_path / "b.json"
    previous = None
    for boot_id, records in (("start-1", (record(1.0, case="tuned-a"), record(2.0, case="b"))),
                             ("start-2", (record(3.0, case="tuned-a"),))):
        doc = document(fp, *records)
        baseline.save(path, baseline.merge(doc, fp, previous, saved_run(doc, boot_id)))
        previous = baseline.load(path)
    assert baseline.forget(path, ["tuned-*", "nothing-*"]) == ["tuned-a"]
    after = baseline.load(path)
    assert [(r.boot_id, set(r.cases)) for r in after.runs] == [("start-1", {"b"})]
    assert cases(after.document) == [("b", 2.0)]


@pytest.mark.parametrize(("patterns", "reason"), [(["x-*"], "no case matches x-*"), (["*"], "matches every case")])
def test_forget_refuses_in_one_line(tmp_path, patterns, reason):
    path = write(tmp_path / "b.json", document(install(), record(1.0, case="a")))
    before = path.read_text()
    with pytest.raises(baseline.BaselineError, match=reason):
        baseline.forget(path, patterns)
    assert path.read_text() == before


def test_forget_on_the_command_line(tmp_path, capsys):
    from reports.__main__ import main

    path = write(tmp_path / "b.json", document(install(), record(1.0, case="a"), record(2.0, case="b")))
    assert main(["forget", str(path), "a"]) == 0
    assert capsys.readouterr().out.startswith("dropped 1 cases from")
    assert main(["forget", str(path), "zz"]) == 4
    assert "no case matches zz" in capsys.readouterr().err


# --- fixtures/bandwidth/measure.py: pytest-benchmark's private _make_stats and _mode ---------

FED_MODULE = """
from fixtures.bandwidth import measure as bench
from fixtures.bandwidth import timing

def test_fed(benchmark):
    assert benchmark.enabled  # as in the bench tier, which skips a disabled fixture
    bench.feed_benchmark(benchmark, timing.Measurement([3e-3, 1e-3, 2e-3, 5e-3, 4e-3]), {"case": "naive-bf16", "gbps": 12.5})
"""


def test_feed_benchmark_reaches_pytest_benchmarks_json(pytester, monkeypatch):
    """GPU samples enter through ``benchmark._make_stats(1)`` and mark the fixture used
    (``_mode``), private API: a pytest-benchmark release that changes either must fail here (no
    stats, or a "fixture was not used" warning on every bench case), not in a GPU job. xdist
    disables the fixture (and the outer run may be a worker), so this is a nested session
    without xdist."""
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)
    pytester.makepyfile(test_fed=FED_MODULE)
    out = pytester.path / "bench.json"
    result = pytester.runpytest_inprocess("-p", "no:xdist", "-p", "no:cacheprovider", "--benchmark-json", str(out))
    result.assert_outcomes(passed=1)
    # pytest-benchmark's own warning only: a nested session may also warn of what the outer one
    # imported first (3 such warnings, once, in CI's full run; never alone)
    unused = [line for line in result.outlines if "PytestBenchmarkWarning" in line or "was not used" in line]
    assert not unused, unused
    (entry,) = json.loads(out.read_text())["benchmarks"]
    stats = entry["stats"]
    assert (stats["rounds"], stats["iterations"]) == (5, 1)
    assert (stats["min"], stats["median"], stats["max"]) == pytest.approx((1e-3, 3e-3, 5e-3))
    assert entry["extra_info"] == {"case": "naive-bf16", "gbps": 12.5}


# --- the plugin's gate: which basis each GPU is judged on ------------------------------------


def bench_gate(tmp_path, measured_on: Board | None, verdict: str = "auto") -> bench_plugin.BenchGate:
    """The gate of a process pinned to ``measured_on``, over a baseline of board A's three
    starts and a run saved before boards were named."""
    fp = install()
    runs = [baseline.run_of(on_board(fp, board("A"), record(99.0), record(100.0, case="torch_add-bf16-8x8")), "", f"start-{i}")
            for i in range(3)]
    legacy = baseline.run_of(document(fp, record(97.0), record(98.0, case="torch_add-bf16-8x8"), runs=False), "", "start-9")
    doc = {**document(fp, record(99.0)), baseline.RUNS_KEY: [r.to_json() for r in [*runs, legacy]]}
    path = write(tmp_path / "baseline.json", doc)
    options = bench_plugin.BenchOptions([], str(path), baseline.load(path), None, False, None, verdict=verdict)
    return bench_plugin.BenchGate(None, options, fp, measured_on)


def test_a_gpu_on_a_board_with_runs_is_judged_by_them_and_one_without_by_the_traveling_verdict(tmp_path):
    own = bench_gate(tmp_path, board("A"))
    assert own.basis == "board" and own.plants_references
    assert own.basis_note == "board A against its own 3 runs (3 machine starts)"
    assert own.judge(measured(98.0)).verdict == "slower"  # 1% below its own runs
    stranger = bench_gate(tmp_path, board("Z"))
    assert stranger.basis == "traveling" and not stranger.plants_references
    assert stranger.basis_note == "board Z by the traveling verdict, it has no runs of its own there (boards with runs: 1)"
    assert stranger.judge(measured(95.0)).verdict == "new"  # its yardstick not measured yet in this process
    stranger.judge(measured(96.0, case="torch_add-bf16-8x8", stage="torch_add"))
    judged = stranger.judge(measured(95.0))  # the whole board 4% down, the stage in step with torch.add beside it
    assert (judged.verdict, judged.basis, judged.yardstick_gbps) == ("same", "traveling", 96.0)
    assert stranger.judge(measured(91.0)).verdict == "slower"  # 4% behind torch.add on the same GPU
    updated = bench_gate(tmp_path, board("A", vbios="96.00.AA"))
    assert updated.basis == "traveling" and "its runs there were on another setup: vbios 96.00.99 (now 96.00.AA)" in updated.basis_note
    asked = bench_gate(tmp_path, board("A"), verdict="traveling")
    assert asked.basis == "traveling" and asked.basis_note.endswith("asked for (--bandwidth-verdict traveling)")
