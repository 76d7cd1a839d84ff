"""Several GPUs: which a run uses, the one each process is pinned to, and the errors at start.
NVML is the boundary: a stand-in ``pynvml`` (``tests/data/fake_pynvml.py``) lists the GPUs, and
the harness's own logic runs as it would on a runner."""

import importlib.util
import json
from pathlib import Path

import pytest

from fixtures.dsl import nvml
from fixtures.plugin import gpus
from fixtures.plugin.startup import StartupError
from tests.conftest import ROOT

pytestmark = pytest.mark.harness

FAKE = Path(__file__).parent / "data" / "fake_pynvml.py"
H100 = {"name": "NVIDIA H100 80GB HBM3", "total_mib": 81559, "free_mib": 81000}
H200 = {"name": "NVIDIA H200", "total_mib": 143771, "free_mib": 143000}
BUSY = {**H100, "free_mib": 3000}
L4 = {"name": "NVIDIA L4", "total_mib": 23034, "free_mib": 22500}


@pytest.fixture
def driver(monkeypatch):
    """NVML listing the given GPUs, as ``fixtures.dsl.nvml`` finds it."""

    def listing(*listed: dict):
        monkeypatch.setenv("FAKE_NVML_GPUS", json.dumps(listed))
        spec = importlib.util.spec_from_file_location("pynvml", FAKE)
        fake = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(fake)
        monkeypatch.setattr(nvml, "library", lambda: fake)
        return fake

    return listing


def uuids(found) -> list[str]:
    return [g.uuid for g in found]


def test_every_gpu_is_visible_without_an_outer_choice(driver):
    driver(H100, H100, H200)
    found = gpus.visible(None)
    assert uuids(found) == ["GPU-fake-0", "GPU-fake-1", "GPU-fake-2"]
    assert [(g.index, g.name, g.memory_mib, g.memory_clock_mhz) for g in found][2] == (2, "NVIDIA H200", 143771, 2619)


@pytest.mark.parametrize(("outer", "expected"), [
    pytest.param("2,0", ["GPU-fake-2", "GPU-fake-0"], id="indices-in-cuda-order"),
    pytest.param("GPU-fake-1", ["GPU-fake-1"], id="uuid"),
    pytest.param("1,7,2", ["GPU-fake-1"], id="ends-at-an-unknown-entry-as-cuda-does"),
    pytest.param("", [], id="empty-hides-all"),
])
def test_an_outer_cuda_visible_devices_is_honoured(driver, outer, expected):
    driver(H100, H100, H100)
    assert uuids(gpus.visible(outer)) == expected


def test_gpus_narrows_by_position_among_the_visible(driver):
    driver(H100, H100, H100, H100)
    visible = gpus.visible("1,3")
    assert uuids(gpus.select(visible, ["1"], "1,3")) == ["GPU-fake-3"]
    assert uuids(gpus.select(visible, ["GPU-fake-1"], "1,3")) == ["GPU-fake-1"]
    assert gpus.select(visible, None, "1,3") == visible


@pytest.mark.parametrize(("listed", "wanted", "outer", "message"), [
    pytest.param((H100, H100), ["2"], None, "--gpus 2: no visible GPU 2 (visible: 0: NVIDIA H100 80GB HBM3 (GPU-fake-0), "
                 "1: NVIDIA H100 80GB HBM3 (GPU-fake-1))", id="missing-position"),
    pytest.param((H100,), ["GPU-fake-9"], None, "--gpus GPU-fake-9: no visible GPU GPU-fake-9", id="missing-uuid"),
    pytest.param((H100, H100), ["0"], "", "--gpus 0: no GPU is visible here (CUDA_VISIBLE_DEVICES='')", id="none-visible"),
])
def test_a_gpu_that_is_not_there_is_one_line(driver, listed, wanted, outer, message):
    driver(*listed)
    with pytest.raises(StartupError) as error:
        gpus.select(gpus.visible(outer), wanted, outer)
    assert str(error.value).startswith(message)


def test_without_a_driver_gpus_names_the_reason(monkeypatch):
    monkeypatch.setattr(nvml, "library", lambda: None)
    assert gpus.visible(None) == []
    with pytest.raises(StartupError, match=r"^--gpus 0: no GPU is visible here \(NVML cannot start: no NVIDIA driver\)$"):
        gpus.select([], ["0"], None)


@pytest.mark.parametrize("text", ["0,x", "0,,1", "1,1", "-1", "gpu0"])
def test_a_malformed_gpus_option_is_refused(text):
    with pytest.raises(StartupError, match="expected distinct GPU positions or UUIDs separated by commas"):
        gpus.parse(text)


