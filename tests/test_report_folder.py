"""A report folder is claimed for one writer: an earlier report and someone else's files are
refused, a folder another writer holds is refused, and a claim goes with its holder."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from reports import report_folder
from reports.report_folder import FolderTaken

pytestmark = pytest.mark.harness

ROOT = Path(__file__).resolve().parents[1]


def test_a_new_folder_is_claimed_without_being_made_and_let_go_without_a_trace(tmp_path):
    """While a run goes on its report folder does not exist (xdist workers would take it for a
    test path); the claim beside it goes at release, with the folders made to hold it."""
    held = report_folder.claim("--report-dir", tmp_path / "a" / "b" / "out")
    assert held.folder == tmp_path / "a" / "b" / "out" and not held.folder.exists()
    assert held.lock == tmp_path / "a" / "b" / ".out.claim" and held.lock.exists()
    held.release()
    held.release()
    assert list(tmp_path.iterdir()) == []


def test_the_folders_a_report_was_written_into_stay(tmp_path):
    held = report_folder.claim("--report-dir", tmp_path / "a" / "out")
    (held.folder).mkdir()
    (held.folder / "results.json").write_text("{}")
    held.release()
    assert [p.name for p in (tmp_path / "a").iterdir()] == ["out"]


def test_a_second_writer_is_refused_while_the_first_holds_the_folder_then_finds_its_report(tmp_path):
    out = tmp_path / "out"
    first = report_folder.claim("--report-dir", out)
    with pytest.raises(FolderTaken) as refused:
        report_folder.claim("--report-dir", out)
    assert str(refused.value).startswith(f"--report-dir {out}: another run is writing its report there (pid ")
    assert str(refused.value).endswith("); wait for it to end, or choose another folder")
    out.mkdir()
    (out / "results.json").write_text(json.dumps({"started": "2026-11-27T10:00:00+00:00"}))
    first.release()
    with pytest.raises(FolderTaken, match=r"holds the report of an earlier run \(started 2026-11-27T10:00:00\+00:00\)"):
        report_folder.claim("--report-dir", out)


def test_a_killed_writers_claim_holds_nothing(tmp_path):
    """A run killed outright leaves its claim file; the lock went with the process."""
    code = f"from reports import report_folder; report_folder.claim('--report-dir', {str(tmp_path / 'out')!r}); import os; os._exit(9)"
    subprocess.run([sys.executable, "-c", code], check=False, cwd=ROOT)
    assert (tmp_path / ".out.claim").exists()
    report_folder.claim("--report-dir", tmp_path / "out").release()


@pytest.mark.parametrize(
    ("files", "shown"),
    [
        pytest.param(["summary.md"], "summary.md", id="summary"),
        pytest.param(["junit.xml"], "junit.xml", id="junit"),
        pytest.param(["notes.txt", "a.png", ".hidden", "z"], ".hidden, a.png, notes.txt and 1 more", id="anything"),
    ],
)
def test_files_that_are_not_a_report_are_refused_and_left_alone(tmp_path, files, shown):
    for name in files:
        (tmp_path / "out").mkdir(exist_ok=True)
        (tmp_path / "out" / name).write_text("mine\n")
    with pytest.raises(FolderTaken) as refused:
        report_folder.claim("--out", tmp_path / "out")
    assert str(refused.value) == (f"--out {tmp_path / 'out'}: holds files that are not a run's report ({shown}), "
                                  "never overwritten; choose an empty or new folder")
    assert all((tmp_path / "out" / name).read_text() == "mine\n" for name in files)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_an_empty_folder_is_taken(tmp_path):
    report_folder.claim("--report-dir", tmp_path).release()
    assert tmp_path.is_dir()


def test_a_folder_inside_or_around_one_another_writer_holds_is_refused(tmp_path):
    """A run on runs/outer/inner while another held runs/outer: both passed, one report nested
    inside the other's folder, no word."""
    outer = report_folder.claim("--report-dir", tmp_path / "outer")
    with pytest.raises(FolderTaken) as refused:
        report_folder.claim("--report-dir", tmp_path / "outer" / "inner")
    assert str(refused.value).startswith(f"--report-dir {tmp_path / 'outer' / 'inner'}: inside {tmp_path / 'outer'}, "
                                         "which another run is writing its report into (pid ")
    outer.release()
    inner = report_folder.claim("--report-dir", tmp_path / "outer" / "inner")
    with pytest.raises(FolderTaken, match=r": another run is writing its report inside it \(.*/outer/inner\)"):
        report_folder.claim("--report-dir", tmp_path / "outer")
    inner.release()


@pytest.mark.parametrize(
    ("chosen", "refusal"),
    [
        pytest.param("x" * 300, "a folder name of 300 bytes (xxxxxxxxxxxxxxxx...), longer than this file system takes (248: "
                     "its claim file, .NAME.claim, lies beside it)", id="name-too-long"),
        pytest.param("y/" * 2100, "a path of ", id="path-too-long"),
        pytest.param("a_file/out", "{tmp}/a_file is a file, not a folder, so nothing can be made under it", id="under-a-file"),
    ],
)
def test_a_path_the_file_system_cannot_take_is_one_line(tmp_path, monkeypatch, chosen, refusal):
    """These were an INTERNALERROR (File name too long), exit 3, and "File exists" for a folder under a file."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a_file").write_text("")
    with pytest.raises(report_folder.atomic.NotWritable) as refused:
        report_folder.claim("--report-dir", chosen)
    (line,) = str(refused.value).splitlines()
    assert line.startswith("--report-dir ") and len(line) < 400
    assert refusal.format(tmp=tmp_path) in line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a_file"]
