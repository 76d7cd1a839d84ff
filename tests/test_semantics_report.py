"""The semantics family's meanings in the reports: summary.md's table, compare's one line per
changed meaning, the release table's rows per release; and results.json keeping them."""

import json
from pathlib import Path

import pytest

from reports import compare, release_table, semantics, summary
from reports.model import Meaning, RunResult

pytestmark = pytest.mark.harness

DATA = Path(__file__).parent / "data"
MOD = "% on operands of different signs"
C_RULE, PY_RULE = "C: the sign of the dividend (torch.fmod)", "Python: the sign of the divisor (torch.remainder)"


def _run(dsl: str, mod_rule: str, tmp_path: Path) -> RunResult:
    """The recorded 4.8.1 run, its dsl and its meanings replaced: ``%`` on Int8 as ``mod_rule``."""
    data = json.loads((DATA / "run_481.json").read_text())
    data["fingerprint"]["dsl"] = dsl
    data["cases"][0]["semantics"] = [
        {"subject": MOD, "type": "Int8", "path": "gpu", "meaning": mod_rule},
        {"subject": MOD, "type": "Int8", "path": "host", "meaning": C_RULE},
        {"subject": "float to integer, out of range and NaN", "type": "Float32 to Int8", "path": "gpu",
         "meaning": "saturates: nan -> 0, 172.0 -> 127"},
    ]
    path = tmp_path / f"{dsl}.json"
    path.write_text(json.dumps(data))
    return compare.load(path)


def test_results_json_keeps_the_meanings(tmp_path):
    run = _run("4.8.1", C_RULE, tmp_path)
    assert Meaning(MOD, "Int8", "gpu", C_RULE) in run.cases[0].semantics
    assert RunResult.from_json(json.loads(json.dumps(run.to_json()))).cases[0].semantics == run.cases[0].semantics


def test_compare_shows_a_changed_meaning_as_one_line(tmp_path):
    a, b = _run("4.8.1", C_RULE, tmp_path), _run("4.9.0", PY_RULE, tmp_path)
    text = compare.render(a, b, "A", "B")
    changed = [line for line in text.splitlines() if "→" in line and MOD in line]
    assert changed == [f"- {MOD}, Int8 (gpu): {C_RULE} → {PY_RULE}"]
    assert "Changed meanings (1)" in text
    assert "Changed meanings" not in compare.render(a, a, "A", "A")


def test_a_changed_meaning_alone_is_a_change(tmp_path):
    """The same install and outcomes (a GPU of another driver, say), one meaning different: not "No changes"."""
    a = _run("4.8.1", C_RULE, tmp_path)
    (tmp_path / "b").mkdir()
    b = _run("4.8.1", PY_RULE, tmp_path / "b")
    text = compare.render(a, b, "A", "B")
    assert "**No changes**" not in text and "Changed meanings (1)" in text
    assert "**No changes**" in compare.render(a, a, "A", "A")


def test_summary_has_the_meanings_table(tmp_path):
    text = summary.render(_run("4.8.1", C_RULE, tmp_path))
    assert f"| {MOD} | Int8 | {C_RULE} | {C_RULE} |" in text
    assert "| float to integer, out of range and NaN | Float32 to Int8 | saturates: nan -> 0, 172.0 -> 127 |  |" in text


def test_release_table_marks_the_row_that_changed(tmp_path):
    table = release_table.render([_run("4.8.1", C_RULE, tmp_path), _run("4.9.0", PY_RULE, tmp_path)])
    rows = [line for line in table.splitlines() if line.startswith(f"| {MOD}")]
    assert f"| {MOD} ⚠ | Int8 | gpu | {C_RULE} | {PY_RULE} |" in rows
    assert f"| {MOD} | Int8 | host | {C_RULE} | {C_RULE} |" in rows
    assert "| float to integer, out of range and NaN | Float32 to Int8 | gpu | saturates | saturates |" in table


def test_a_run_without_the_family_adds_nothing(tmp_path):
    run = compare.load(DATA / "run_481.json")
    assert semantics.section(run) == [] and semantics.changes(run, run) == []
    assert semantics.release_section([("4.8.1", run)]) == ""