def test_workers_are_pinned_round_robin():
    listed = [gpus.GpuRecord(i, f"GPU-{i}", "x", 1, None, "h") for i in (0, 3)]
    assert [gpus.for_worker(listed, f"gw{n}").uuid for n in range(5)] == ["GPU-0", "GPU-3", "GPU-0", "GPU-3", "GPU-0"]
    assert gpus.for_worker(listed, None).uuid == "GPU-0"
    assert gpus.for_worker([], "gw1") is None


def test_a_busy_gpu_is_refused_at_start(driver):
    driver(H100, BUSY)
    listed = gpus.visible(None)
    with pytest.raises(StartupError, match=r"^GPU 1 \(NVIDIA H100 80GB HBM3, GPU-fake-1\) is busy: 2.9 GiB free, this run "
                                            r"needs 8.0 GiB on it \(4 workers at 2 GiB each\); leave it out"):
        gpus.check_free(listed, 8, 1 << 30)
    gpus.check_free(listed[:1], 8, 1 << 30)  # the free one alone is fine


def test_a_gpu_too_small_for_the_run_is_named_so_not_busy(driver):
    """A 24 GB card runs the gpu tier; the bench tier's 48 GiB it never holds, idle or not."""
    driver(L4)
    listed = gpus.visible(None)
    gpus.check_free(listed, 4, 0)
    with pytest.raises(StartupError, match=r"^GPU 0 \(NVIDIA L4, GPU-fake-0\) has 22.5 GiB, this run needs 50.0 GiB on it "
                                            r"\(the bench tier's largest case\); leave it out with --gpus, or run with the "
                                            r"bench tier left out \(-m 'not bench'\)$"):
        gpus.check_free(listed, 4, 48 << 30)


# end to end: the plugin in a subprocess, with the stand-in NVML on its path

WHERE = """
import os
from pathlib import Path

import pytest


@pytest.mark.parametrize("n", range(12))
@pytest.mark.host
def test_where(n, worker_id):
    Path(os.environ["WHERE_OUT"], worker_id).write_text(os.environ.get("CUDA_VISIBLE_DEVICES", "unset"))


@pytest.mark.gpu
def test_on_a_gpu():
    pass
"""


@pytest.fixture
def runner(project, fake_gpus, monkeypatch, tmp_path):
    project.makepyfile(test_where=WHERE)
    monkeypatch.setenv("WHERE_OUT", str(tmp_path))

    def run(listed, *args):
        fake_gpus(listed)
        result = project.runpytest_subprocess("-p", "no:randomly", "--report-dir", str(tmp_path / "report"), *args)
        pinned = {p.name: p.read_text() for p in tmp_path.glob("gw*")}
        return result, pinned

    return run


def test_each_worker_runs_on_its_gpu_and_the_report_names_them(runner, tmp_path):
    result, pinned = runner([H100, H100, H100], "-n", "3", "--gpus", "0,2")
    assert result.ret == 0, result.stdout.str()[-3000:]
    assert pinned and pinned == {w: {"gw0": "GPU-fake-0", "gw1": "GPU-fake-2", "gw2": "GPU-fake-0"}[w] for w in pinned}
    result.stdout.fnmatch_lines(["gpu 0: NVIDIA H100 80GB HBM3, GPU-fake-0, 81559 MiB, memory clock 2619 MHz",
                                 "gpu 2: NVIDIA H100 80GB HBM3, GPU-fake-2, 81559 MiB, memory clock 2619 MHz",
                                 "xdist worker gwN runs on the (N mod 2)-th of these*"])
    run = json.loads((tmp_path / "report" / "results.json").read_text())
    assert [g["uuid"] for g in run["gpus"]] == ["GPU-fake-0", "GPU-fake-2"]
    (device_case,) = [c for c in run["cases"] if c["tier"] == "gpu"]
    assert device_case["gpu"] in ("GPU-fake-0", "GPU-fake-2")  # skipped here (no CUDA), but dealt to a GPU
    assert all(c["gpu"] == "" for c in run["cases"] if c["tier"] == "host")
    assert "## GPUs" in (tmp_path / "report" / "summary.md").read_text()


def test_without_xdist_the_first_gpu_is_used(runner, tmp_path, monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "2,1")
    result, _ = runner([H100, H100, H100])
    assert result.ret == 0, result.stdout.str()[-3000:]
    (case,) = [c for c in json.loads((tmp_path / "report" / "results.json").read_text())["cases"] if c["tier"] == "gpu"]
    assert case["gpu"] == "GPU-fake-2"


