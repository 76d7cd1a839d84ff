"""Planted DSL edits, as an edited install carries them: the installed DSL copied into a fresh
virtual environment (``tests/edited_dsl.py``: its folders made anew, its files linked, the edited
sources and its ``dist-info`` folders copied; every other package seen as here), three of its Python
sources edited to change one operation's meaning each, and their ``RECORD`` rows rewritten to
match, so the install check passes and only the semantics family can see the edits. The host
path's family is then red, each planted case's message naming the operation, the type and the
path, and the cases of operations the edits leave alone pass. With the ``RECORD`` as shipped, the
same copy stops at the install check (exit 6) naming the edited files. Four more edits change what
only the pins see (``PINNED_EDITS``: a saturating conversion, a removed ``cute.math.erf``, a logical
signed ``>>``, narrowings rounding toward zero): each red in one line naming the operation, the type,
the pinned meaning and the new one. One child pytest for all edits, another stopped at start: about
25 s on 2 cores; on a GPU runner a third runs the narrowings in the gpu tier."""

import json
import subprocess
from pathlib import Path

import pytest

from fixtures.cases import host_cpu, releases
from fixtures.cases import semantics as sem
from reports.model import INSTALL_BROKEN_EXIT
from tests.edited_dsl import Edit, EditedDsl

pytestmark = pytest.mark.harness

HELPERS = "nvidia_cutlass_dsl/dsl_packages/cutlass/_mlir_helpers"


