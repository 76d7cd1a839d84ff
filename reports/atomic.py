"""Write a file so that readers see the old content or the new, never a torn one (every report
file, baseline and table the harness writes goes through here); and check, before a run starts,
that the places it will write to take files."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from reports.usage import HarnessUsageError


def write_bytes(path: Path, data: bytes) -> None:
    """Write beside ``path``, then rename over it; nothing of a write that fails stays behind, and
    its ``OSError`` names ``path`` (a full disk's names no file of its own)."""
    tmp = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        with os.fdopen(fd, "wb") as out:
            os.fchmod(fd, 0o666 & ~_umask())  # mkstemp's 0600 would make reports private
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except BaseException as exc:
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)
        if isinstance(exc, OSError):
            raise OSError(exc.errno, exc.strerror or str(exc), str(path)) from exc
        raise


def failure(exc: OSError) -> str:
    """A failed write in one line: the file, then why (``No space left on device``)."""
    where = f"{exc.filename}: " if exc.filename else ""
    return where + (exc.strerror or str(exc))


def write_text(path: Path, text: str) -> None:
    write_bytes(path, text.encode("utf-8"))


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current


def write_json(path: Path, data) -> None:
    write_text(path, json.dumps(data, indent=2, sort_keys=True) + "\n")


class NotWritable(HarnessUsageError):
    """A place a report or baseline cannot be written to, with the one-line reason."""


def _takes_files(option: str, chosen, folder: Path) -> None:
    """A new file can be created in ``folder`` (what ``write_text`` needs), or ``NotWritable``."""
    try:
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as exc:
        where = "there" if Path(chosen).expanduser().resolve() == folder else f"in {folder}"
        raise NotWritable(f"{option} {chosen}: cannot write {where} ({exc.strerror or exc})") from None


def writable_dir(option: str, chosen: str) -> Path:
    """``chosen`` as a folder this process can write into (created if missing)."""
    path = Path(chosen).expanduser().resolve()
    if path.exists() and not path.is_dir():
        raise NotWritable(f"{option} {chosen}: exists and is not a folder")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise NotWritable(f"{option} {chosen}: cannot write there ({exc.strerror or exc})") from None
    _takes_files(option, chosen, path)
    return path


def writable_file(option: str, chosen: Path, replace: bool = True) -> Path:
    """``chosen`` as a file ``write_text`` can write: in an existing folder that takes new files,
    and (``replace=False``) not there yet."""
    if chosen.is_dir():
        raise NotWritable(f"{option} {chosen}: is a folder, expected a file")
    if not replace and chosen.exists():
        raise NotWritable(f"{option} {chosen}: exists, and is never replaced (remove it, or choose another name)")
    if not chosen.parent.is_dir():
        raise NotWritable(f"{option} {chosen}: folder {chosen.parent} does not exist")
    _takes_files(option, chosen, chosen.parent)
    return chosen