@pytest.mark.parametrize(("listed", "args", "line"), [
    pytest.param([H100], ("--gpus", "1"), "ERROR: --gpus 1: no visible GPU 1 (visible: 0: NVIDIA H100 80GB HBM3 (GPU-fake-0))",
                 id="missing"),
    pytest.param([H100, BUSY], ("-n", "2"), "ERROR: GPU 1 (NVIDIA H100 80GB HBM3, GPU-fake-1) is busy: 2.9 GiB free, this run "
                 "needs 56.1 GiB on it (the largest large case it holds, 54.1 GiB, beside 0 other workers and the bench "
                 "phase's process at 2 GiB each); "
                 "leave it out with --gpus", id="busy"),
    pytest.param([], ("--gpus", "0"), "ERROR: --gpus 0: no GPU is visible here (NVML lists no GPU)", id="none"),
])
def test_gpu_errors_stop_the_run_in_one_line(runner, project, listed, args, line):
    # the gpu plan's large cases, which the busy check holds room for, in a module found by the plan it declares
    project.makepyfile(test_any_name="import pytest\n\npytestmark = pytest.mark.gpu\n\n\n"
                                     "@pytest.mark.plan('gpu')\ndef test_any_name(case):\n    pass\n")
    result, _ = runner(listed, *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR, result.stdout.str()[-2000:]
    assert [e for e in result.errlines if e.strip()] == [line]


BENCH = """
import pytest


@pytest.mark.parametrize("n", range(4))
@pytest.mark.bench
def test_bandwidth(n):
    pass
"""


@pytest.mark.parametrize("xdist", [("-n", "2"), ()], ids=["xdist", "no-xdist"])
def test_every_gpu_measures_every_bench_case(runner, project, tmp_path, xdist):
    """Each GPU is judged on its own board, so each measures every bench case, all at once, with
    or without xdist; a case's id names the GPU it ran on, and the report its board."""
    project.makepyfile(test_bench=BENCH)
    result, _ = runner([H100, H100], *xdist, "test_bench.py")
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED, result.stdout.str()[-3000:]  # skipped: no CUDA here
    result.stdout.fnmatch_lines(["*bench phase: 4 bench cases, measured alone on each of 2 GPUs at once after the other cases*",
                                 "*bench phase on gpu 0 (NVIDIA H100 80GB HBM3): 4 cases*",
                                 "*bench phase on gpu 1 (NVIDIA H100 80GB HBM3): 4 cases*"])
    run = json.loads((tmp_path / "report" / "results.json").read_text())
    assert [(c["nodeid"].rpartition("[")[2], c["gpu"]) for c in run["cases"]] == [
        (f"{n}-gpu{g}]", f"GPU-fake-{g}") for g in (0, 1) for n in range(4)]
    assert [(g["serial"], g["vbios"], g["power_limit_w"]) for g in run["gpus"]] == [
        ("fake-serial-0", "96.00.99.00.01", 700.0), ("fake-serial-1", "96.00.99.00.01", 700.0)]
    assert run["gpus"][0]["cpu"]


def test_the_busy_check_counts_only_the_large_cases_a_run_may_select():
    """A run that cannot collect the gpu plan's large cases (another file, ``-k`` or ``-m`` that
    excludes them) is not held to their memory at start; the test taking them is found by the
    plan it declares (``plan("gpu")``), whatever its file or name."""
    from fixtures.cases import matrix
    from fixtures.plugin.declared import marks
    from fixtures.plugin.startup import selected_by_options

    def gpu_plan(paths):
        return [m.function for m in marks(paths, []) if m.name == "plan" and m.args[:1] == ("gpu",)]

    large = matrix.large_cases()
    assert gpu_plan([str(ROOT / "suites")]) == ["test_stage_matches_torch"]
    assert len(selected_by_options(large, "", "", gpu_plan([str(ROOT / "suites")]))) == len(large)
    assert len(selected_by_options(large, "matches_torch", "", gpu_plan([str(ROOT / "suites" / "gpu")]))) == len(large)
    assert selected_by_options(large, "", "", gpu_plan([str(ROOT / "tests" / "test_drill.py")])) == []
    assert selected_by_options(large, "", "", gpu_plan([str(ROOT / "suites" / "bench")])) == []
    assert selected_by_options(large, "not large", "", gpu_plan([str(ROOT / "suites")])) == []
    assert selected_by_options(large, "", "bench", gpu_plan([str(ROOT / "suites")])) == []
    assert {c.dtype.id for c in selected_by_options(large, "large and fp16", "gpu", gpu_plan([str(ROOT / "suites")]))} == {"fp16"}


def test_the_busy_check_holds_room_for_the_bench_tier_only_where_a_run_may_select_it():
    from fixtures.plugin.declared import marks
    from fixtures.plugin.startup import may_select_tier

    def may(markexpr, *paths):
        return may_select_tier(marks([str(ROOT / p) for p in paths], [".*", "venv"]), "bench", markexpr)

    assert may("", "suites")
    assert may("", ".")
    assert may("not gpu", "suites/bench/test_bandwidth.py::test_device_ceiling")
    assert may("", "suites/bench/test_tuned_vs_torch.py")
    assert not may("", "suites/gpu", "tests")
    assert not may("gpu or host", "suites")
    assert may("bench and (", "suites")  # check_selection answers that one