EDITS = (
    # ArithValue.__mod__ on signed integers: Python's sign (a floored remainder), not arith.remsi's (the dividend's)
    Edit(f"{HELPERS}/arith.py",
         "            return arith.remsi(self, other, loc=loc, ip=ip)\n",
         "            return arith.subi(self, arith.muli(arith.floordivsi(self, other, loc=loc, ip=ip), other,"
         " loc=loc, ip=ip), loc=loc, ip=ip)\n"),
    # cute.math.exp2 (its foundation op) emits math.exp
    Edit(f"{HELPERS}/math.py",
         'return _unary_math_op(x, math_dialect.exp2, None, fastmath, "exp2", loc=loc, ip=ip)',
         'return _unary_math_op(x, math_dialect.exp, None, fastmath, "exp2", loc=loc, ip=ip)'),
    # int_to_int, a signed integer to a narrower signed one: clamped to the target's range (saturates) before it is truncated
    Edit(f"{HELPERS}/arith.py",
         "        else:\n            return arith.trunci(dst_mlir_type, a, loc=loc, ip=ip)\n    else:\n        # Unsigned -> Signed\n",
         "        else:\n"
         "            if src_signed:\n"
         "                a = arith.maxsi(a, const(-(1 << (dst_width - 1)), a.type, loc=loc, ip=ip), loc=loc, ip=ip)\n"
         "                a = arith.minsi(a, const((1 << (dst_width - 1)) - 1, a.type, loc=loc, ip=ip), loc=loc, ip=ip)\n"
         "            return arith.trunci(dst_mlir_type, a, loc=loc, ip=ip)\n"
         "    else:\n        # Unsigned -> Signed\n"),
)
# edits whose change only the pins see (a meaning the DSL defines itself, an export), and one the reference sees too
PINNED_EDITS = (
    # fptoi, a float to a signed integer: clamped to the target's range first, so it saturates where 4.8 wraps
    Edit(f"{HELPERS}/arith.py",
         "        return arith.fptosi(res_type, src, loc=loc, ip=ip)\n",
         "        low = const(-float(1 << (res_elem_type.width - 1)), src.type, loc=loc, ip=ip)\n"
         "        high = const(float((1 << (res_elem_type.width - 1)) - 1), src.type, loc=loc, ip=ip)\n"
         "        src = arith.minimumf(arith.maximumf(src, low, loc=loc, ip=ip), high, loc=loc, ip=ip)\n"
         "        return arith.fptosi(res_type, src, loc=loc, ip=ip)\n"),
    # cute.math.erf removed (erfc stays)
    Edit("nvidia_cutlass_dsl/dsl_packages/cutlass/cute/math.py", '__all__ = [*_base_math.__all__, "absf"]\n',
         '__all__ = [name for name in [*_base_math.__all__, "absf"] if name != "erf"]\ndel erf\n'),
    # >> on a signed integer made logical (fills with zeros)
    Edit(f"{HELPERS}/arith.py",
         "            return arith.shrsi(self, other, loc=loc, ip=ip)\n",
         "            return arith.shrui(self, other, loc=loc, ip=ip)\n"),
    # every float narrowing rounds toward zero: the nearest result stepped back one toward zero where it is larger
    Edit(f"{HELPERS}/arith.py",
         "        return arith.truncf(res_type, src, roundingmode=roundingmode, loc=loc, ip=ip)\n",
         "        near = arith.truncf(res_type, src, roundingmode=roundingmode, loc=loc, ip=ip)\n"
         "        back = arith.extf(src.type, near, loc=loc, ip=ip)\n"
         "        larger = arith.cmpf(arith.CmpFPredicate.OGT, math.absf(back, loc=loc, ip=ip), math.absf(src, loc=loc, ip=ip),"
         " loc=loc, ip=ip)\n"
         "        bits_type = recast_type(res_type, ir.IntegerType.get_signless(res_elem_type.width))\n"
         "        bits = arith.bitcast(bits_type, near, loc=loc, ip=ip)\n"
         "        less = arith.bitcast(res_type, arith.subi(bits, const(1, bits_type, loc=loc, ip=ip), loc=loc, ip=ip),"
         " loc=loc, ip=ip)\n"
         "        return arith.select(larger, less, near, loc=loc, ip=ip)\n"),
)
PLANTED = {  # case: what its failure must say (the operation as the DSL spells it, the type, the path)
    "semantics-mod-i8-tensor": "`a % b` on Int8, a tensor on the right, host:",
    "semantics-mod-i32-scalar": "`a % b` on Int32, a scalar on the right, host:",
    "semantics-exp2-f32": "`cute.math.exp2(a)` on Float32, host:",
    "semantics-to-i8-i16": "`a.to(Int8)` on Int8 from Int16, host:",
}
PINNED = {  # case: its one line, naming the operation, the type, the pinned meaning and the new one (release: {release})
    "semantics-to-i8-f16": "`a.to(Int8)` on Int8 from Float16, host: float to integer, out of range and NaN (Float16 to Int8) "
                           "changed meaning: pinned for DSL 4.8 'wraps",
    "semantics-erf-f32": "`cute.math.erf(a)` on Float32, host: cute.math.erf is exported by DSL 4.8 (pinned) and not by this "
                         "release ({release}): removed",
    "cute.math.erf": "cute.math.erf (cute.math): exported by DSL 4.8 (pinned) and not by this release ({release}): removed",
    "semantics-rshift-i8-elements": "`a >> b` on Int8, element by element (scalars), host: >> on a negative signed value (Int8) "
                                    "changed meaning: pinned for DSL 4.8 'arithmetic (fills with the sign bit; numpy's)', "
                                    "this release ({release}) 'logical (fills with zeros)'",
    "semantics-to-f16-f32": "`a.to(Float16)` on Float16 from Float32, host: a narrowing conversion's rounding (Float32 to Float16) "
                            "changed meaning: pinned for DSL 4.8 'to nearest, ties to even', this release ({release}) 'toward zero'",
}
# the same operations where the edits must change nothing (unsigned %, >> and float to integer, widening, signed to
# unsigned, erfc), and neighbours
UNTOUCHED = ("semantics-mod-u8-tensor", "semantics-floordiv-i8-tensor", "semantics-exp-f32", "semantics-to-i16-i8",
             "semantics-to-u8-i16", "semantics-rshift-u8-elements", "semantics-lshift-i8-elements", "semantics-to-f32-f16",
             "semantics-to-u8-f16", "cute.math.erfc")


HOST_SUITES = ("suites/host/test_semantics_on_host.py", "suites/api/test_pinned_exports.py")


