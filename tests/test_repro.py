"""Reproducers: a failing gpu case's record (``fixtures.plugin.repro``) becomes one standalone
script (``reports.repro``), for a planted user kernel, a tutorial stage and a ``--stage-module``
stage; the script's operands are the runner's, bit for bit, and its checks speak the runner's
words; bad input to ``python -m reports repro`` is one line."""

import importlib
import json
from dataclasses import asdict

import pytest
import torch

from fixtures.cases import failures, matrix
from fixtures.cases.dtypes import DTYPES
from fixtures.cases.ops import ADD
from fixtures.cases.stages import BUILT_IN_STAGES, Stage
from fixtures.dsl import checks, fill, tensors
from fixtures.dsl.kernels import bind, registered_in
from fixtures.dsl.runner import GUARD_FILL
from fixtures.plugin.repro import spec_for
from reports import repro, repro_template, summary
from tests.conftest import call_reports, carried_kernel_alone
from reports.__main__ import main
from reports.model import CaseResult, Fingerprint, RunResult
from suites.gpu import _wrong_stage

pytestmark = pytest.mark.harness

SEED = 20261125
WRONG = bind(Stage("planted_sub", ADD), _wrong_stage.subtracts_instead_of_adding)
PLANTED = matrix.Case(WRONG, DTYPES["fp32"], "align16", "dynamic", (97, 101), "odd")
TUTORIAL = next(c for c in matrix.outside_domain_cases() if c.stage.name == "tv")  # an out-of-bounds write


def user_case() -> matrix.Case:
    (stage, *_) = registered_in(importlib.import_module("examples.my_stages"))
    return matrix.Case(stage, DTYPES["bf16"], "offset", "static", (64, 1003), "odd", operands=("rowmajor", "rowbcast", "rowmajor"))


def failed_run(case: matrix.Case, failure: str = "Mismatch", outcome: str = "failed") -> RunResult:
    """A run with ``case`` failing as the plugin records it, read back from its results.json."""
    spec, texts = spec_for(case, SEED, failure)
    run = RunResult(fingerprint=Fingerprint(dsl="4.8.1", gpu="NVIDIA H100 80GB HBM3"), arch="sm_90a", started="2026-11-25",
                    exit_status=1, repro_sources=texts,
                    cases=[CaseResult(f"suites/gpu/test_x.py::test_x[{case.id}]", outcome, "gpu", 0.5,
                                      message=f"fixtures.cases.failures.{failure}: {case.id}: went wrong", repro=spec)])
    return RunResult.from_json(json.loads(json.dumps(run.to_json())))


@pytest.mark.parametrize(("case", "module"), [
    (PLANTED, "suites/gpu/_wrong_stage.py"),
    (TUTORIAL, "fixtures/dsl/kernels/tv_layout.py"),
    (user_case(), "examples/my_stages.py"),
], ids=["planted", "tutorial", "stage-module"])
def test_the_script_compiles_names_the_case_and_carries_its_kernel(case, module):
    run = failed_run(case)
    text = repro.render(run, repro.find(run, case.id))
    compile(text, f"repro_{case.id}.py", "exec")
    assert text.count(case.id) >= 2 and "# the harness saw: fixtures.cases.failures.Mismatch" in text
    assert "#   gpu: NVIDIA H100 80GB HBM3" in text
    assert f"SOURCES[{module!r}]" in text and "sys.exit(main(SPEC, SOURCES))" in text


@pytest.mark.parametrize(("case", "launch"), [
    (PLANTED, "subtracts_instead_of_adding"),
    (TUTORIAL, "elementwise_add"),
    (user_case(), "my_add"),
], ids=["planted", "tutorial", "stage-module"])
def test_the_carried_kernel_imports_with_neither_the_harness_nor_its_environment(tmp_path, case, launch):
    """Run alone, from a folder outside the repo with an empty environment, a script's modules
    import and yield its launch function: nothing of the harness is needed."""
    run = failed_run(case)
    assert carried_kernel_alone(tmp_path, repro.render(run, run.cases[0]), "kernel.__name__") == [launch]


