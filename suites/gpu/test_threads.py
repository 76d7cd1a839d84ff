"""Compiled stages launched from several Python threads at once (issue 46): on an H100 with DSL
4.8.1 a kernel compiled once and launched from four threads computed correctly, while compiling
from four threads at once aborts the process (``suites/compile/test_compile_threads.py`` holds that
defect, a strict xfail, and runs in this gate too).

- compiled once, on this thread, then launched from four threads at once, each on a torch stream
  of its own with operands of its own, several launches back to back; every result checked with
  the harness's checks (guard bands, inputs untouched, every element written, values);
- the workaround in a child process (``suites/compile/_thread_child.py``): four threads each
  compile under one lock, then launch on a stream of their own and check their result.
"""

from __future__ import annotations

import threading

import pytest

from fixtures.cases import limitations, matrix
from suites.compile import _thread_child

pytestmark = pytest.mark.gpu

THREADS = 4
LAUNCHES = 8  # per thread, back to back on its stream; out of place, so each one writes the same result
JOIN_TIMEOUT_S = 120


def _plain(case: matrix.Case) -> bool:
    """A gpu-plan case that runs as a plain launch on this release: no known limitation, not
    large or empty, operands neither laid out apart nor shared."""
    return (limitations.known(case, "gpu") is None and case.family not in ("large", "empty")
            and case.operands is None and case.alias is None)


def _one_signature() -> list[matrix.Case]:
    """Four shapes that share one compile (``Case.signature``: a dynamic layout leaves the shape
    out): the predicated stage's dynamic row-major fp16 cases (odd shapes among them), else the
    first stage's that gives four plain ones."""
    cases = [c for c in matrix.cases("gpu") if c.dtype.id == "fp16" and c.align == "align16"
             and c.layout == "dynamic" and _plain(c)]
    for stage in dict.fromkeys(["predicated", *(c.stage.name for c in cases)]):
        own = [c for c in cases if c.stage.name == stage]
        if len(own) >= THREADS:
            return own[:THREADS]
    return []


def _four_signatures() -> list[matrix.Case]:
    """Four stages' static fp16 128x2048 cases: four compiles, four kernels."""
    return [c for c in matrix.cases("gpu") if c.dtype.id == "fp16" and c.align == "align16"
            and c.layout == "static" and c.shape == (128, 2048) and _plain(c)][:THREADS]


SETS = {"one-signature-four-shapes": _one_signature, "four-signatures": _four_signatures}


def _cases(name: str) -> list[matrix.Case]:
    cases = SETS[name]()
    if len(cases) < THREADS:
        pytest.skip(f"{name}: only {len(cases)} plain gpu cases on this release, {THREADS} wanted")
    return cases


@pytest.mark.timeout(JOIN_TIMEOUT_S + 60)
@pytest.mark.parametrize("name", list(SETS))
def test_compiled_once_launched_from_four_threads_at_once(name, seed, compiler):
    import torch

    from fixtures.dsl import runner

    cases = _cases(name)
    before = dict(compiler.compiles)  # the process's compiler: a case before this one may have compiled a signature
    launches = [runner.prepare(case, seed + i, compiler) for i, case in enumerate(cases)]  # compiled here, once a signature
    again = {c.signature for c in cases if compiler.compiles[c.signature] - before.get(c.signature, 0) > 1}
    assert not again, f"compiled more than once: {again}"
    torch.cuda.synchronize()  # the fills, before any thread launches
    barrier, streams, errors = threading.Barrier(THREADS), {}, {}

    def launch_from_a_thread(i: int) -> None:
        try:
            stream = torch.cuda.Stream()
            barrier.wait()
            with torch.cuda.stream(stream):
                for _ in range(LAUNCHES):
                    launches[i].launch()  # on torch's current stream: this thread's own
            stream.synchronize()
            streams[i] = stream.cuda_stream
        except BaseException as exc:  # noqa: BLE001 - raised on the test's thread below
            errors[i] = exc
            barrier.abort()

    threads = [threading.Thread(target=launch_from_a_thread, args=(i,)) for i in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(JOIN_TIMEOUT_S)
    assert not any(t.is_alive() for t in threads), f"a launching thread still runs after {JOIN_TIMEOUT_S} s"
    for i, exc in errors.items():
        raise AssertionError(f"{cases[i].id}: launching from a thread raised {type(exc).__name__}: {exc}") from exc
    default = torch.cuda.default_stream().cuda_stream
    assert len(set(streams.values())) == THREADS and default not in streams.values(), f"streams: {streams}"
    torch.cuda.synchronize()
    for launch in launches:
        launch.verify()


@pytest.mark.slow
@pytest.mark.timeout(_thread_child.TIMEOUT_S + 30)
def test_compiled_under_one_lock_on_four_threads_then_launched(tmp_path):
    """The workaround, end to end: each thread compiles its own signature under one lock, then
    launches on a stream of its own and checks the result (in a child: an unlocked compile
    aborts a process, and a lock that did not hold would abort this one)."""
    cases = _cases("four-signatures")
    child = _thread_child.run(tmp_path, plan="gpu", threads=[c.id for c in cases], lock=True, launch=True)
    assert child.returncode == 0 and child.report, f"the child failed (exit {child.returncode}, {child.signal}):\n{child.tail()}"
    assert not child.failed_threads, "; ".join(f"{t['case']} ({t.get('stage')}): {t.get('error', '(no error recorded)')}"
                                               for t in child.failed_threads)
    streams = [t["stream"] for t in child.report["threads"]]
    assert len(set(streams)) == THREADS, f"streams: {streams}"