def _pytest(edited: EditedDsl, report: Path, *cases: str, suites: tuple[str, ...] = HOST_SUITES,
            options: tuple[str, ...] = ("-m", "host or api")) -> subprocess.CompletedProcess:
    """The host tier's family (and the api tier's pinned exports) on ``cases`` in the edited install,
    from the checkout (``suites``: other test files); ``-m host`` runs the host path on a GPU runner too."""
    return edited.pytest(*suites, *options, "-k", " or ".join(f"{case}]" for case in cases), f"--report-dir={report}")


@pytest.fixture(scope="module")
def edited(tmp_path_factory):
    return EditedDsl(tmp_path_factory.mktemp("edited") / "env", EDITS + PINNED_EDITS)


def test_edited_sources_without_their_record_rows_stop_the_run_at_the_install_check(edited, tmp_path):
    edited.records(rewritten=False)
    done = _pytest(edited, tmp_path / "report", *PLANTED)
    output = done.stdout + done.stderr
    assert done.returncode == INSTALL_BROKEN_EXIT, output[-3000:]
    assert "INSTALL BROKEN" in output and all(edit.file in output for edit in EDITS), output[-3000:]
    summary = (tmp_path / "report" / "summary.md").read_text()  # the line names one package, the report each
    assert all(edit.file in summary for edit in PINNED_EDITS), summary


def test_edited_sources_with_rewritten_records_are_red_naming_operation_type_and_path(edited, tmp_path):
    edited.records(rewritten=True)
    report = tmp_path / "report"
    done = _pytest(edited, report, *PLANTED, *PINNED, *UNTOUCHED)
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-3000:]  # red, not stopped by the install check (6)
    cases = {c["nodeid"].split("[")[-1].rstrip("]"): c for c in json.loads((report / "results.json").read_text())["cases"]}
    assert set(cases) == {*PLANTED, *PINNED, *UNTOUCHED}, sorted(cases)
    for case, words in PLANTED.items():
        assert cases[case]["outcome"] == "failed", (case, cases[case]["outcome"])
        assert words in cases[case]["message"] and "differ from the reference" in cases[case]["message"], cases[case]["message"]
    if sem.pin_for(sem.FLOAT_TO_INT, "Float16 to Int8", "host") is None:
        pytest.skip(f"no pin of the host's out-of-range conversions for this CPU class ({host_cpu.conversion_class()})")
    for case, words in PINNED.items():  # red even where a strict xfail expects another failure (erf cannot link here)
        assert cases[case]["outcome"] == "failed", (case, cases[case]["outcome"], cases[case]["message"])
        assert words.format(release=releases.installed()) in cases[case]["message"], cases[case]["message"]
    assert "saturates" in cases["semantics-to-i8-f16"]["message"].split("this release")[1]
    assert {case: cases[case]["outcome"] for case in UNTOUCHED} == dict.fromkeys(UNTOUCHED, "passed")


def test_the_planted_narrowing_is_red_on_the_gpu_path(edited, tmp_path):
    """On a GPU: the narrowings rounding toward zero are red in the gpu tier too, its message naming the
    GPU's rounding rule (pinned and new); a widening passes."""
    import torch

    if not torch.cuda.is_available():
        pytest.skip("no CUDA device: the gpu tier's half of this drill runs on a GPU runner")
    edited.records(rewritten=True)
    report = tmp_path / "report"
    narrowed, widened = ("semantics-to-f16-f32", "semantics-to-f32-f64"), ("semantics-to-f32-f16",)
    done = _pytest(edited, report, *narrowed, *widened, suites=("suites/gpu/test_semantics.py",), options=("-m", "gpu", "--require-gpu"))
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-3000:]
    cases = {c["nodeid"].split("[")[-1].rstrip("]"): c for c in json.loads((report / "results.json").read_text())["cases"]}
    for case, (src, dst) in zip(narrowed, (("Float32", "Float16"), ("Float64", "Float32"))):
        assert cases[case]["outcome"] == "failed", (case, cases[case]["outcome"])
        assert (f"gpu: a narrowing conversion's rounding ({src} to {dst}) changed meaning: pinned for DSL 4.8 'to nearest, "
                f"ties to even', this release ({releases.installed()}) 'toward zero'") in cases[case]["message"], cases[case]["message"]
    assert cases[widened[0]]["outcome"] == "passed", cases[widened[0]]["message"]

