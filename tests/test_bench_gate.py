"""The bench tier's CPU-side logic: the bandwidth verdict, baseline files, the plugin's options,
and the one private pytest-benchmark call the tier relies on."""

import json
import math
from pathlib import Path

import pytest

from fixtures.environment import fingerprint
from reports import baseline, gate

pytestmark = pytest.mark.harness

ROOT = Path(__file__).resolve().parents[1]
H100 = "NVIDIA H100 80GB HBM3"
FOREIGN_GPU = "NVIDIA A100-SXM4-40GB"


def record(gbps: float, median_s: float = 1e-3, spread_s: float = 0.0, samples: int = 100, case: str = "naive-bf16") -> dict:
    """A case's bandwidth record with the fields the gate and a baseline need."""
    return {"case": case, "gbps": gbps, "median_s": median_s, "spread_s": spread_s, "samples": samples}


def install(gpu: str = H100, **changes) -> dict:
    """A fingerprint dict shaped like ``fixtures.environment.Fingerprint.as_dict()``."""
    fp = {
        "dsl": "4.8.1", "dsl_libs": "cu13", "dsl_cuda": "13.4", "torch": "2.11.0+cu130", "torch_cuda": "13.0",
        "driver": "580.159.04", "driver_cuda": "13.0", "gpu": gpu, "compute_capability": "9.0", "python": "3.12.3",
    }
    return {**fp, **changes}


def document(fp: dict, *records: dict) -> dict:
    """A pytest-benchmark-like JSON document as ``--bandwidth-save`` writes it."""
    return {
        "machine_info": {baseline.FINGERPRINT_KEY: fp},
        "benchmarks": [{"name": f"test_stage_bandwidth[{r['case']}]", "extra_info": r} for r in records],
    }


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
    """The module docstring's formula: 1.2533 x sigma / sqrt(samples), sigma = IQR / 1.349 (relative)."""
    return 1.2533 * (r["spread_s"] / 1.349 / r["median_s"]) / math.sqrt(r["samples"])


def test_median_error_follows_the_documented_formula():
    r = record(100.0, median_s=2e-3, spread_s=1e-4, samples=25)
    assert gate.median_error(r) == pytest.approx(docstring_median_error(r))
    assert gate.median_error({**r, "samples": 100}) == pytest.approx(gate.median_error(r) / 2)


def test_quiet_records_get_the_floor():
    """Within-run noise cannot see run-to-run drift: a near-noiseless pair still gets FLOOR_PCT."""
    quiet = record(100.0, spread_s=1e-7, samples=100)
    assert gate.threshold_pct(quiet, quiet) == gate.FLOOR_PCT


def test_noise_widens_the_threshold():
    """Noisy medians combine in quadrature, scaled by NOISE_SIGMAS, and the result replaces the floor."""
    noisy = record(100.0, spread_s=1e-4, samples=25)
    quiet = record(100.0, spread_s=0.0, samples=25)
    both = gate.NOISE_SIGMAS * 100 * math.hypot(docstring_median_error(noisy), docstring_median_error(noisy))
    assert both > gate.FLOOR_PCT
    assert gate.threshold_pct(noisy, noisy) == pytest.approx(both)
    one = gate.NOISE_SIGMAS * 100 * docstring_median_error(noisy)
    assert one > gate.FLOOR_PCT
    assert gate.threshold_pct(noisy, quiet) == pytest.approx(one)
    assert gate.threshold_pct(quiet, noisy) == pytest.approx(one)


def test_a_case_without_baseline_is_new():
    assert gate.judge(record(100.0), None) == {"verdict": "new"}


@pytest.mark.parametrize(
    ("gbps", "verdict"),
    [(98.1, "same"), (97.9, "slower"), (101.9, "same"), (102.1, "faster")],
)
def test_verdict_around_the_threshold(gbps, verdict):
    """Quiet records are judged against the floor: a change within it is the same bandwidth."""
    judged = gate.judge(record(gbps), record(100.0))
    assert judged["verdict"] == verdict
    assert judged["baseline_gbps"] == 100.0
    assert judged["delta_pct"] == pytest.approx(gbps - 100.0)
    assert judged["threshold_pct"] == gate.FLOOR_PCT


def test_override_replaces_the_derived_threshold():
    """A per-case override can both widen and narrow the band, noise notwithstanding."""
    noisy = record(100.0, spread_s=1e-4, samples=25)
    assert gate.threshold_pct(noisy, noisy) > 3
    wide = gate.judge(record(95.0), record(100.0), override=6.0)
    assert (wide["verdict"], wide["threshold_pct"]) == ("same", 6.0)
    narrow = gate.judge({**noisy, "gbps": 97.0}, noisy, override=1.0)
    assert (narrow["verdict"], narrow["threshold_pct"]) == ("slower", 1.0)


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
    """``--bandwidth-baseline auto`` finds a committed baseline only by the name its fingerprint gives."""
    loaded = baseline.load(path)
    assert loaded.entries
    assert path.name == baseline.default_path(loaded.fingerprint).name


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


