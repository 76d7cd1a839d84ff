"""A run's report folder written from its ``RunResult``: results.json first (whatever fails after
it, a plot say, the run's record is on disk), then the plots and summary.md. Shared by the
recorder at the end of a run and ``python -m reports merge``."""

from __future__ import annotations

from pathlib import Path

from reports import atomic, plots, summary
from reports.model import RunResult


def write(run: RunResult, folder: Path) -> list[Path]:
    """The files written, images last; a plot that fails becomes a note in the run, never a lost summary."""
    atomic.write_json(folder / "results.json", run.to_json())
    try:
        images = plots.write(run, folder)
    except Exception as exc:  # noqa: BLE001 - a plot must never cost the summary
        images = []
        run.notes.append(f"plots not written: {type(exc).__name__}: {exc}")
        atomic.write_json(folder / "results.json", run.to_json())
    atomic.write_text(folder / "summary.md", summary.render(run, images, folder))
    return [folder / "results.json", folder / "summary.md", *images]
