"""``fixtures.dsl.compiler.Compiler``: one compile per signature and memory space. A GPU tier case
compiled from device tensors (``gmem`` pointers) must not answer a compile tier's ask for the
signature's PTX from CPU views (``generic``): the byte-for-byte comparisons of the export and
TVM-FFI paths with the compiled path read that PTX, and on an H100 gate one failed so when a
worker had met the signature on the GPU first."""

from types import SimpleNamespace

import pytest

from fixtures.cases.dtypes import DTYPES
from fixtures.cases.matrix import Case
from fixtures.cases.stages import BUILT_IN_STAGES
from fixtures.dsl import compat, compiler

pytestmark = pytest.mark.harness


@pytest.fixture
def compiled_by_memspace(monkeypatch):
    """Compiles made with stand-in operands: each PTX names the memory space it was compiled for."""
    made = []

    def compile_with_ptx(launch, a, *rest):
        made.append(a.memspace)
        return object(), f"// pointers: {a.memspace}"

    monkeypatch.setattr(compat, "compile_with_ptx", compile_with_ptx)
    monkeypatch.setattr(compiler, "kernel_of", lambda stage: SimpleNamespace(launch=None, args=lambda *a: a))
    monkeypatch.setattr(compiler, "_host_operands", lambda case: [SimpleNamespace(memspace="generic")] * 3)
    return made


def _case():
    return Case(BUILT_IN_STAGES["naive"], DTYPES["fp16"], "align16", "dynamic", (128, 2048), "aligned")


def test_a_device_compile_does_not_answer_for_the_host_views(compiled_by_memspace):
    cache = compiler.Compiler()
    device = [SimpleNamespace(memspace="gmem")] * 3
    assert cache.compile(_case(), *device).ptx == "// pointers: gmem"
    assert cache.on_host(_case()).ptx == "// pointers: generic"
    assert compiled_by_memspace == ["gmem", "generic"]
    assert cache.compiles == {_case().signature: 2}  # per signature, as the gpu tier's tests count them


def test_each_signature_and_memory_space_compiles_once(compiled_by_memspace):
    cache = compiler.Compiler()
    other_shape = Case(BUILT_IN_STAGES["naive"], DTYPES["fp16"], "align16", "dynamic", (1000, 1003), "odd")
    assert other_shape.signature == _case().signature
    assert cache.on_host(_case()) is cache.on_host(other_shape)
    assert compiled_by_memspace == ["generic"]
