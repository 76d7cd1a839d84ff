"""The gpu plan's checks through two more ways production code calls a stage
(``fixtures.dsl.call_paths``; docs/call-paths.md): TVM-FFI (``cute.compile(...,
options="--enable-tvm-ffi")``, then the compiled function called with the torch tensors
themselves) and the implicit call (the ``@cute.jit`` launch function called with torch tensors,
the DSL converting them). Every case gets ``runner.Launch.verify``'s checks: values equal torch's,
every output element written, inputs untouched, no byte outside a tensor changed.

The sample: ``suites/gpu/_path_sample.py`` (117 cases over the built-in stages); the implicit
path takes its ``IMPLICIT_CLASSES`` (63).

For TVM-FFI also: views with a storage offset and non-contiguous ones (asserted as such), a call
on a stream that is not torch's default, CUDA-graph capture, each with the environment stream
and with an explicit stream argument; a path that drops the storage offset (and one that ignores
the caller's stream) must fail the checks; and the host time of one call, next to the compiled
path's. What the CPU can check (compiling with ``--enable-tvm-ffi`` for ``--arch``, the call's
argument checks, what an implicit call compiles) is in the compile tier, below.
"""

from __future__ import annotations

import json
from dataclasses import asdict

import cuda.bindings.driver as cuda
import pytest
import torch

from fixtures.cases import failures, limitations, matrix
from fixtures.cases.dtypes import DTYPES
from fixtures.cases.matrix import Case, mixed_case
from fixtures.cases.stages import BUILT_IN_STAGES
from fixtures.dsl import call_paths, compat, runner, tensors
from fixtures.dsl.call_paths import IMPLICIT, TVM_FFI, TVM_FFI_EXPLICIT_STREAM
from fixtures.dsl.kernels import kernel_of
from fixtures.plugin import run_state
from fixtures.plugin.params import limitation_marks
from reports.model import HOST_COST_KEY, HostCost

from suites.gpu._path_sample import CLASSES, kind as _kind, sample

# the implicit path's share of the sample: 7 of the 13 classes (a static, a compact and a pitched
# layout, the dynamic one at the natural alignment, operands apart statically, in place both ways);
# its calls each compile (0.9 s on the H100 host), and the whole sample cost the README's gate its
# 200 s (docs/call-paths.md)
IMPLICIT_CLASSES = CLASSES[::2]


def _as_compiled(case: Case, path: call_paths.CallPath) -> Case:
    """The case as ``path`` compiles it: an implicit call's is dynamic, at the natural alignment."""
    return call_paths.implicit_equivalent(case) if path is IMPLICIT else case


def _params(cases, path: call_paths.CallPath) -> list:
    """``cases`` for ``path``, each with its known limitation's mark as the path compiles it."""
    return [pytest.param(case, id=case.id, marks=limitation_marks(_as_compiled(case, path), "gpu")) for case in cases]


def _path_params(cases, paths) -> list:
    """Every case through every path (``case``, ``path``), ids ``<path>-<case id>``."""
    return [pytest.param(case, path, id=f"{path.name}-{case.id}", marks=limitation_marks(_as_compiled(case, path), "gpu"))
            for path in paths for case in cases]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    path = {"test_tvm_ffi_call_matches_torch": TVM_FFI, "test_implicit_call_matches_torch": IMPLICIT}.get(
        metafunc.function.__name__)
    if path is not None:
        cases = sample(run_state.of(metafunc.config).stages)
        if path is IMPLICIT:  # every call traces and compiles again (the finding below): every other class
            cases = [c for c in cases if (c.align, c.layout, _kind(c)) in IMPLICIT_CLASSES]
        metafunc.parametrize("case", _params(cases, path))


def _require(path: call_paths.CallPath) -> None:
    reason = path.unavailable()
    if reason:
        pytest.skip(f"{path.name}: {reason}")


# -- the sample through each path ---------------------------------------------------------------


@pytest.mark.gpu
def test_tvm_ffi_call_matches_torch(case, seed):
    _require(TVM_FFI)
    launch = call_paths.prepare(case, seed, TVM_FFI)
    assert all(view.storage_offset() > 0 for view in launch.views), "every placed view starts past its guard band"
    launch.launch()
    torch.cuda.synchronize()
    launch.verify()


