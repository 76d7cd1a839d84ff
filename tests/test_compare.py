"""``python -m reports compare``: what changed between two recorded installs, and refusals of bad input."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from reports import __main__ as cli
from reports import compare

pytestmark = pytest.mark.harness

DATA = Path(__file__).parent / "data"
ROOT = Path(__file__).parent.parent
OLD, NEW = DATA / "run_453.json", DATA / "run_481.json"


@pytest.fixture
def text(capsys):
    assert cli.main(["compare", str(OLD), str(NEW)]) == 0
    return capsys.readouterr().out


def section(text: str, title: str) -> list[str]:
    return text.split(f"{title}\n\n", 1)[1].split("\n\n", 1)[0].splitlines()


def test_install_fields_that_differ(text):
    """Only the fingerprint fields that changed, A then B, in the fingerprint's field order."""
    assert section(text, "## Install") == [
        "| field | A | B |", "|---|---|---|",
        "| dsl | 4.5.3 | 4.8.1 |", "| dsl_libs | bundled | cu13 |", "| dsl_cuda | 12.9 | 13.0 |",
        "| torch | 2.9.1 | 2.13.0 |",
    ]


def test_new_failure_names_its_case_and_message(text):
    assert section(text, "### New failures in B (1)") == [
        "- `suites/gpu/test_stages.py::test_stage_matches_torch[predicated-bf16-offset-strided-1000x1003]` "
        "(failed): AssertionError: predicated-bf16-offset-strided-1000x1003: 3 of 1003000 elements differ "
        "from torch (exactly); first at (999, 1000): got 0.0, expected 1.5",
    ]


def test_outcome_changes_per_nodeid(text):
    assert section(text, "### Outcome changes (2)") == [
        "- `suites/compile/test_ptx_access.py::test_ptx_access_widths_and_bytes[tv-bf16-align16-compact-1024x1024]`: "
        "failed → passed",
        "- `suites/gpu/test_stages.py::test_stage_matches_torch[predicated-bf16-offset-strided-1000x1003]`: "
        "passed → failed",
    ]


def test_cases_only_on_one_side(text):
    assert section(text, "### Only in A (1)") == [
        "- `suites/host/test_dlpack.py::test_mark_layout_dynamic_error[leading_dim_legacy]`"]
    only_b = section(text, "### Only in B (4)")
    assert len(only_b) == 4 and all("tuned-" in line for line in only_b)


def test_api_drift_that_changed(text):
    """A capability whose spelling changed is listed; one used the same way on both sides is not."""
    lines = section(text, "## API drift")
    assert ("| make_rmem_tensor | `cutlass.cute.make_fragment` (drifted) | `cutlass.cute.make_rmem_tensor` "
            "| `cutlass.cute.make_rmem_tensor` |") in lines
    assert any(line.startswith("| benchmark |") for line in lines)
    assert not any("DSLBaseError" in line for line in lines)


def test_bandwidth_deltas_flag_beyond_threshold(text):
    """Cases measured on both sides: B against A; new cases (tuned) have nothing to compare with."""
    lines = section(text, "## Bandwidth")
    assert lines[0] == "Flagged: |delta| > 5%. Ceiling (D2D copy): A 3021 GB/s → B 3034 GB/s."
    rows = section(text, "Ceiling (D2D copy): A 3021 GB/s → B 3034 GB/s.")
    assert "| tv_remap | bf16 | bandwidth | 8192x8192 | 2398 | 2141 | -10.7 | **slower** |" in rows
    assert "| predicated | fp32 | bandwidth | 8192x8192 | 2404 | 2655 | +10.4 | faster |" in rows
    assert "| predicated | bf16 | bandwidth | 8192x8192 | 2210 | 2236 | +1.2 |  |" in rows
    assert not any("tuned" in row for row in rows)


def test_threshold_option_widens_the_band(capsys):
    assert cli.main(["compare", str(OLD), str(NEW), "--threshold", "12"]) == 0
    out = capsys.readouterr().out
    assert "Flagged: |delta| > 12%." in out and "slower" not in out and "faster" not in out


