"""Meanings and exports pinned per release line (``fixtures/cases/pins/``): which line a release is
held to, when a pin holds, a changed meaning red in one line naming the operation, the type, the
pinned meaning and the new one (even where a strict xfail expects the case's other failure), and
``python -m reports compare`` exiting 1 on a changed meaning."""

import json
from pathlib import Path

import pytest
from packaging.version import Version

from fixtures.cases import exports, host_cpu, releases
from fixtures.cases import semantics as sem
from fixtures.cases.failures import MeaningChanged, Mismatch
from reports import __main__ as reports_main

pytestmark = pytest.mark.harness

DATA = Path(__file__).parent / "data"
FLOAT_TO_I8 = sem.case_by_id("semantics-to-i8-f16")


@pytest.mark.parametrize("release, line", [("4.8.1", "4.8"), ("4.9.0", "4.8"), ("5.0", "4.8"), ("4.5.3", "4.3"),
                                           ("4.3.5", "4.3"), ("4.2.9", None)])
def test_a_release_is_held_to_the_newest_pinned_line_at_or_before_it(release, line):
    assert sem.pinned_line(Version(release)) == line
    assert exports.pinned_line(Version(release)) == line


def test_a_pin_of_a_rule_holds_on_the_rule_and_one_with_values_on_every_value():
    rule_only = sem.Pin("4.8", "gpu", sem.FLOAT_TO_INT, "Float16 to Int8", "wraps")
    assert sem.pin_holds(rule_only, "wraps: nan -> 0, 172.0 -> -84") and not sem.pin_holds(rule_only, "saturates: 172.0 -> 127")
    valued = sem.Pin("4.8", "host", sem.FLOAT_TO_INT, "Float16 to Int8", "wraps: nan -> 0, 172.0 -> -84")
    assert sem.pin_holds(valued, "wraps: nan -> 0, 172.0 -> -84") and not sem.pin_holds(valued, "wraps: nan -> 0, 172.0 -> -83")
    assert sem.pin_holds(sem.Pin("4.8", "gpu", "%", "Int8", "C: the sign of the dividend (torch.fmod)"),
                         "C: the sign of the dividend (torch.fmod)")


def test_every_pin_names_a_subject_and_type_the_family_observes():
    subjects = {m.subject for m in sem.MEANINGS} | {sem.FLOAT_TO_INT, sem.TO_FP8, sem.TO_WIDER_UNSIGNED, sem.ROUNDING, sem.SIGNED_SHIFT}
    names = {t.cutlass for t in sem.TYPES.values()}
    for pin in sem.meaning_pins():
        assert pin.subject in subjects and pin.path in ("gpu", "host") and pin.line in ("4.3", "4.8"), pin
        assert all(part in names for part in pin.type.split(" to ")), pin
        assert not pin.cpu or pin.path == "host" and pin.subject in sem.CPU_DECIDED, pin
    keys = [(p.line, p.key, p.cpu) for p in sem.meaning_pins()]
    assert len(keys) == len(set(keys)), "one pin per line, subject, type, path and CPU class"


def test_a_changed_meaning_is_red_naming_operation_type_pinned_and_new():
    from fixtures.dsl import semantics as run

    found = [dict(subject=sem.FLOAT_TO_INT, type="Float16 to Int8", path="gpu", meaning="saturates: 172.0 -> 127")]
    pinned = sem.pin_for(sem.FLOAT_TO_INT, "Float16 to Int8", "gpu")
    with pytest.raises(MeaningChanged) as raised:
        run.judge(FLOAT_TO_I8, found)
    assert str(raised.value) == (
        f"`a.to(Int8)` on Int8 from Float16, gpu: {sem.FLOAT_TO_INT} (Float16 to Int8) changed meaning: pinned for DSL "
        f"{sem.pinned_line()} '{pinned.meaning}', this release ({releases.installed()}) 'saturates: 172.0 -> 127'")
    run.judge(FLOAT_TO_I8, [dict(found[0], meaning=pinned.meaning + ": nan -> 0")])  # the pinned rule: holds