@pytest.mark.gpu
def test_implicit_call_matches_torch(case, seed):
    _require(IMPLICIT)
    call_paths.run_case(case, seed, IMPLICIT)


# -- TVM-FFI: storage offsets, strides, streams, graphs ------------------------------------------

_PRED = BUILT_IN_STAGES["predicated"]
_TV = BUILT_IN_STAGES["tv_remap"]

# every operand a view past its guard band (storage_offset > 0); all but the first not contiguous
VIEWS = (
    Case(_PRED, DTYPES["fp16"], "align16", "static", (128, 2048), "aligned"),
    Case(_PRED, DTYPES["fp32"], "natural", "colmajor", (97, 101), "odd"),
    Case(_PRED, DTYPES["bf16"], "offset", "strided", (100, 2048), "odd"),
    Case(_PRED, DTYPES["i32"], "align16", "bcast", (128, 2048), "aligned"),
    mixed_case(_PRED, DTYPES["fp16"], "align16", "dynamic", ("offset", "colbcast", "strided"), (97, 101), "odd"),
)
STREAM_PATHS = (TVM_FFI, TVM_FFI_EXPLICIT_STREAM)
STREAM_CASES = (
    Case(_PRED, DTYPES["fp16"], "align16", "dynamic", (1000, 1003), "odd"),
    Case(_TV, DTYPES["fp32"], "align16", "static", (128, 2048), "aligned"),
)
SLEEP_CYCLES = 100_000_000  # torch.cuda._sleep on the caller's stream: tens of milliseconds on an H100


@pytest.mark.gpu
@pytest.mark.parametrize("case", _params(VIEWS, TVM_FFI))
def test_tvm_ffi_takes_views_with_a_storage_offset_and_any_strides(case, seed):
    _require(TVM_FFI)
    launch = call_paths.prepare(case, seed, TVM_FFI)
    offsets = {name: v.storage_offset() for name, v in zip("abc", launch.views)}
    assert all(offsets.values()), f"{case.id}: a view without a storage offset: {offsets}"
    contiguous = {name: v.is_contiguous() for name, v in zip("abc", launch.views)}
    if case.layout != "static":
        assert not all(contiguous.values()), f"{case.id}: meant to pass a non-contiguous view: {contiguous}"
    launch.launch()
    torch.cuda.synchronize()
    launch.verify()


def _on_a_side_stream(launch: call_paths.PathLaunch) -> None:
    """Queue the output's poison behind a long sleep on a stream from torch's pool (non-blocking:
    the legacy default stream does not wait for it), then call: a call on any other stream runs
    first and the poison lands over its result (``Unwritten``). The function is called once
    before, on the default stream: a TVM-FFI function's first call loads its kernel, which waits
    for the whole device, so a first call would come after the poison on any stream."""
    launch.launch()
    torch.cuda.synchronize()
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        torch.cuda._sleep(SLEEP_CYCLES)
        launch.poison_output()
        launch.launch()
    torch.cuda.synchronize()


@pytest.mark.gpu
@pytest.mark.parametrize(("case", "path"), _path_params(STREAM_CASES, STREAM_PATHS))
def test_tvm_ffi_call_runs_on_torchs_current_stream(case, path, seed):
    _require(path)
    launch = call_paths.prepare(case, seed, path)
    _on_a_side_stream(launch)
    launch.verify()


@pytest.mark.gpu
@pytest.mark.parametrize("case", _params(STREAM_CASES[:1], TVM_FFI))
def test_a_call_on_the_default_stream_is_caught(case, seed):
    """The stream test proves itself: a call that ignores the caller's stream fails it."""
    _require(TVM_FFI_EXPLICIT_STREAM)
    launch = call_paths.prepare(case, seed, call_paths.on_the_default_stream(TVM_FFI_EXPLICIT_STREAM))
    _on_a_side_stream(launch)
    with pytest.raises(failures.ConformanceError):
        launch.verify()


CAPTURED_LAUNCHES = 3
REPLAYS = 4
GRAPH_CASES = tuple(
    Case(stage, DTYPES["fp16"], "align16", layout, (256, 2048), "graph")
    for stage in (BUILT_IN_STAGES["naive"], _TV, _PRED, BUILT_IN_STAGES["tuned"])
    for layout in ("static", "dynamic")
)


