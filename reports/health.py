"""A GPU's health over a run, as notes the workers leave in the run's notes folder for the
controller's verdict: a GPU that was there at start and is gone (lost), and a fault storm (too
many device faults in a short time on one GPU, after which nothing more is launched there).

A lost GPU is the runner's fault, not the install's: the run ends with a status and an exit
status of its own (``GPU_LOST_EXIT``), so a CI job can retry it elsewhere.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

GPU_LOST_EXIT = 7  # pytest's own exit statuses are 0-5, and 4 is the harness's usage error
LOST = "GPU LOST"  # how a lost GPU's cases fail, and the verdict line's head
STORM = "not run: fault storm"  # how a stormed GPU's remaining cases fail
# A correct install faults no kernel in the gate; a faulting case costs one worker. Three faults
# within two minutes on one GPU is a kernel (or a GPU) that faults on everything: on an H100
# here, 18 faults from many workers at once left the GPU needing a reset (Xid 119, then 154).
STORM_FAULTS = 3
STORM_WINDOW_S = 120.0


def _write(path: Path, text: str) -> None:
    """Atomically: two workers on one GPU may write the same note."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.{os.getpid()}")
    partial.write_text(text)
    partial.replace(path)


def _read_all(folder: Path) -> dict[str, str]:
    return {p.stem: p.read_text().strip() for p in sorted(folder.glob("*.txt"))} if folder.is_dir() else {}


def record_lost(notes: Path, uuid: str, why: str) -> None:
    _write(notes / "lost" / f"{uuid}.txt", why)


def lost(notes: Path) -> dict[str, str]:
    """Each lost GPU's UUID and what was seen of it."""
    return _read_all(notes / "lost")


def record_fault(notes: Path, uuid: str, now: float | None = None) -> str | None:
    """Count a device fault on ``uuid``; the storm's reason once its faults reach the limit
    within the window (written once, for every worker on that GPU to read)."""
    now = time.time() if now is None else now
    folder = notes / "faults-by-gpu" / uuid
    _write(folder / f"{now:.6f}-{os.getpid()}", "")
    recent = sorted(t for p in folder.iterdir() if not p.name.startswith(".")
                    if now - (t := float(p.name.split("-")[0])) <= STORM_WINDOW_S)
    if len(recent) >= STORM_FAULTS and storm(notes, uuid) is None:
        _write(notes / "storms" / f"{uuid}.txt",
               f"{len(recent)} device faults in {recent[-1] - recent[0]:.0f} s on GPU {uuid} "
               f"(the limit is {STORM_FAULTS} in {STORM_WINDOW_S:.0f} s): nothing more is launched there")
    return storm(notes, uuid)


def storm(notes: Path, uuid: str) -> str | None:
    path = notes / "storms" / f"{uuid}.txt"
    return path.read_text().strip() if path.exists() else None


def storms(notes: Path) -> dict[str, str]:
    """Each stormed GPU's UUID and the storm's reason."""
    return _read_all(notes / "storms")
