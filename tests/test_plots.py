"""``bandwidth.png`` and ``pct_ceiling.png`` from recorded runs (CPU only, Agg backend)."""

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from reports import plots
from reports.model import RunResult

pytestmark = pytest.mark.harness

DATA = Path(__file__).parent / "data"
PNG = b"\x89PNG\r\n\x1a\n"


def recorded(name: str) -> RunResult:
    return RunResult.from_json(json.loads((DATA / name).read_text()))


@pytest.mark.parametrize("name", ["run_481.json", "run_453.json"])
def test_writes_both_figures_and_nothing_else(tmp_path, name):
    """Both PNGs, complete (renamed into place, no temporary file left behind)."""
    written = plots.write(recorded(name), tmp_path)
    assert written == [tmp_path / "bandwidth.png", tmp_path / "pct_ceiling.png"]
    for path in written:
        assert path.read_bytes().startswith(PNG) and path.stat().st_size > 10_000
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bandwidth.png", "pct_ceiling.png"]


def test_the_bandwidth_figure_shows_each_case_as_a_bar_of_its_figure():
    """One panel per size, dtypes along x, one bar per (stage, dtype) as tall as its GB/s, every
    stage in the legend; the % figure's bars are each streaming case's % of the ceiling."""
    run = recorded("run_481.json")
    rows = [c.bandwidth for c in run.bench_cases()]
    made = plots.figures(run)
    panels = made["bandwidth.png"].axes
    sizes = list(dict.fromkeys(b.size for b in rows))
    assert [ax.get_title().split(" ")[0] for ax in panels[: len(sizes)]] == sizes
    for ax, size in zip(panels, sizes):
        sized = [b for b in rows if b.size == size]
        assert sorted(round(bar.get_height(), 6) for bar in ax.patches) == sorted(round(b.gbps, 6) for b in sized)
        assert [t.get_text() for t in ax.get_xticklabels()] == list(dict.fromkeys(b.dtype for b in sized))
    legend = [t.get_text() for t in panels[len(sizes) - 1].get_legend().get_texts()]
    assert set(b.stage for b in rows) <= set(legend)
    (percent,) = made["pct_ceiling.png"].axes
    streaming = [b.pct_ceiling for b in rows if b.size == "bandwidth"]
    assert sorted(round(bar.get_height(), 6) for bar in percent.patches) == sorted(round(v, 6) for v in streaming)


def test_launch_size_only_has_no_percent_of_peak_figure(tmp_path):
    """% of ceiling is about streaming; a run that measured only launch overhead gets one figure."""
    run = recorded("run_481.json")
    run.cases = [c for c in run.cases if not c.bandwidth or c.bandwidth.size == "launch"]
    assert plots.write(run, tmp_path) == [tmp_path / "bandwidth.png"]


def test_no_bandwidth_writes_nothing(tmp_path):
    run = recorded("run_481.json")
    run.cases = [c for c in run.cases if not c.bandwidth]
    assert plots.write(run, tmp_path) == []
    assert list(tmp_path.iterdir()) == []


def test_every_stage_of_the_matrix_has_a_colour_of_its_own():
    """Bars are told apart by colour alone: two stages sharing one would read as one."""
    from fixtures.cases.stages import BUILT_IN_STAGES

    rows = [SimpleNamespace(stage=name) for name in [*BUILT_IN_STAGES, "torch_add", "d2d_copy"]]
    colours = plots._colours(rows)
    assert len(set(colours.values())) == len(colours) == len(BUILT_IN_STAGES) + 2