@pytest.mark.parametrize("case", [
    TUTORIAL,
    user_case(),
    matrix.Case(BUILT_IN_STAGES["predicated"], DTYPES["i8"], "natural", "colmajor", (97, 101), "odd", alias="a_is_b"),
    matrix.mixed_case(BUILT_IN_STAGES["predicated"], DTYPES["fp16"], "natural", "static",
                      ("offset", "colbcast", "strided"), (100, 2048), "drawn", alias="c_is_a"),
], ids=lambda c: c.id)
def test_the_scripts_operands_are_the_runners_bit_for_bit(case):
    """Placed and filled by the template from the record, on the CPU, the buffers hold what the
    runner's placement and fill put there, guard bands included."""
    spec = asdict(spec_for(case, SEED, "Mismatch")[0])
    harness = tensors.place_operands(case, "cpu")
    ours = {}
    for operand in spec["operands"]:
        same = operand["same_as"]
        ours[operand["name"]] = ours[same] if same else repro_template.Placed(operand, case.shape, case.dtype.torch, "cpu")
    for placed in (*harness.values(), *ours.values()):
        placed.buffer.view(torch.uint8).fill_(GUARD_FILL)
    fill.fill_inputs(harness["a"], harness["b"], case.dtype, SEED)
    repro_template.fill_inputs(spec, ours, case.dtype.torch)
    for name in "abc":
        assert torch.equal(checks.bits(ours[name].buffer), checks.bits(harness[name].buffer)), name
        assert ours[name].view.stride() == harness[name].view.stride()


def test_the_scripts_checks_speak_the_runners_words():
    case = TUTORIAL
    spec = asdict(spec_for(case, SEED, "OutOfBoundsWrite")[0])
    placed = tensors.place_operands(case, "cpu")
    placed["c"].buffer.view(torch.uint8).fill_(GUARD_FILL)
    placed["c"].buffer[placed["c"].back.start + 3] = 1  # past the tensor's end
    ours = repro_template.Placed(spec["operands"][2], case.shape, case.dtype.torch, "cpu")
    ours.buffer.copy_(placed["c"].buffer)
    sentinel = torch.full((case.dtype.bytes,), GUARD_FILL, dtype=torch.uint8)
    with pytest.raises(failures.OutOfBoundsWrite) as theirs:
        checks.check_untouched(case.id, "c", placed["c"], sentinel)
    with pytest.raises(repro_template.OutOfBoundsWrite, match=rf"^{theirs.value}$".replace("(", r"\(").replace(")", r"\)")):
        repro_template.check_untouched(spec, "c", ours)
    got, expected = torch.ones(2, 3, dtype=torch.float16), torch.ones(2, 3, dtype=torch.float16)
    got[1, 2] = -0.0
    with pytest.raises(failures.Mismatch) as theirs:
        checks.check_values(case.id, got, expected, checks.Tolerance(0, 0), checks.Operands(got, expected, ADD.reference))
    with pytest.raises(repro_template.Mismatch) as mine:
        repro_template.check_values({**spec, "rtol": 0, "atol": 0}, got, expected, got, expected)
    assert str(theirs.value).startswith(str(mine.value))


def test_summary_lists_the_command_per_failing_gpu_case(tmp_path):
    run = failed_run(PLANTED)
    text = summary.render(run, folder=tmp_path / "run")
    section = text.split("## Reproducers\n\n", 1)[1]
    assert f"- `{PLANTED.id}`: `python -m reports repro {tmp_path / 'run'} {PLANTED.id} --out repro_{PLANTED.id}.py`" in section


def test_the_cli_writes_the_script(tmp_path, capsys):
    run = failed_run(PLANTED)
    (tmp_path / "results.json").write_text(json.dumps(run.to_json()))
    assert main(["repro", str(tmp_path), PLANTED.id, "--out", str(tmp_path / "r.py")]) == 0
    assert (tmp_path / "r.py").read_text() == repro.render(run, run.cases[0])
    assert main(["repro", str(tmp_path), run.cases[0].nodeid]) == 0  # a node id names it too
    assert capsys.readouterr().out.startswith("wrote ")


def test_the_cli_never_replaces_a_file(tmp_path, capsys):
    run = failed_run(PLANTED)
    (tmp_path / "results.json").write_text(json.dumps(run.to_json()))
    (tmp_path / "notes.txt").write_text("mine")
    assert main(["repro", str(tmp_path), PLANTED.id, "--out", str(tmp_path / "notes.txt")]) == 4
    assert "exists, and is never replaced" in capsys.readouterr().err
    assert (tmp_path / "notes.txt").read_text() == "mine"