def test_same_run_twice_has_nothing_to_report():
    run = compare.load(NEW)
    text = compare.render(run, run, "a", "b")
    assert text.splitlines()[5].startswith("**No changes**: the same install, every case with the same outcome")
    assert "**No changes**" not in compare.render(compare.load(OLD), run, "a", "b")
    assert "Same install fingerprint." in text
    for title in ("### New failures", "### Outcome changes", "### Only in", "## API drift"):
        assert title not in text


@pytest.mark.parametrize("threshold", ["-5", "nan", "inf"])
def test_a_threshold_that_is_no_percentage_is_one_line_and_exit_4(capsys, threshold):
    assert cli.main(["compare", str(OLD), str(NEW), f"--threshold={threshold}"]) == 4
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.startswith(f"reports compare: --threshold {threshold}: a percentage, 0 or more")


def test_a_report_folder_reads_its_results_json(tmp_path, capsys):
    (tmp_path / "results.json").write_text(NEW.read_text())
    assert cli.main(["compare", str(OLD), str(tmp_path)]) == 0
    assert "| dsl | 4.5.3 | 4.8.1 |" in capsys.readouterr().out


def write(tmp_path, text: str) -> Path:
    path = tmp_path / "results.json"
    path.write_text(text)
    return path


@pytest.mark.parametrize(
    ("make", "reason"),
    [
        pytest.param(lambda tmp: tmp / "missing", "missing: no such file", id="missing-path"),
        pytest.param(lambda tmp: tmp, "results.json: no such file", id="folder-without-results"),
        pytest.param(lambda tmp: write(tmp, "{not json"), "results.json: not JSON (", id="malformed-json"),
        pytest.param(lambda tmp: write(tmp, json.dumps({"schema": "cute-dsl-harness/results/99"})),
                     "results.json: unknown schema 'cute-dsl-harness/results/99'", id="wrong-schema"),
        pytest.param(lambda tmp: write(tmp, "[]"), "results.json: expected a JSON object, got list", id="not-object"),
    ],
)
def test_bad_input_is_one_line_and_exit_4(tmp_path, capsys, make, reason):
    """A CI step reading a bad report fails with the reason, not a traceback."""
    assert cli.main(["compare", str(make(tmp_path)), str(NEW)]) == 4
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("reports compare: ") and reason in captured.err
    assert captured.err.count("\n") == 1


def test_module_entry_point(tmp_path):
    """``python -m reports`` is the command a CI step runs: exit 0 with markdown, 4 with one line of usage or a reason."""
    def run(*args):
        return subprocess.run([sys.executable, "-m", "reports", *args], cwd=ROOT, capture_output=True, text=True)

    ok = run("compare", str(OLD), str(NEW))
    assert ok.returncode == 0 and ok.stdout.startswith("# ")
    bare = run()
    assert bare.returncode == 4
    assert bare.stderr == "reports: the following arguments are required: command (see python -m reports --help)\n"
    bad = run("compare", str(tmp_path / "nope"), str(NEW))
    assert bad.returncode == 4 and bad.stderr.count("\n") == 1 and bad.stderr.startswith("reports compare: ")


def test_an_interrupted_run_is_called_partial_before_anything_else(tmp_path, capsys):
    """Cases an interrupted B never ran are gaps, not removals: the answer says so first."""
    cut = {**json.loads(NEW.read_text()), "status": "interrupted", "collected": 40}
    (tmp_path / "cut.json").write_text(json.dumps(cut))
    assert cli.main(["compare", str(OLD), str(tmp_path / "cut.json")]) == 0
    text = capsys.readouterr().out
    assert section(text, "## Partial runs") == [
        "- **B ended interrupted** after 27 of 40 cases (13 not run): cases missing from B were not run, not removed"
    ]
    assert text.index("## Partial runs") < text.index("## Outcomes")
