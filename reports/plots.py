"""``bandwidth.png`` and ``pct_ceiling.png``: a run's bench tier as pictures for the job summary."""

from __future__ import annotations

import io
from pathlib import Path

from reports import atomic
from reports.model import REFERENCE_STAGES, SIZES, BandwidthRecord, RunResult

DPI = 110
REFERENCE_COLOURS = {"torch_add": "#7f7f7f", "d2d_copy": "#c7c7c7"}  # greys: not DSL kernels
SLOWER_COLOUR = "#d62728"


def write(run: RunResult, folder: Path) -> list[Path]:
    """The figures written into ``folder``; none when no case measured a bandwidth."""
    return [_save(fig, folder / name) for name, fig in figures(run).items()]


def figures(run: RunResult) -> dict:
    """``{file name: matplotlib Figure}``: bandwidth per size, and % of the ceiling at the
    streaming size; empty when no case measured a bandwidth."""
    rows = [c.bandwidth for c in run.bench_cases()]
    if not rows:
        return {}
    import matplotlib

    matplotlib.use("Agg")  # no display on a CI runner
    from matplotlib.figure import (
        Figure,  # not pyplot: nothing global keeps figures alive
    )

    colours = _colours(rows)
    sizes = list(dict.fromkeys(b.size for b in rows))
    made = {}

    fig = Figure(figsize=(6 + 3 * len(sizes), 4.8), layout="constrained")
    axes = fig.subplots(1, len(sizes), squeeze=False)[0]
    for ax, size in zip(axes, sizes):
        sized = [b for b in rows if b.size == size]
        _bars(ax, sized, "gbps", colours, baseline_key="baseline_gbps")
        shapes = sorted({"x".join(map(str, b.shape)) for b in sized})
        ax.set_title(f"{size} ({', '.join(shapes)}){_reference_lines(ax, sized)}")
        ax.set_ylabel("GB/s")
    _legend(fig, axes[-1], rows, colours)
    made["bandwidth.png"] = fig

    streaming = [b for b in rows if b.size == SIZES[0]]
    if streaming:
        fig = Figure(figsize=(8, 4.8), layout="constrained")
        ax = fig.subplots()
        _bars(ax, streaming, "pct_ceiling", colours)
        ax.axhline(100, color="black", linestyle="--", linewidth=1, label="ceiling (D2D copy) = 100%")
        ax.set_title(f"% of the D2D copy ceiling ({SIZES[0]} size)")
        ax.set_ylabel("% of ceiling")
        _legend(fig, ax, streaming, colours)
        made["pct_ceiling.png"] = fig
    return made


def _colours(rows: list[BandwidthRecord]) -> dict[str, str]:
    """One colour per stage, the same in both figures; reference rows in grey."""
    palette = ["#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#bcbd22", "#17becf",
               "#393b79", "#637939", "#e7ba52", "#843c39"]
    stages = [s for s in dict.fromkeys(b.stage for b in rows) if s not in REFERENCE_STAGES]
    return {s: palette[i % len(palette)] for i, s in enumerate(stages)} | REFERENCE_COLOURS


def _bars(ax, rows: list[BandwidthRecord], key: str, colours: dict[str, str], baseline_key: str | None = None) -> None:
    """Grouped bars: x = dtype, one bar per stage; slower-than-baseline bars hatched with a red edge."""
    dtypes = list(dict.fromkeys(b.dtype for b in rows))
    stages = list(dict.fromkeys(b.stage for b in rows))
    width = 0.8 / len(stages)
    for i, stage in enumerate(stages):
        for b in (b for b in rows if b.stage == stage):
            x = dtypes.index(b.dtype) - 0.4 + width * (i + 0.5)
            slower = b.verdict == "slower"
            ax.bar(x, getattr(b, key), width, color=colours[stage],
                   edgecolor=SLOWER_COLOUR if slower else "none", linewidth=1.5 if slower else 0,
                   hatch="//" if slower else None)
            if baseline_key and getattr(b, baseline_key) is not None:
                ax.plot(x, getattr(b, baseline_key), marker="_", markersize=60 * width, markeredgewidth=2,
                        color="black", label="baseline")
    ax.set_xticks(range(len(dtypes)), dtypes)
    ax.grid(axis="y", alpha=0.3)
    ax.set_axisbelow(True)


def _reference_lines(ax, rows: list[BandwidthRecord]) -> str:
    """The copy ceiling and spec peak where the bars reach their scale; else a note for the title."""
    ceiling = max(b.ceiling_gbps for b in rows)
    peaks = {b.spec_peak_gbps for b in rows} - {None}
    if max(b.gbps for b in rows) < 0.25 * ceiling:  # launch-bound: the lines would flatten the bars
        return f"\nceiling {ceiling:.0f} GB/s off scale"
    ax.axhline(ceiling, color="black", linestyle="--", linewidth=1, label=f"ceiling (D2D copy) {ceiling:.0f} GB/s")
    for peak in peaks:
        ax.axhline(peak, color="black", linestyle=":", linewidth=1, label=f"spec peak {peak:.0f} GB/s")
    return ""


def _legend(fig, ax, rows: list[BandwidthRecord], colours: dict[str, str]) -> None:
    """Stages, the slower marking and every labelled line once, outside the plotting area."""
    from matplotlib.patches import Patch

    entries: dict[str, object] = {s: Patch(color=colours[s]) for s in dict.fromkeys(b.stage for b in rows)}
    if any(b.verdict == "slower" for b in rows):
        entries["slower than baseline"] = Patch(facecolor="white", edgecolor=SLOWER_COLOUR, hatch="//")
    for axis in fig.axes:
        for handle, label in zip(*axis.get_legend_handles_labels()):
            entries.setdefault(label, handle)
    ax.legend(entries.values(), entries.keys(), loc="upper left", bbox_to_anchor=(1.01, 1), fontsize=8,
              frameon=False)


def _save(fig, path: Path) -> Path:
    """The PNG rendered in memory, then written atomically: a reader never sees half a PNG."""
    png = io.BytesIO()
    fig.savefig(png, format="png", dpi=DPI)
    atomic.write_bytes(path, png.getvalue())
    return path