@pytest.mark.parametrize(("where", "case_id", "outcome", "says"), [
    ("empty", PLANTED.id, "failed", "not a run's report folder"),
    ("run", "tv-fp16-align16-static-1x1", "failed", "no case of this run has that id"),
    ("run", PLANTED.id, "passed", "no gpu failure of this run to reproduce (it passed)"),
])
def test_bad_input_is_one_line_and_exit_4(tmp_path, capsys, where, case_id, outcome, says):
    (tmp_path / "empty").mkdir()
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "results.json").write_text(json.dumps(failed_run(PLANTED, outcome=outcome).to_json()))
    assert main(["repro", str(tmp_path / where), case_id]) == 4
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith("reports repro: ") and says in line


def test_an_unwritable_repro_dir_stops_the_run_in_one_line(usage_error, project):
    project.makepyfile(test_one="def test_one():\n    pass\n")
    (project.path / "a_file").write_text("")
    assert usage_error("--repro-dir", "a_file/sub", "test_one.py").startswith("ERROR: --repro-dir a_file/sub: ")


def test_a_repro_dir_holding_another_runs_reproducers_is_refused(usage_error, project):
    project.makepyfile(test_one="def test_one():\n    pass\n")
    (project.path / "earlier").mkdir()
    (project.path / "earlier" / f"repro_{PLANTED.id}.py").write_text("# another run's")
    line = usage_error("--repro-dir", "earlier", "test_one.py")
    assert line == "ERROR: --repro-dir earlier: holds another run's reproducers, never replaced: choose an empty folder"


def test_an_fp64_record_crosses_to_the_xdist_controller():
    """A float64 edge value's bit pattern is an int below -2**31, which execnet (xdist's wire)
    refuses: on an H100 every planted fp64 gpu case took its worker down with an INTERNALERROR
    and the gate exited 3. The record travels as JSON text and reads back whole."""
    from types import SimpleNamespace

    from execnet.gateway_base import dumps_internal, loads_internal

    from fixtures.plugin.repro import record
    from reports.model import REPRO_KEY, repro_spec

    case = matrix.Case(WRONG, DTYPES["fp64"], "align16", "static", (128, 2048), "aligned")
    item = SimpleNamespace(user_properties=[])
    record(item, case, SEED, failures.Mismatch("went wrong"))
    assert min(bit for o in spec_for(case, SEED, "Mismatch")[0].operands for bit in o.edge_bits) < -2**31
    sent = dict(loads_internal(dumps_internal(item.user_properties)))
    assert repro_spec(json.loads(sent[REPRO_KEY])) == spec_for(case, SEED, "Mismatch")[0]


EXPECTED_OR_NOT = """
import pytest
from fixtures.cases import failures, matrix
from fixtures.dsl import runner

CASE = next(c for c in matrix.cases("gpu") if not matrix.is_large(c))


@pytest.fixture(autouse=True)
def wrong(monkeypatch):
    def fail(case, seed, compiler, before_launch=None):
        raise failures.Mismatch(f"{case.id}: went wrong")
    monkeypatch.setattr(runner, "run_case", fail)


@pytest.mark.xfail(raises=failures.Mismatch, strict=True, reason="a known limitation")
def test_expected(run_case):
    run_case(CASE)


@pytest.mark.xfail(raises=failures.OutOfBoundsWrite, strict=True, reason="a limitation that fails otherwise")
def test_expected_otherwise(run_case):
    run_case(CASE)


def test_fails(run_case):
    run_case(CASE)
"""


def test_only_a_failure_its_xfail_mark_does_not_expect_carries_a_reproducer_record(project):
    """The recorder keeps a failing case's record alone; an expected failure's (14 KiB of module
    texts) was made, sent to the controller and written into junit.xml for nothing: 4 MiB of the
    H100 gate's 7.3 MiB junit.xml came from its 280 xfailed gpu cases."""
    from reports.model import REPRO_KEY, REPRO_SOURCES_KEY

    project.makepyfile(test_expected_or_not=EXPECTED_OR_NOT)
    result, reports = call_reports(project, "--report-dir", str(project.path / "out"), "test_expected_or_not.py")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    keys = {name: {k for k, _ in r.user_properties} & {REPRO_KEY, REPRO_SOURCES_KEY} for name, r in reports.items()}
    assert keys == {"test_expected": set(), "test_expected_otherwise": {REPRO_KEY, REPRO_SOURCES_KEY},
                    "test_fails": {REPRO_KEY, REPRO_SOURCES_KEY}}
    assert "repro_sources" not in (project.path / "out" / "junit.xml").read_text().split("test_expected_otherwise")[0]
