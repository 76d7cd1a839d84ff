"""``python -m reports releases``: the release table the README carries, built from recorded runs."""

import json
from pathlib import Path

import pytest

from reports import __main__ as cli
from reports import release_table
from reports.compare import load

pytestmark = pytest.mark.harness

DATA = Path(__file__).parent / "data"
OLD, NEW = DATA / "run_453.json", DATA / "run_481.json"


def test_a_row_per_release_oldest_first_a_column_per_tier_exercised():
    table = release_table.render([load(NEW), load(OLD)]).splitlines()
    assert table[0] == "| DSL | torch | host | compile | gpu | bench |"
    assert [row.split(" | ")[0] for row in table[2:]] == ["| 4.5.3", "| 4.8.1"]
    assert table[2] == f"| 4.5.3 | {load(OLD).fingerprint.torch.split('+')[0]} | ✅ 3 · xfail 1 | ❌ 1/4 | ✅ 6 · xfail 1 | ✅ 9 |"


def test_a_row_per_torch_release_of_one_dsl_release(tmp_path):
    """The torch axis: the same DSL release on two torch releases is two rows; two builds of one
    torch release (CPU and CUDA) are one."""
    data = json.loads(NEW.read_text())
    for name, torch in (("a", "2.13.0+cpu"), ("b", "2.15.0+cu132"), ("c", "2.15.0")):
        (tmp_path / f"{name}.json").write_text(json.dumps({**data, "fingerprint": {**data["fingerprint"], "torch": torch}}))
    table = release_table.render([load(tmp_path / f"{n}.json") for n in "cba"]).splitlines()
    assert [row.split(" | ")[:2] for row in table[2:4]] == [["| 4.8.1", "2.13.0"], ["| 4.8.1", "2.15.0"]]
    assert len([row for row in table if row.startswith("| 4.8.1")]) == 2


def test_runs_of_one_release_merge_into_its_row(tmp_path):
    """A CPU run (host, compile) and a GPU run of the same release fill one row together."""
    data = json.loads(NEW.read_text())
    gpu_only = {**data, "cases": [c for c in data["cases"] if c["tier"] == "gpu"]}
    cpu_only = {**data, "cases": [c for c in data["cases"] if c["tier"] != "gpu"]}
    paths = [tmp_path / "gpu.json", tmp_path / "cpu.json"]
    for path, doc in zip(paths, (gpu_only, cpu_only)):
        path.write_text(json.dumps(doc))
    assert release_table.render([load(p) for p in paths]) == release_table.render([load(NEW)])


def test_a_cpu_runs_skipped_gpu_cases_give_way_to_the_gpu_run(tmp_path):
    data = json.loads(NEW.read_text())
    cpu = {**data, "cases": [{**c, "outcome": "skipped"} if c["tier"] == "gpu" else c for c in data["cases"]]}
    gpu = {**data, "cases": [c for c in data["cases"] if c["tier"] == "gpu"]}
    (tmp_path / "cpu.json").write_text(json.dumps(cpu))
    (tmp_path / "gpu.json").write_text(json.dumps(gpu))
    merged = release_table.render([load(tmp_path / "cpu.json"), load(tmp_path / "gpu.json")])
    assert merged == release_table.render([load(NEW)])
    only_cpu = release_table.render([load(tmp_path / "cpu.json")]).splitlines()[2]
    assert "| skip 9 |" in only_cpu


def test_update_rewrites_only_between_the_markers(tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text(f"# Title\n\nbefore\n{release_table.START}\nold table\n{release_table.END}\nafter\n")
    release_table.update(readme, "| DSL |\n")
    assert readme.read_text() == f"# Title\n\nbefore\n{release_table.START}\n| DSL |\n{release_table.END}\nafter\n"
    assert [p.name for p in tmp_path.iterdir()] == ["README.md"]


def test_command_updates_and_prints(tmp_path, capsys):
    readme = tmp_path / "README.md"
    readme.write_text(f"{release_table.START}\n{release_table.END}\n")
    assert cli.main(["releases", str(OLD), str(NEW), "--update", str(readme)]) == 0
    table = capsys.readouterr().out
    assert readme.read_text() == f"{release_table.START}\n{table}{release_table.END}\n"


@pytest.mark.parametrize("bad", ["missing-run", "no-markers"])
def test_bad_input_is_one_line_and_touches_nothing(tmp_path, capsys, bad):
    readme = tmp_path / "README.md"
    readme.write_text("no markers here\n")
    run = tmp_path / "nope.json" if bad == "missing-run" else NEW
    assert cli.main(["releases", str(run), "--update", str(readme)]) == 4
    err = capsys.readouterr().err.strip()
    assert err.startswith("reports releases: ") and "\n" not in err
    assert ("no such file" if bad == "missing-run" else "no release table markers") in err
    assert readme.read_text() == "no markers here\n"


def _variant(tmp_path, name: str, **changes) -> Path:
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps({**json.loads(NEW.read_text()), **changes}))
    return path


def test_two_runs_of_one_release_never_sum_the_newer_complete_one_is_shown(tmp_path):
    """Two full runs of 4.8.1 (a re-run): the row shows one of them, and a note names the other."""
    older = _variant(tmp_path, "older", started="2026-01-01T00:00:00+00:00", finished="2026-01-01T01:00:00+00:00")
    newer = _variant(tmp_path, "newer", started="2026-01-02T00:00:00+00:00", finished="2026-01-02T01:00:00+00:00")
    text = release_table.render([load(older), load(newer)])
    table, notes = text.split("\n\n")
    assert table + "\n" == release_table.render([load(NEW)])
    assert "- 4.8.1 (torch 2.13.0) gpu: 2 runs; shown: the run started 2026-01-02T00:00:00+00:00, not: 2026-01-01T00:00:00+00:00" in notes


def test_an_interrupted_run_is_marked_and_gives_way_to_a_complete_one(tmp_path):
    interrupted = _variant(tmp_path, "cut", started="2026-01-03T00:00:00+00:00", finished="2026-01-03T00:10:00+00:00",
                           status="interrupted", collected=100)
    alone = release_table.render([load(interrupted)])
    assert "| 4.8.1 | 2.13.0 | ⚠ interrupted: ✅ 2 · xfail 1 |" in alone
    assert "- 4.8.1 (torch 2.13.0) host: the run started 2026-01-03T00:00:00+00:00 ended interrupted after 27 of 100 cases (73 not run)" in alone
    beside_a_complete_run = release_table.render([load(interrupted), load(NEW)])
    assert "⚠" not in beside_a_complete_run.split("\n\n")[0]
