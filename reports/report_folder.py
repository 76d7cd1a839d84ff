"""A report folder claimed for one writer (a run, or ``python -m reports merge --out``) from
its start until its report is written: a folder another writer holds is refused, and so is one
that holds anything, an earlier run's report (never replaced) or files of someone else's (never
overwritten). An empty folder, or one not there yet, is taken.

The claim is an exclusive ``flock`` on ``.<name>.claim`` beside the folder, taken before the
folder is looked into, so two writers never both find it free. It lies beside the folder, not in
it: the folder must not exist while a run goes on (an xdist worker's first pass over
``--report-dir PATH`` takes an existing PATH for a test path), and a lock dies with its process,
so a killed run's claim never needs clearing by hand.
"""

from __future__ import annotations

import datetime as dt
import fcntl
import json
import os
import socket
from dataclasses import dataclass, field
from pathlib import Path

from reports import atomic
from reports.usage import HarnessUsageError

RESULTS = "results.json"  # what every report holds, written first: a folder with one holds a report


class FolderTaken(HarnessUsageError):
    """A report folder that another writer holds, or that holds files, with the one-line reason."""


@dataclass
class Claim:
    """A report folder held by this process until ``release``."""

    folder: Path
    lock: Path  # the claim file beside it
    fd: int  # the open, locked claim file; -1 once released
    made: list[Path] = field(default_factory=list)  # folders made to hold the claim file, deepest first

    def release(self) -> None:
        """Let the folder go (a second time: nothing more); folders made to hold the claim file
        go too, while nothing was written in them."""
        if self.fd >= 0:
            self.lock.unlink(missing_ok=True)  # only its holder unlinks it
            os.close(self.fd)
            self.fd = -1
        for folder in self.made:
            try:
                folder.rmdir()
            except OSError:  # the report is in it
                break
        self.made = []


def claim(option: str, chosen: str | Path) -> Claim:
    """``chosen`` held for this process, checked as above and proven to take files; a
    ``HarnessUsageError`` (``option`` and ``chosen`` first) says in one line why not."""
    folder = Path(chosen).expanduser().resolve()
    if folder.exists() and not folder.is_dir():
        raise atomic.NotWritable(f"{option} {chosen}: exists and is not a folder")
    made = _missing(folder.parent)
    held = Claim(folder, folder.parent / f".{folder.name}.claim", -1, made)
    try:
        folder.parent.mkdir(parents=True, exist_ok=True)
        held.fd = _lock(held.lock, f"{option} {chosen}")
    except OSError as exc:
        held.release()
        raise atomic.NotWritable(f"{option} {chosen}: cannot write there ({exc.strerror or exc})") from None
    try:
        _check_empty(f"{option} {chosen}", folder)
        existed = folder.exists()
        atomic.writable_dir(option, str(chosen))
        if not existed:  # made again when the report is written (see the module's docstring)
            folder.rmdir()
    except BaseException:
        held.release()
        raise
    return held


def _lock(path: Path, named: str) -> int:
    """The claim file at ``path`` opened and locked (the file still at ``path`` once locked: a
    holder releasing it unlinks it); ``FolderTaken`` while another process holds it."""
    for _ in range(3):
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 512, 0).decode(errors="replace").strip() or "a process starting"
            os.close(fd)
            raise FolderTaken(f"{named}: another run is writing its report there ({holder}); "
                              "wait for it to end, or choose another folder") from None
        if _same_file(path, fd):
            stamp = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"pid {os.getpid()} on {socket.gethostname()}, since {stamp}\n".encode(), 0)
            return fd
        os.close(fd)  # locked the file of a claim that was being released: take the new one
    raise FolderTaken(f"{named}: its claim ({path}) keeps changing hands; try again")


def _same_file(path: Path, fd: int) -> bool:
    try:
        return os.path.samestat(os.stat(path), os.fstat(fd))
    except FileNotFoundError:
        return False


def _check_empty(named: str, folder: Path) -> None:
    """Refuse a folder that holds anything: an earlier run's report, or files no run wrote."""
    entries = sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []
    if RESULTS in entries:
        raise FolderTaken(f"{named}: holds the report of an earlier run ({_started(folder / RESULTS)}); "
                          "choose a new folder, or remove that one first")
    if entries:
        shown = ", ".join(entries[:3]) + (f" and {len(entries) - 3} more" if len(entries) > 3 else "")
        raise FolderTaken(f"{named}: holds files that are not a run's report ({shown}), never overwritten; "
                          "choose an empty or new folder")


def _started(results: Path) -> str:
    """When the run whose ``results.json`` this is started, as far as it says."""
    try:
        return f"started {json.loads(results.read_text())['started']}"
    except (OSError, ValueError, KeyError, TypeError):
        return RESULTS


def _missing(path: Path) -> list[Path]:
    """``path`` and its ancestors that do not exist yet, deepest first."""
    missing = []
    while not path.exists() and path != path.parent:
        missing.append(path)
        path = path.parent
    return missing