@pytest.mark.gpu
@pytest.mark.parametrize(("case", "path"), _path_params(GRAPH_CASES, STREAM_PATHS))
def test_tvm_ffi_calls_replay_in_a_cuda_graph(case, path, seed):
    """As suites/gpu/test_cuda_graphs.py for the compiled path: compiled and called once before
    the capture (TVM-FFI loads the kernel's library at its first call), captured on torch's
    stream, replayed, each replay verified, also after the captured buffers were refilled."""
    _require(path)
    launches = [call_paths.prepare(case, seed + i, path) for i in range(CAPTURED_LAUNCHES)]
    for launch in launches:
        launch.launch()
    torch.cuda.synchronize()
    for launch in launches:
        launch.verify()
    runner.replay_captured(launches, seed, REPLAYS)


# -- the check can fail ---------------------------------------------------------------------------

PLANTED_CASES = (
    Case(_PRED, DTYPES["fp16"], "align16", "static", (128, 2048), "aligned"),
    Case(_TV, DTYPES["fp32"], "natural", "dynamic", (128, 2048), "aligned"),
    mixed_case(_PRED, DTYPES["i8"], "align16", "dynamic", ("colmajor", "rowbcast", "strided"), (97, 101), "odd"),
)


@pytest.mark.gpu
@pytest.mark.parametrize(("case", "path"), _path_params(PLANTED_CASES, (TVM_FFI, IMPLICIT)))
def test_a_path_that_drops_the_storage_offset_is_caught(case, path, seed):
    """The path passes, then the same path handing each tensor over from its storage's first
    element (``call_paths.drops_storage_offset``) fails the checks: every placed view starts past a
    guard band, so its kernel reads the guard pattern and writes into the band."""
    _require(path)
    call_paths.run_case(case, seed, path)
    with pytest.raises(failures.ConformanceError):
        call_paths.run_case(case, seed, call_paths.drops_storage_offset(path))


# -- what a call costs the host -------------------------------------------------------------------

# the thread-value stage: every release line compiles it with a dynamic layout (the predicated
# one meets DSL 4.3's ScaledBasis TypeError there, a known limitation: seen on an H100 with 4.3.5)
TIMED = Case(BUILT_IN_STAGES["tv"], DTYPES["fp16"], "align16", "dynamic", (128, 2048), "aligned")


def record(request: pytest.FixtureRequest, name: str, value) -> None:
    request.node.user_properties.append((name, json.dumps(value)))
    print(f"{name}: {json.dumps(value)}")


@pytest.mark.gpu
def test_host_time_of_one_call(seed, compiler, request):
    """Per-call host time (microseconds, median of rounds) of the compiled path with its CuTe views
    made once, and with ``from_dlpack`` views made at each call (what a caller whose tensors change
    pays), of TVM-FFI with the environment stream and with an explicit one, of an export loaded
    back (the DSL's ABI, views made at each call; TVM-FFI's), and of an implicit call
    (a few only: each traces the kernel again). Figures, no threshold: the gate runs this beside
    the other workers."""
    _require(TVM_FFI)
    case = TIMED
    compiled = runner.prepare(case, seed, compiler)
    views = [compiled.placed[name].view for name in "abc"]
    function = compiled.compiled.function
    env = call_paths.prepare(case, seed, TVM_FFI)
    explicit = call_paths.prepare(case, seed, TVM_FFI_EXPLICIT_STREAM)
    calls = {
        "compiled": compiled.launch,  # compiled(*views, CUstream(torch.cuda.current_stream().cuda_stream))
        "compiled_from_dlpack_each_call": lambda: function(*(tensors.to_cute(case, v, n) for v, n in zip(views, "abc")),
                                                           runner.current_stream()),
        "tvm_ffi_env_stream": env.launch,
        "tvm_ffi_explicit_stream": explicit.launch,
    }
    from fixtures.dsl import aot

    for name in ("aot_module", "aot_tvm_ffi"):
        path = aot.AOT_PATHS[name].call_path()
        if not path.unavailable():
            calls[name] = call_paths.prepare(case, seed, path).launch
    figures = call_paths.host_call_times(calls)
    if not IMPLICIT.unavailable():
        implicit = call_paths.prepare(case, seed, IMPLICIT)
        figures |= call_paths.host_call_times({"implicit": implicit.launch}, per_round=2, rounds=3, warmup=1)
        implicit.verify()
    record(request, "call_path_host_us", {"case": case.id, **figures})
    request.node.user_properties.append((HOST_COST_KEY, [asdict(HostCost(f"{name} call", "us", [us]))
                                                         for name, us in figures.items()]))
    for launch in (compiled, env, explicit):
        launch.verify()