def test_a_changed_meaning_outranks_the_failure_a_strict_xfail_expects():
    """A case a limitation expects to fail with a mismatch (a ConformanceError) that also changed a
    meaning raises MeaningChanged, which the xfail does not absorb, the mismatch after it."""
    from fixtures.dsl import semantics as run

    def mismatch():
        raise Mismatch("2 of 9 elements differ")

    found = [dict(subject=sem.FLOAT_TO_INT, type="Float16 to Int8", path="gpu", meaning="saturates")]
    with pytest.raises(MeaningChanged, match="changed meaning.*; and 2 of 9 elements differ"):
        run.judge(FLOAT_TO_I8, found, mismatch)
    with pytest.raises(Mismatch):
        run.judge(FLOAT_TO_I8, [], mismatch)
    assert not issubclass(MeaningChanged, Mismatch.__mro__[1])


def _with_meaning(meaning: str, folder: Path) -> Path:
    data = json.loads((DATA / "run_481.json").read_text())
    data["cases"][0]["semantics"] = [{"subject": sem.FLOAT_TO_INT, "type": "Float32 to Int8", "path": "gpu", "meaning": meaning}]
    folder.mkdir()
    (folder / "results.json").write_text(json.dumps(data))
    return folder


def test_compare_exits_1_on_a_changed_meaning_and_0_without(tmp_path, capsys):
    a = _with_meaning("neither saturates nor wraps", tmp_path / "a")
    b = _with_meaning("saturates", tmp_path / "b")
    assert reports_main.main(["compare", str(a), str(b)]) == 1
    assert "Changed meanings (1)" in capsys.readouterr().out
    assert reports_main.main(["compare", str(a), str(a)]) == 0


def test_the_pinned_exports_of_the_newest_line_are_what_this_install_exports():
    """4.8's pins were read from 4.8.1's install: each is here (the api tier holds every release to its line)."""
    import cutlass
    import cutlass.cute as cute

    assert exports.pinned_line() == "4.8"
    for name in exports.pinned():
        owner, _, attr = name.rpartition(".")
        root = {"cute": cute, "cute.math": cute.math, "cutlass": cutlass, "cute.ReductionOp": cute.ReductionOp}[owner]
        assert hasattr(root, attr), name


def test_a_pinned_export_gone_under_a_known_new_spelling_is_a_rename_and_one_without_is_removed():
    """4.6 renamed cute.make_fragment to cute.make_rmem_tensor (fixtures.dsl.compat knows both): drift;
    a name no capability lists is a removal."""
    from fixtures.dsl import compat

    assert compat.renamed("cute.make_fragment") == "make_rmem_tensor"
    assert compat.renamed("cute.math.erf") is None and compat.renamed("cute.make_rmem_tensor") is None
    assert compat.exported("cute.ReductionOp.ADD") is not None
    with pytest.raises(AttributeError):
        compat.exported("cute.math.no_such_function")


def test_repin_pins_what_a_run_observed_and_says_each_change(tmp_path, capsys):
    from fixtures.cases import repin

    pins = tmp_path / "meanings.json"
    pins.write_text((sem.PINS / "meanings.json").read_text())
    run = _with_meaning("saturates: 172.0 -> 127", tmp_path / "run")
    before = sem.Pin(**next(p for p in json.loads(pins.read_text())["pins"]
                            if (p["line"], p["path"], p["type"]) == ("4.8", "gpu", "Float32 to Int8") and p["subject"] == sem.FLOAT_TO_INT))
    assert repin.main([str(run), "--line", "4.8", "--seen", "a planted run"], pins) == 0
    out = capsys.readouterr().out.splitlines()
    assert out == ["1 pins of DSL 4.8 changed (host CPU class: " + host_cpu.conversion_class() + "):",
                   f"4.8 gpu: {sem.FLOAT_TO_INT} (Float32 to Int8): '{before.meaning}' -> 'saturates: 172.0 -> 127'"]
    after = json.loads(pins.read_text())["pins"]
    assert len(after) == len(sem.meaning_pins())
    assert dict(line="4.8", path="gpu", subject=sem.FLOAT_TO_INT, type="Float32 to Int8", meaning="saturates: 172.0 -> 127",
                cpu="", seen="a planted run") in after


