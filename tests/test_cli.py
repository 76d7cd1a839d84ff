"""Every ``python -m reports`` command exits by the README's table, as a run does: bad input (the
command line itself included) is one line and exit 4, never argparse's 2, which the table reads
as "interrupted: retry"; a file a command could not write is one line and exit 3."""

import errno
import json
import os

import pytest

from reports import __main__ as cli
from reports.model import CaseResult, Fingerprint, RunResult

pytestmark = pytest.mark.harness


def a_run(tmp_path):
    path = tmp_path / "run.json"
    path.write_text(json.dumps(RunResult(fingerprint=Fingerprint(dsl="4.8.1"), arch="sm_90a", started="2026-11-27T10:00:00+00:00",
                                         cases=[CaseResult("t::a", "passed", "host", 0.1)]).to_json()))
    return path


# each command: a command line argparse refuses, and input it refuses once parsed
BAD_INPUT = {
    "compare": (["compare", "RUN"], ["compare", "RUN", "MISSING"]),
    "releases": (["releases"], ["releases", "MISSING"]),
    "merge": (["merge", "RUN"], ["merge", "MISSING", "--out", "OUT"]),
    "forget": (["forget", "RUN"], ["forget", "RUN", "t::*"]),  # a run is no baseline
    "repro": (["repro", "RUN"], ["repro", "RUN", "no-such-case"]),
    "drill": (["drill", "RUN", "--against"], ["drill", "MISSING"]),
    "ab": (["ab", "--a", "RUN"], ["ab", "--a", "MISSING", "--b", "MISSING", "--out", "OUT"]),
}


def _args(args: list[str], tmp_path) -> list[str]:
    where = {"RUN": str(a_run(tmp_path)), "MISSING": str(tmp_path / "missing"), "OUT": str(tmp_path / "out")}
    return [where.get(a, a) for a in args]


@pytest.mark.parametrize("command", BAD_INPUT)
@pytest.mark.parametrize("which", ["command-line", "input"])
def test_bad_input_to_every_command_is_one_line_and_exit_4(tmp_path, capsys, command, which):
    args = BAD_INPUT[command][which == "input"]
    assert cli.main(_args(args, tmp_path)) == 4
    captured = capsys.readouterr()
    (line,) = captured.err.splitlines()
    assert line.startswith(f"reports {command}: ") and captured.out == ""
    if which == "command-line":
        assert line.endswith(f"(see python -m reports {command} --help)")


def test_no_command_or_an_unknown_one_is_one_line_and_exit_4(capsys):
    assert cli.main([]) == 4
    assert cli.main(["bogus"]) == 4
    lines = capsys.readouterr().err.splitlines()
    assert lines[0] == "reports: the following arguments are required: command (see python -m reports --help)"
    assert lines[1].startswith("reports: argument command: invalid choice: 'bogus'") and len(lines) == 2


def test_help_still_exits_0(capsys):
    with pytest.raises(SystemExit) as exited:
        cli.main(["merge", "--help"])
    assert exited.value.code == 0 and capsys.readouterr().out.startswith("usage: python -m reports merge")


def test_a_file_a_command_cannot_write_is_one_line_and_exit_3(tmp_path, capsys, monkeypatch):
    """A full disk as the merged report is written: exit 3 (retry), naming the file; nothing torn left."""
    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fsync", full)
    assert cli.main(["merge", str(a_run(tmp_path)), "--out", str(tmp_path / "out")]) == 3
    (line,) = capsys.readouterr().err.splitlines()
    assert line == f"reports merge: not written: {tmp_path / 'out' / 'results.json'}: No space left on device"
    assert list((tmp_path / "out").iterdir()) == []
