"""Ahead-of-time exports on the host (``fixtures.dsl.aot``; docs/aot.md): what can be checked
without a GPU. Each built-in stage's compile exported with ``export_to_c`` from its static and
dynamic views and from fake 64-bit operands: the header's descriptor slots have the widths the
compiled function reads (cutlass#3447 declared 32-bit slots for 64-bit extents), the object loads
(``cute.runtime.load_module``), links into a shared library that loads, and builds with a C
caller; the exported kernel is the compiled path's; a TVM-FFI export loads and checks its
arguments. A header with the wrong widths must be caught. Running what was exported is
``suites/gpu/test_aot.py``.
"""

from __future__ import annotations

import pytest
import torch

from fixtures.cases.dtypes import DTYPES
from fixtures.cases.matrix import Case
from fixtures.cases.stages import BUILT_IN_STAGES
from fixtures.dsl import aot, tensors

pytestmark = pytest.mark.compile

# (alignment, layout, operands): the compiled path's static and dynamic views, and fake operands
# with 64-bit symbolic extents and strides
EXPORTS = (("align16", "static", "views"), ("align16", "dynamic", "views"), ("align16", "dynamic", "fake_int64"))
# the slot widths each export must declare for a tensor, and the compiled function read
WIDTHS = {"static": (), "dynamic": (32, 32, 64), "fake_int64": (64, 64, 64)}


def _case(stage, align: str, layout: str) -> Case:
    return Case(stage, DTYPES["fp16"], align, layout, (128, 2048), "aligned")


def _views(case: Case) -> dict[str, torch.Tensor]:
    placed = tensors.place_operands(case, "cpu")
    return {name: placed[name].view for name in "abc"}


def _require(abi: str) -> None:
    reason = aot.unavailable(abi)
    if reason:
        pytest.skip(reason)


@pytest.fixture(scope="module")
def export_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("aot")


@pytest.mark.parametrize("stage", BUILT_IN_STAGES.values(), ids=lambda s: s.name)
@pytest.mark.parametrize(("align", "layout", "operands"), EXPORTS, ids=lambda v: v)
def test_export_declares_the_slots_the_function_reads(stage, align, layout, operands, export_dir, host_jit):
    """Exported from the case's views (or fake operands): the header declares one descriptor a
    tensor with the slot widths the compiled function's C interface reads; the object loads (and,
    for one stage, links into a shared library that loads and builds with a C caller)."""
    _require("cute")
    case = _case(stage, align, layout)
    compiled = aot.compile_for_export(case, _views(case), "cute", operands)
    done = aot.export(compiled, case, export_dir, "cute", operands)
    header = done.header.read_text()
    assert aot.slot_widths_differ(header, compiled) == []
    want = WIDTHS["fake_int64" if operands == "fake_int64" else layout]
    assert [t.widths for t in aot.header_tensors(header)] == [want] * 3
    assert callable(aot.load(done))
    if stage.name == "tv_remap":  # the builds, for one stage: the same commands for every other
        assert callable(aot.load(done, aot.build_shared(done)))
        if aot.c_caller_unavailable() is None:
            aot.build_c_caller(done)


def test_a_header_with_the_wrong_widths_is_caught(export_dir, host_jit):
    """The check proves itself: the dynamic export's header with its 32-bit extent slots declared
    64-bit (``aot.widened_header``) is named tensor by tensor."""
    _require("cute")
    case = _case(BUILT_IN_STAGES["predicated"], "align16", "dynamic")
    compiled = aot.compile_for_export(case, _views(case), "cute")
    done = aot.export(compiled, case, export_dir, "cute")
    differ = aot.slot_widths_differ(aot.widened_header(done.header.read_text()), compiled)
    assert [d.split(":")[0] for d in differ] == ["mA", "mB", "mC"], differ
    assert "(64, 64, 64)" in differ[0] and "(32, 32, 64)" in differ[0]


@pytest.mark.parametrize("stage", BUILT_IN_STAGES.values(), ids=lambda s: s.name)
def test_an_export_carries_the_compiled_paths_kernel(stage, compile_on_host, host_jit):
    """What is compiled for an export of the DSL's ABI is the compiled path's PTX, byte for byte
    (TVM-FFI's compile is the compiled path's too: ``test_tvm_ffi_compiles_the_compiled_paths_kernel``)."""
    _require("cute")
    case = _case(stage, "align16", "dynamic")
    compiled = aot.compile_for_export(case, _views(case), "cute", keep_ptx=True)
    ptx = getattr(getattr(compiled, "artifacts", None), "PTX", None)
    if ptx is None:
        pytest.skip("this release keeps no PTX on the compiled object (.artifacts.PTX)")
    assert ptx == compile_on_host(case).ptx


def test_a_tvm_ffi_export_loads_and_checks_its_arguments(export_dir, host_jit):
    """A TVM-FFI export (explicit stream) loaded back on the host is a TVM-FFI function that
    refuses a call whose tensors are not the compile's, before any launch."""
    _require("tvm_ffi")
    case = _case(BUILT_IN_STAGES["predicated"], "align16", "static")
    views = _views(case)
    compiled = aot.compile_for_export(case, views, "tvm_ffi", env_stream=False)
    function = aot.load(aot.export(compiled, case, export_dir, "tvm_ffi"))
    with pytest.raises((TypeError, ValueError), match="dtype=float16"):
        function(views["a"], views["b"], views["c"].float(), 0)