def test_repin_keeps_a_pin_that_holds_with_where_it_was_seen(tmp_path, capsys):
    """A pin of a rule alone holds on any values that follow the rule: repinning a run that observed
    it with values changes nothing (before, each such pin was rewritten with the run's values and its
    ``seen``: 106 on an H100 gate's run)."""
    from fixtures.cases import repin

    pins = tmp_path / "meanings.json"
    pins.write_text((sem.PINS / "meanings.json").read_text())
    before = pins.read_text()
    run = _with_meaning("neither saturates nor wraps: nan -> 0, 172.0 -> -84", tmp_path / "run")
    assert repin.main([str(run), "--line", "4.8", "--seen", "a planted run"], pins) == 0
    assert capsys.readouterr().out.splitlines() == ["0 pins of DSL 4.8 changed (host CPU class: " + host_cpu.conversion_class() + ")"]
    assert json.loads(pins.read_text()) == json.loads(before)


def test_repin_pins_a_host_result_the_cpu_decides_for_the_class_the_run_recorded(tmp_path, capsys):
    """A host meaning recorded with its CPU class (a GPU runner's, repinned elsewhere) is pinned for
    that class, not for the class of the machine repinning; one recorded without, for ``--host-cpu``."""
    from fixtures.cases import repin

    pins = tmp_path / "meanings.json"
    pins.write_text((sem.PINS / "meanings.json").read_text())
    run = _with_meaning("wraps: inf -> -128", tmp_path / "run")
    data = json.loads((run / "results.json").read_text())
    recorded = dict(data["cases"][0]["semantics"][0], path="host", cpu="x86-64 avx512f")
    data["cases"][0]["semantics"] = [recorded, dict(recorded, type="Float32 to Int16", cpu=None)]
    (run / "results.json").write_text(json.dumps(data))
    assert repin.main([str(run), "--line", "4.8", "--host-cpu", "x86-64 elsewhere"], pins) == 0
    after = {(p["type"], p["path"], p["cpu"]) for p in json.loads(pins.read_text())["pins"] if p["meaning"] == "wraps: inf -> -128"}
    assert after == {("Float32 to Int8", "host", "x86-64 avx512f"), ("Float32 to Int16", "host", "x86-64 elsewhere")}


def test_repin_refuses_a_line_that_is_no_release_line_and_a_full_disk_leaves_the_pins_as_they_were(tmp_path, capsys,
                                                                                                    monkeypatch):
    import errno

    from fixtures.cases import repin

    pins = tmp_path / "meanings.json"
    pins.write_text(before := (sem.PINS / "meanings.json").read_text())
    run = _with_meaning("saturates: 172.0 -> 127", tmp_path / "run")
    assert repin.main([str(run), "--line", "banana"], pins) == repin.USAGE_ERROR
    assert capsys.readouterr().err.splitlines() == ["repin: --line banana: expected a release line, MAJOR.MINOR (4.8); nothing pinned"]

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(repin.json, "dump", full)
    with pytest.raises(OSError):
        repin.main([str(run), "--line", "4.8"], pins)
    assert pins.read_text() == before and sorted(p.name for p in tmp_path.iterdir()) == ["meanings.json", "run"]


def test_repin_refuses_a_run_it_cannot_read_in_one_line(tmp_path, capsys):
    from fixtures.cases import repin

    pins = tmp_path / "meanings.json"
    pins.write_text((sem.PINS / "meanings.json").read_text())
    assert repin.main([str(tmp_path / "missing"), "--line", "4.8"], pins) == repin.USAGE_ERROR
    assert capsys.readouterr().err.startswith(f"repin: {tmp_path / 'missing'}: not a run's results.json (FileNotFoundError")
    assert pins.read_text() == (sem.PINS / "meanings.json").read_text()


def test_a_meaning_without_a_pin_is_a_warning_not_a_silent_pass():
    from fixtures.dsl import semantics as run

    found = [dict(subject=sem.FLOAT_TO_INT, type="Float16 to Int8", path="gpu", meaning="neither saturates nor wraps"),
             dict(subject=sem.FLOAT_TO_INT, type="Float16 to Int128", path="gpu", meaning="wraps")]
    with pytest.warns(run.MeaningNotPinned, match=r"\(Float16 to Int128\) has no pin for DSL 4\.8: 'wraps' reported, not judged"):
        run.judge(FLOAT_TO_I8, found)