@pytest.mark.gpu
@pytest.mark.xfail(strict=True, raises=AssertionError, reason=(
    "the DSL names an implicit call's function after str() of each unannotated argument (BaseDSL.mangle_name), and "
    "str() of a torch tensor prints its values: the module's hash, the in-memory cache's key, changes with the "
    "tensors' values, so every call with new data traces and compiles again (seen on an H100 with 4.8.1)"))
def test_implicit_calls_with_new_values_reuse_one_compile(seed):
    """Two implicit calls on the same operands, the second after a refill: one compile."""
    _require(IMPLICIT)
    from cutlass.cutlass_dsl import CuTeDSL

    cache = CuTeDSL._get_dsl().jit_cache
    launch = call_paths.prepare(TIMED, seed, IMPLICIT)
    before = len(cache)
    launch.launch()
    launch.refill(seed + 1)
    launch.launch()
    torch.cuda.synchronize()
    launch.verify()
    assert len(cache) - before <= 1, f"{len(cache) - before} compiles for two calls of one signature"


# -- what the CPU can check ------------------------------------------------------------------------


def _host_views(case: Case) -> dict[str, torch.Tensor]:
    placed = tensors.place_operands(case, "cpu")
    return {name: placed[name].view for name in "abc"}


HOST_CLASS = ("align16", "static", "mixed")  # every operand its own static layout: broadcasts, transposes, pitches


def _host_params(path: call_paths.CallPath) -> list:
    """The sample's ``HOST_CLASS`` case of each built-in stage, compiled on the host as ``path``
    compiles it; one a known limitation stops from compiling (or would crash) is skipped (one
    whose PTX has the accesses a defect predicts compiles: both paths compile the same PTX)."""
    params = []
    for case in sample():
        if (case.align, case.layout, _kind(case)) == HOST_CLASS:
            known = limitations.known(_as_compiled(case, path), "compile")
            stops = known is not None and known.fails_as != failures.FailsAs.UNPROVEN_ALIGNMENT
            marks = (pytest.mark.skip(reason=f"known limitation: {known.reason}"),) if stops else ()
            params.append(pytest.param(case, id=case.id, marks=marks))
    return params


@pytest.mark.compile
def test_the_sample_is_drawn_from_the_gpu_plan():
    cases = sample()
    plan = {case.id for case in matrix.cases("gpu")}
    assert [c.id for c in cases if c.id not in plan] == []
    assert len({c.id for c in cases}) == len(cases) <= 150
    for stage in BUILT_IN_STAGES.values():
        mine = [c for c in cases if c.stage is stage]
        assert {(c.align, c.layout, _kind(c)) for c in mine} == set(CLASSES), stage.name
        assert {c.dtype.id for c in mine} == set(matrix.ARITHMETIC_DTYPES), stage.name


@pytest.mark.compile
@pytest.mark.parametrize("case", _host_params(TVM_FFI))
def test_tvm_ffi_compiles_the_compiled_paths_kernel(case, compile_on_host, host_jit):
    """``--enable-tvm-ffi`` for ``--arch`` on the host: the same PTX as the compiled path's (only
    the host-side wrapper differs), the op a constant of the compile, not an argument. Host
    tensors and an explicit stream: the environment stream needs a GPU tensor to find its device."""
    _require(TVM_FFI)
    compiled = call_paths.tvm_ffi_compile(case, _host_views(case), env_stream=False, keep_ptx=True)
    ptx = getattr(getattr(compiled, "artifacts", None), "PTX", None)
    if ptx is None:
        pytest.skip("this release keeps no PTX on the compiled object (.artifacts.PTX)")
    assert ptx == compile_on_host(case).ptx