def test_select_auto_finds_this_installs_file(tmp_path):
    fp = install()
    path = write(baseline.default_path(fp, tmp_path), document(fp, record(100.0, case="tv-fp16")))
    chosen, note = baseline.select("auto", fp, tmp_path)
    assert chosen.path == path and set(chosen.entries) == {"tv-fp16"}
    assert note == f"compared with {path}"


def test_select_explicit_path_loads_and_checks_it(tmp_path):
    """An explicit file may be another install's (older driver), but not another GPU's."""
    path = write(tmp_path / "older.json", document(install(driver="570.1"), record(90.0)))
    chosen, note = baseline.select(str(path), install(), tmp_path / "unused")
    assert chosen.entries["naive-bf16"]["gbps"] == 90.0
    assert note == f"compared with {path}"
    with pytest.raises(baseline.BaselineError, match="not comparable across GPU models"):
        baseline.select(str(path), install(FOREIGN_GPU), tmp_path / "unused")


def cases(doc: dict) -> list[tuple[str, float]]:
    return sorted((b["extra_info"]["case"], b["extra_info"]["gbps"]) for b in doc["benchmarks"])


def test_merge_keeps_unmeasured_cases_of_the_same_install(tmp_path):
    """A partial run refreshes what it measured and keeps the rest of this install's baseline."""
    fp = install()
    previous = baseline.load(write(tmp_path / "prev.json", document(fp, record(1.0, case="a"), record(2.0, case="b"))))
    run = {"machine_info": {"cpu": "x"}, "benchmarks": document(fp, record(20.0, case="b"), record(30.0, case="c"))["benchmarks"]}
    merged = baseline.merge(run, fp, previous)
    assert cases(merged) == [("a", 1.0), ("b", 20.0), ("c", 30.0)]
    assert merged["machine_info"] == {"cpu": "x", baseline.FINGERPRINT_KEY: fp}


@pytest.mark.parametrize("previous_fp", [install(driver="570.1"), None], ids=["other-install", "no-previous"])
def test_merge_keeps_nothing_from_another_install(tmp_path, previous_fp):
    """Figures of another driver (or none at all) must not pass for this install's."""
    fp = install()
    previous = previous_fp and baseline.load(write(tmp_path / "prev.json", document(previous_fp, record(1.0, case="a"))))
    merged = baseline.merge({"benchmarks": document(fp, record(30.0, case="c"))["benchmarks"]}, fp, previous)
    assert cases(merged) == [("c", 30.0)]
    assert merged["machine_info"][baseline.FINGERPRINT_KEY] == fp


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


# --- reports/bench_plugin.py, through pytester ---------------------------------------------


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
        pytest.param(
            ("--bandwidth-baseline", "/nonexistent.json"), "ERROR: baseline /nonexistent.json: cannot read it", id="missing-baseline"
        ),
        pytest.param(
            ("--bandwidth-plant-slowdown", "2"), "ERROR: --bandwidth-plant-slowdown 2.0: expected a fraction in (0, 1)", id="plant"
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


# --- fixtures/bench.py: pytest-benchmark's private _make_stats ----------------------------

FED_MODULE = """
from fixtures import bench, timing

def test_fed(benchmark):
    assert benchmark.enabled  # as in the bench tier, which skips a disabled fixture
    bench.feed_benchmark(benchmark, timing.Measurement([3e-3, 1e-3, 2e-3, 5e-3, 4e-3]), {"case": "naive-bf16", "gbps": 12.5})
"""


def test_feed_benchmark_reaches_pytest_benchmarks_json(pytester, monkeypatch):
    """GPU samples enter through ``benchmark._make_stats(1)``, a private API: a pytest-benchmark
    release that changes it must fail here, not in a GPU job. xdist disables the fixture (and the
    outer run may be a worker), so this is a nested session without xdist."""
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)
    pytester.makepyfile(test_fed=FED_MODULE)
    out = pytester.path / "bench.json"
    result = pytester.runpytest_inprocess("-p", "no:xdist", "-p", "no:cacheprovider", "--benchmark-json", str(out))
    result.assert_outcomes(passed=1)
    (entry,) = json.loads(out.read_text())["benchmarks"]
    stats = entry["stats"]
    assert (stats["rounds"], stats["iterations"]) == (5, 1)
    assert (stats["min"], stats["median"], stats["max"]) == pytest.approx((1e-3, 3e-3, 5e-3))
    assert entry["extra_info"] == {"case": "naive-bf16", "gbps": 12.5}
