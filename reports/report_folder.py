"""A report folder claimed for one writer (a run, or ``python -m reports merge --out``) from
its start until its report is written: a folder another writer holds is refused, and so is one
that holds anything, an earlier run's report (never replaced) or files of someone else's (never
overwritten), and so is one inside another writer's folder, or with another writer's inside it
(one report would end inside the other's). An empty folder, or one not there yet, is taken. A path
the file system cannot take (a name or path too long, a file where a folder must be) is one line.

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
AB_RESULTS = "ab.json"  # what every A/B report (``python -m reports ab``) holds


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
    named = f"{option} {_shown(str(chosen))}"
    _check_path(named, folder)
    if folder.exists() and not folder.is_dir():
        raise atomic.NotWritable(f"{named}: exists and is not a folder")
    _check_not_inside_a_held_folder(named, folder)
    made = _missing(folder.parent)
    held = Claim(folder, folder.parent / _claim_name(folder.name), -1, made)
    try:
        folder.parent.mkdir(parents=True, exist_ok=True)
        held.fd = _lock(held.lock, named)
    except OSError as exc:
        held.release()
        raise atomic.NotWritable(f"{named}: cannot write there ({exc.strerror or exc})") from None
    try:
        _check_empty(named, folder)
        existed = folder.exists()
        atomic.writable_dir(option, str(chosen))
        if not existed:  # made again when the report is written (see the module's docstring)
            folder.rmdir()
    except BaseException:
        held.release()
        raise
    return held


def _shown(chosen: str) -> str:
    """A path as a one-line message names it: one too long to be a path by its ends."""
    return chosen if len(chosen) <= 120 else f"{chosen[:60]}...{chosen[-40:]} ({len(chosen)} characters)"


def _check_path(named: str, folder: Path) -> None:
    """A path the file system can take, under folders (not a file): one line for what it cannot."""
    limit = os.pathconf("/", "PC_PATH_MAX")
    if len(os.fsencode(folder)) >= limit:
        raise atomic.NotWritable(f"{named}: a path of {len(os.fsencode(folder))} bytes, longer than this system "
                                 f"takes ({limit - 1})")
    existing = next(p for p in folder.parents if _exists(p))
    if not existing.is_dir():
        raise atomic.NotWritable(f"{named}: {existing} is a file, not a folder, so nothing can be made under it")
    longest = os.pathconf(existing, "PC_NAME_MAX")
    for part in folder.relative_to(existing).parts:
        most = longest - len(_claim_name("")) if part == folder.name else longest  # the claim file's name is longer
        if len(os.fsencode(part)) > most:
            raise atomic.NotWritable(f"{named}: a folder name of {len(os.fsencode(part))} bytes ({part[:16]}...), longer "
                                     f"than this file system takes ({most}" + (f": its claim file, {_claim_name('NAME')}, "
                                     "lies beside it)" if part == folder.name else ")"))


def _exists(path: Path) -> bool:
    try:
        path.stat()
    except OSError:  # not there, under a file, or a name too long to be there
        return False
    return True


def _claim_name(name: str) -> str:
    return f".{name}.claim"


def _held_by_another(lock: Path) -> str | None:
    """Who holds the claim file ``lock`` (its first line), where another process holds it; else None."""
    try:
        fd = os.open(lock, os.O_RDONLY)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return os.pread(fd, 512, 0).decode(errors="replace").strip() or "a process starting"
    finally:
        os.close(fd)  # a shared lock taken here goes with it
    return None


def _check_not_inside_a_held_folder(named: str, folder: Path) -> None:
    """A folder inside another writer's report folder would end inside its report: refused."""
    for outer in folder.parents:
        holder = _held_by_another(outer.parent / _claim_name(outer.name)) if outer != outer.parent else None
        if holder:
            raise FolderTaken(f"{named}: inside {outer}, which another run is writing its report into ({holder}); "
                              "choose a folder outside it")


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
    if AB_RESULTS in entries:
        raise FolderTaken(f"{named}: holds an earlier A/B report ({AB_RESULTS}); choose a new folder, or remove that one first")
    if RESULTS in entries:
        raise FolderTaken(f"{named}: holds the report of an earlier run ({_started(folder / RESULTS)}); "
                          "choose a new folder, or remove that one first")
    inner = [name[1:-len(".claim")] for name in entries if name.startswith(".") and name.endswith(".claim")
             and _held_by_another(folder / name)]
    if inner:
        raise FolderTaken(f"{named}: another run is writing its report inside it ({folder / inner[0]}); "
                          "wait for it to end, or choose another folder")
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

