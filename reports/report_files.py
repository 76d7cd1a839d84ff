"""A run's report folder written from its ``RunResult``: results.json first (whatever fails after
it, a plot say, the run's record is on disk), junit.xml, then the plots and summary.md, each file
whole or not at all (``atomic``). Shared by the recorder at the end of a run and ``python -m
reports merge``."""

from __future__ import annotations

from pathlib import Path

from reports import atomic, plots, summary
from reports.model import RunResult


def write(run: RunResult, folder: Path, junit: bytes | None) -> list[Path]:
    """The files written, images last; a plot that fails becomes a note in the run, never a lost
    summary. ``junit``: junit.xml's bytes (pytest's, or a merge's), None for none. An ``OSError``
    (a full disk) names the file it could not write; the files before it stay whole."""
    atomic.write_json(folder / "results.json", run.to_json())
    written = [folder / "results.json"]
    if junit is not None:
        atomic.write_bytes(folder / "junit.xml", junit)
        written.append(folder / "junit.xml")
    try:
        images = plots.write(run, folder)
    except Exception as exc:  # noqa: BLE001 - a plot must never cost the summary
        images = []
        run.notes.append(f"plots not written: {type(exc).__name__}: {exc}")
        atomic.write_json(folder / "results.json", run.to_json())
    atomic.write_text(folder / "summary.md", summary.render(run, images, folder))
    return [*written, folder / "summary.md", *images]
