"""The gpu plan's checks through ahead-of-time exports (``fixtures.dsl.aot``; docs/aot.md): each
case compiled, written out with ``export_to_c``, loaded back (``cute.runtime.load_module`` of the
object or of a shared library built from it, TVM-FFI's, or a C caller built with the exported
header) and called, then ``runner.Launch.verify``'s checks (values, every output element written,
inputs untouched, no byte outside a tensor changed).

The sample (``sample``): the call paths' sample (``suites/gpu/_path_sample.py``) in ``CLASSES``:
per stage a static, an offset pitched, a dynamic mixed-layout and a dynamic in-place case, every
dtype met across the stages: 36 cases over the built-in stages for ``aot_tvm_ffi`` (what
production caches load), the 9 mixed-layout ones for the DSL's own ABI loaded from the object and
from a shared library, the fake 64-bit operands and the C caller (what they add is the load, the
build, the compile's operands and the descriptors, not the kernel; sampled so the README's gate
stays under 200 s on one H100). Exports load in fresh
processes too: several at once, each loading one export of every stage and ABI (several modules
in one process). A header that misdeclares its slot widths and a path that drops the storage
offset must fail the checks. What the CPU can check (the export itself, the header's widths
against the compiled ABI, the builds) is ``suites/compile/test_aot_export.py``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
import torch

from fixtures.cases import failures, matrix
from fixtures.cases.stages import BUILT_IN_STAGES
from fixtures.dsl import aot, call_paths, runner
from fixtures.plugin import run_state
from fixtures.plugin.params import limitation_marks

from suites.gpu._path_sample import kind as _kind, sample as call_path_sample

pytestmark = pytest.mark.gpu

# (alignment, layout, kind) of the call paths' classes: a static call, an operand off its
# alignment with a pitch, operands each its own dynamic layout, a dynamic in-place call
CLASSES = (
    ("align16", "static", None),
    ("offset", "strided", None),
    ("align16", "dynamic", "mixed"),
    ("align16", "dynamic", "c_is_a"),
)
PATHS = tuple(p.call_path() for p in aot.AOT_PATHS.values())
FULL_SAMPLE = ("aot_tvm_ffi",)  # the other paths take the mixed-layout class only


def sample(stages=BUILT_IN_STAGES) -> list:
    return [c for c in call_path_sample(stages) if (c.align, c.layout, _kind(c)) in CLASSES]


def _require(path: call_paths.CallPath) -> None:
    reason = path.unavailable()
    if reason:
        pytest.skip(f"{path.name}: {reason}")


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if metafunc.function.__name__ == "test_aot_call_matches_torch":
        cases = sample(run_state.of(metafunc.config).stages)
        metafunc.parametrize(("case", "path"), [
            pytest.param(case, path, id=f"{path.name}-{case.id}", marks=limitation_marks(case, "gpu"))
            for path in PATHS for case in cases
            if path.name in FULL_SAMPLE or (case.align, case.layout, _kind(case)) == CLASSES[2]])


def test_aot_call_matches_torch(case, path, seed):
    _require(path)
    call_paths.run_case(case, seed, path)


# -- fresh processes, several at once, several modules each ---------------------------------------

PROCESSES = 3
TIMEOUT_S = 300
LOADERS = (("cute", "module"), ("cute", "shared_library"), ("tvm_ffi", "module"))


@pytest.mark.slow
def test_exports_load_in_fresh_processes_at_once(seed):
    """One export of each stage for each ABI (``LOADERS``), made here; ``PROCESSES`` fresh
    processes started together, each loading every one of them (27 modules in one process) and
    running its case through the checks (``python -m fixtures.dsl.run_aot``)."""
    _require(PATHS[2])
    items = []
    for case in (c for c in sample() if (c.align, c.layout, _kind(c)) == CLASSES[2]):  # one a stage: dynamic, mixed
        placed = runner.placed_operands(case)
        views = {name: placed[name].view for name in "abc"}
        for abi, how in LOADERS:
            items.append({"export": aot.export_once(case, views, abi).as_json(), "how": how})
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump({"seed": seed, "exports": items}, f)
    try:
        children = [subprocess.Popen([sys.executable, "-m", "fixtures.dsl.run_aot", f.name], stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL, env=dict(os.environ))
                    for _ in range(PROCESSES)]
        outputs = [child.communicate(timeout=TIMEOUT_S) for child in children]
    finally:
        Path(f.name).unlink()
    for child, (out, err) in zip(children, outputs):
        assert child.returncode == 0, f"a process loading the exports died (exit {child.returncode}):\n{err[-3000:]}"
        results = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
        assert len(results) == len(items), f"{len(results)} of {len(items)} exports reported:\n{err[-2000:]}"
        bad = [r for r in results if r["outcome"] != "conforms"]
        assert not bad, f"exports that did not conform in a fresh process: {bad}\n{err[-2000:]}"


# -- the checks can fail -----------------------------------------------------------------------------

PLANTED = matrix.case_from_id("predicated-fp16-align16-dynamic-128x2048", "aligned")


@pytest.mark.slow
def test_a_header_that_misdeclares_its_slot_widths_is_caught(seed):
    """A C caller built with the export's own header conforms; built with a header whose 32-bit
    extent slots are declared 64-bit (``aot.widened_header``), it hands the function descriptors
    it misreads (the second extent read as 0: nothing is written) and the checks say so."""
    reason = aot.unavailable("cute") or aot.c_caller_unavailable()
    if reason:
        pytest.skip(reason)
    placed = runner.placed_operands(PLANTED)
    done = aot.export_once(PLANTED, {name: placed[name].view for name in "abc"}, "cute")
    honest = call_paths.CallPath("c_caller", lambda: None, lambda case, views: aot.build_c_caller(done),
                                 lambda function, views: function(views), "the export's header")
    call_paths.run_case(PLANTED, seed, honest)
    planted = aot.build_c_caller(done, header=aot.widened_header(done.header.read_text()))
    wrong = call_paths.CallPath("c_caller_widened_header", lambda: None, lambda case, views: planted,
                                lambda function, views: function(views), "a header with 64-bit slots")
    with pytest.raises((failures.ConformanceError, RuntimeError)):
        call_paths.run_case(PLANTED, seed, wrong)


@pytest.mark.parametrize("path", [p for p in PATHS if p.name in ("aot_tvm_ffi", "aot_c_caller")], ids=lambda p: p.name)
def test_an_aot_path_that_drops_the_storage_offset_is_caught(path, seed):
    _require(path)
    call_paths.run_case(PLANTED, seed, path)
    with pytest.raises(failures.ConformanceError):
        call_paths.run_case(PLANTED, seed, call_paths.drops_storage_offset(path))
    torch.cuda.synchronize()