@pytest.mark.compile
def test_tvm_ffi_checks_each_calls_tensors(host_jit):
    """A TVM-FFI function checks every call's tensors against what it was compiled for (dtype,
    strides, the claimed alignment, the argument count) before it launches anything, so a call
    that breaks the compile's assumptions raises instead of computing garbage. What it cannot
    check, a view's storage offset, only the gpu tier's run shows (``drops_storage_offset``)."""
    _require(TVM_FFI)
    case = Case(_PRED, DTYPES["fp16"], "align16", "static", (128, 2048), "aligned")
    views = _host_views(case)
    compiled = call_paths.tvm_ffi_compile(case, views, env_stream=False)
    a, b, c = views["a"], views["b"], views["c"]
    misaligned = tensors.place_operands(Case(_PRED, DTYPES["fp16"], "offset", "static", (128, 2048), "aligned"), "cpu")
    transposed = torch.empty(2048, 128, dtype=torch.float16).t()
    refusals = {
        "dtype": ((a, b, c.float(), 0), r"dtype=float16"),
        "alignment": ((misaligned["a"].view, b, c, 0), r"[Mm]isaligned"),
        "strides": ((a, transposed, c, 0), r"stride"),
    }
    for what, (args, message) in refusals.items():
        with pytest.raises((TypeError, ValueError), match=message):
            compiled(*args)
    with pytest.raises(TypeError):
        compiled(a, b, c)  # no stream


@pytest.mark.compile
@pytest.mark.parametrize("case", _host_params(IMPLICIT))
def test_implicit_call_compiles_what_the_compiled_path_compiles(case, compile_on_host):
    """What an implicit call compiles for torch tensors (compiled here with ``cute.compile``, which
    converts them through the same adapter) is the compiled path's kernel for the case seen
    through a dynamic layout at the element's own alignment (``call_paths.implicit_equivalent``):
    the conversion ignores the harness's alignment claims and static layouts."""
    _require(IMPLICIT)
    views = _host_views(case)
    _, ptx = compat.compile_with_ptx(call_paths.implicit_launch(kernel_of(case.stage)), *views.values(), cuda.CUstream(0))
    assert ptx == compile_on_host(call_paths.implicit_equivalent(case)).ptx


@pytest.mark.compile
def test_a_stage_launch_annotated_cute_tensor_refuses_torch_tensors():
    """Why the implicit path calls through ``call_paths.implicit_launch``: the stages' launch
    functions annotate their tensors ``cute.Tensor``, and the DSL checks the annotation before
    it converts a ``torch.Tensor`` (ARG_ANNOTATION_MISMATCH)."""
    case = Case(_PRED, DTYPES["fp16"], "align16", "static", (128, 2048), "aligned")
    kernel = kernel_of(case.stage)
    import cutlass.cute as cute

    with pytest.raises(compat.resolve("DSLBaseError"), match="mA"):
        cute.compile(kernel.launch, *kernel.args(*_host_views(case).values(), cuda.CUstream(0)))


@pytest.mark.compile
def test_an_implicit_call_refuses_a_tensor_without_a_leading_dimension():
    """The conversion deduces the leading dimension (``mark_layout_dynamic()``); torch gives a
    1x1 tensor the strides (1, 1), so none is found and the call raises: the implicit path
    cannot take the unit family's 1x1 case (or any tensor of extent 1 in every mode)."""
    _require(IMPLICIT)
    case = Case(_PRED, DTYPES["fp16"], "align16", "dynamic", (1, 1), "unit")
    with pytest.raises(RuntimeError, match="leading dimension"):
        compat.compile_with_ptx(call_paths.implicit_launch(kernel_of(case.stage)), *_host_views(case).values(),
                                cuda.CUstream(0))


@pytest.mark.compile
@pytest.mark.xfail(strict=True, raises=AssertionError, reason=(
    "the DSL names an implicit call's function after str() of each unannotated argument (BaseDSL.mangle_name): a "
    "torch tensor's printed values, so the in-memory cache's key changes with the data (4.3.5 and 4.8.1)"))
def test_an_implicit_calls_function_name_does_not_depend_on_the_tensors_values(host_jit):
    _require(IMPLICIT)
    import cutlass.cute as cute

    case = Case(_PRED, DTYPES["fp16"], "align16", "dynamic", (128, 2048), "aligned")
    function = call_paths.implicit_launch(kernel_of(case.stage))
    views = _host_views(case)
    names = []
    for value in (0, 1):
        for view in views.values():
            view.fill_(value)
        names.append(cute.compile(function, *views.values(), cuda.CUstream(0)).function_name)
    assert names[0] == names[1], names
