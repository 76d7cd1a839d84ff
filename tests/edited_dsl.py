"""An edited install of the DSL, as a planted-edit test needs one: the installed DSL copied into a
fresh virtual environment (its folders made anew, its files linked, the edited sources and its
``dist-info`` folders copied), every other package of this interpreter seen as it is, and the
``RECORD`` rows as shipped or rewritten to match the edits."""

from __future__ import annotations

import base64
import csv
import hashlib
import io
import os
import shutil
import subprocess
import sys
import sysconfig
import venv
from dataclasses import dataclass
from pathlib import Path

from fixtures.plugin import install

ROOT = Path(__file__).resolve().parents[1]
OUTER_PTH = "outer-interpreter.pth"  # in the copy's site folder: this interpreter's other import folders


@dataclass(frozen=True)
class Edit:
    """``old``, found once in ``file`` (a path as the DSL's ``RECORD`` lists it), becomes ``new``."""
    file: str
    old: str
    new: str


def digest(path: Path) -> str:
    """``path``'s hash as a ``RECORD`` row writes it."""
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(path.read_bytes()).digest()).rstrip(b"=").decode()


def _mirror(source: Path, target: Path) -> None:
    """``source``'s folders made anew under ``target``, each file a link to its own."""
    for folder, _, names in os.walk(source):
        made = target / Path(folder).relative_to(source)
        made.mkdir()
        for name in names:
            (made / name).symlink_to(Path(folder) / name)


def _outer_folders(source: Path) -> list[str]:
    """This interpreter's import folders the copy must see after its own: a venv over system packages,
    a DSL staged on ``PYTHONPATH`` beside a venv's torch (a GPU runner's). Not the DSL's folder (the
    copy holds it), the checkout or the standard library."""
    skipped = {Path(sysconfig.get_path(k)).resolve() for k in ("stdlib", "platstdlib")} | {ROOT}
    folders = []
    for entry in sys.path:
        path = Path(entry or ".").resolve()
        if path.is_dir() and path not in skipped and path != source and source not in path.parents and entry not in folders:
            folders.append(entry)
    return folders


class EditedDsl:
    """A virtual environment whose DSL is this one's with ``edits`` made: ``python`` runs it;
    ``records(rewritten)`` puts the edited files' ``RECORD`` rows as they now hash, or as shipped."""

    def __init__(self, folder: Path, edits: tuple[Edit, ...]):
        dsl = install.dsl_distributions(install.installed())
        assert dsl, "no DSL installed"
        source = Path(dsl[0].locate_file("")).resolve()  # the site folder holding the DSL
        owned = {file.parts[0] for dist in dsl for file in dist.files or [] if file.parts[0] != ".."}
        venv.EnvBuilder(symlinks=True).create(folder)
        self.edits = edits
        self.python = folder / "bin" / "python"
        self.site = folder / Path(sysconfig.get_path("purelib")).relative_to(sysconfig.get_path("data"))
        for entry in source.iterdir():
            if entry.name not in owned:
                (self.site / entry.name).symlink_to(entry)  # every other package, as installed here
            elif entry.name.endswith(".dist-info"):
                shutil.copytree(entry, self.site / entry.name)  # RECORD written here, not there
            elif entry.is_dir():
                _mirror(entry, self.site / entry.name)
            else:
                (self.site / entry.name).symlink_to(entry)
        # each as a site folder (its own .pth files read), after the copy's: the edited DSL comes first
        (self.site / OUTER_PTH).write_text("".join(f"import site; site.addsitedir({f!r})\n" for f in _outer_folders(source)))
        for dist in install.installed():  # what the copied packages' RECORDs list outside it (run-iket, torchrun)
            if Path(dist.locate_file("")).resolve() == source:
                for file in dist.files or []:
                    there, here = Path(file.locate()), Path(os.path.normpath(self.site / file))
                    if file.parts[0] == ".." and there.exists() and not os.path.lexists(here):
                        here.parent.mkdir(parents=True, exist_ok=True)
                        here.symlink_to(there)
        self.shipped = {p: p.read_text() for p in self.site.glob("*.dist-info/RECORD")}
        for edit in edits:
            target = self.site / edit.file
            text = target.read_text()
            assert text.count(edit.old) == 1, f"the DSL's {edit.file} no longer holds the text this edit replaces: {edit.old!r}"
            if target.is_symlink():  # never write through a link into the install
                target.unlink()
                (target.parent / "__pycache__" / f"{target.stem}.{sys.implementation.cache_tag}.pyc").unlink(missing_ok=True)
            target.write_text(text.replace(edit.old, edit.new))

    def records(self, rewritten: bool) -> None:
        """Each ``RECORD`` as shipped, or with the edited files' rows as they now hash."""
        edited = {edit.file for edit in self.edits}
        for record, text in self.shipped.items():
            if rewritten:
                rows = [[row[0], digest(self.site / row[0]), str((self.site / row[0]).stat().st_size)] if row[0] in edited
                        else row for row in csv.reader(io.StringIO(text))]
                out = io.StringIO()
                csv.writer(out, lineterminator="\n").writerows(rows)
                text = out.getvalue()
            record.write_text(text)

    def pytest(self, *args: str, dropped: tuple[str, ...] = ("PYTEST", "PYTHONPATH", "VIRTUAL_ENV")) -> subprocess.CompletedProcess:
        """pytest in this environment from the checkout, one process (``-n 0``), with ``args``; the
        variables starting with ``dropped`` left out (the copy's own folders are what it sees)."""
        env = {k: v for k, v in os.environ.items() if not k.startswith(dropped)}
        return subprocess.run([self.python, "-m", "pytest", "-p", "no:randomly", "-n", "0", "-q", *args],
                              cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
