"""docs/findings: every DSL defect the semantics family found on a GPU machine (a
``KNOWN_LIMITATIONS`` entry whose reason says it was seen on an H100) has its standalone
reproducer there, every reproducer compiles and imports nothing of the harness, and the folder's
README lists each. Running them needs the DSL and, for the GPU paths, a GPU: ``run_all.sh``."""

import ast
import py_compile

import pytest

from fixtures.cases import semantics as sem
from tests.conftest import ROOT

pytestmark = pytest.mark.harness

FINDINGS = ROOT / "docs" / "findings"
# a phrase of the limitation's reason -> its reproducer (one limitation's reason names one defect)
REPRODUCER = {
    "cute.composition of an unsigned integer tensor": "composition_unsigned_signed.py",
    "abs(a) on an unsigned integer TensorSSA": "abs_unsigned.py",
    "+-inf to Float8E5M2 as +-57344": "inf_to_e5m2_saturates.py",
    "Float64 cute.math.sqrt is not correctly rounded": "sqrt_f64_one_ulp.py",
    "unary - on Float32 and Float64 loses the sign of zero": "neg_zero_43.py",
    "fp8 to Int8 and Uint8 reads the fp8 bits": "fp8_to_int8_bits_43.py",
    "cannot link cute.math's tan, tanh": "host_jit_tan_link_43.py",
    "Uint8 to BFloat16 kills the process": "u8_to_bf16_crash_43.py",
    "conversions from fp8 to Float32 and Float64, and from Float16, BFloat16 and Float32 to fp8, abort": "host_fp8_float_abort_43.py",
    "Int8 to fp8 reads the integer's bits": "int8_to_fp8_bits.py",
    ".to(TFloat32) keeps every float32 bit": "tf32_no_rounding.py",
    "Float64 to BFloat16 calls libgcc's __truncdfbf2": "host_narrowing_link.py",
}
HARNESS = {"fixtures", "reports", "suites", "tests", "cute_dsl_harness", "conftest"}


def test_every_defect_found_on_a_gpu_machine_has_a_reproducer():
    found_on_gpu = [lim.reason for lim in sem.KNOWN_LIMITATIONS if "H100" in lim.reason]
    assert found_on_gpu, "no limitation says it was seen on an H100: the mapping below reads nothing"
    for reason in found_on_gpu:
        files = [name for phrase, name in REPRODUCER.items() if phrase in reason]
        assert len(files) == 1, f"no single reproducer named for: {reason}"
        assert (FINDINGS / files[0]).is_file(), f"{files[0]} is missing for: {reason}"


@pytest.mark.parametrize("script", sorted(p.name for p in FINDINGS.glob("*.py")))
def test_a_reproducer_compiles_stands_alone_and_is_listed(script, tmp_path):
    path = FINDINGS / script
    py_compile.compile(str(path), cfile=str(tmp_path / "out.pyc"), doraise=True)
    tree = ast.parse(path.read_text())
    imported = {alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    imported |= {node.module.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module}
    assert not imported & HARNESS, f"{script} imports the harness: {imported & HARNESS}"
    assert f"]({script})" in (FINDINGS / "README.md").read_text(), f"{script} is not in docs/findings/README.md"
