"""The thread tests' child process: ``python -m suites.compile._thread_child SPEC.json``.

``cute.compile`` from several threads at once can abort the whole process (SIGABRT, issue 46), so
every scenario that compiles off the main thread runs here, in a process of its own, never in a
pytest worker. The DSL's environment (``CUTE_DSL_ARCH``, ``CUTE_DSL_DUMP_DIR``) comes from the
parent, as for ``fixtures.dsl.compile_one``.

Spec keys:

- ``out``: where the JSON report goes (written only if the process lives to write it).
- ``plan``: the matrix plan the case ids are taken from (``compile``, ``gpu``).
- ``warm``: case ids compiled first, one after another on the main thread (``Compiler.on_host``):
  a process that has compiled before it goes multi-threaded (4.8.1 then aborts nearly every time).
- ``threads``: case ids, one thread each, all released at one barrier into ``Compiler.compile``
  (each thread its own ``Compiler``, so only the DSL is shared); the operands are placed before
  the barrier (CPU tensors, as ``Compiler.on_host``; on the GPU with ``launch``).
- ``lock``: every compile holds one ``threading.Lock`` (the workaround).
- ``launch``: on a GPU, each thread then fills its operands (``runner.prepare``), launches on a
  torch stream of its own and checks the result (``Launch.verify``).

``run`` is the parent's side: it starts this module on a spec and hands back what came of it.

The report has, per thread, the case, whether it compiled (and launched and conformed), the
error's cause chain if not, the compile's seconds, the PTX's sha256 and its global accesses; and
the DSL release. The parent decides what passes; this module only observes.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT_S = 180


@dataclass
class Child:
    """What came of one child: its exit status, output and report (None if it died first)."""

    returncode: int
    stdout: str
    stderr: str
    report: dict | None

    @property
    def signal(self) -> str | None:
        """The signal that killed it (``SIGABRT``), if one did."""
        return signal.Signals(-self.returncode).name if self.returncode < 0 else None

    @property
    def failed_threads(self) -> list[dict]:
        return [t for t in (self.report or {}).get("threads", []) if not t["ok"]]

    def tail(self, n: int = 1500) -> str:
        return (self.stdout + self.stderr)[-n:]

    def dsl_error(self) -> str:
        """The last line of its output that names an error: what the DSL said as the process went down."""
        lines = [ln.strip() for ln in self.stderr.splitlines() if "Error" in ln or "what():" in ln]
        return lines[-1] if lines else "(no error line)"


def run(folder: Path, **spec) -> Child:
    """This module on ``spec`` (``out`` is added) in ``folder``, from the project root, with this
    process's environment (the DSL's settings, the pinned GPU). A hang fails, with its output."""
    out, spec_path = folder / "report.json", folder / "spec.json"
    spec_path.write_text(json.dumps({"out": str(out), **spec}))
    try:
        proc = subprocess.run([sys.executable, "-m", "suites.compile._thread_child", str(spec_path)], cwd=ROOT,
                              env=dict(os.environ), capture_output=True, text=True, timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired as exc:
        raise AssertionError(f"the thread child ran past {TIMEOUT_S} s (a hang):\n{str(exc.stderr or '')[-1500:]}") from None
    report = json.loads(out.read_text()) if out.exists() else None
    return Child(proc.returncode, proc.stdout, proc.stderr, report)


def _operands(case, device: str) -> list:
    from fixtures.dsl import tensors

    placed = tensors.place_operands(case, device)
    return [tensors.to_cute(case, placed[name].view, name) for name in "abc"]


def _compile_thread(case, barrier: threading.Barrier, lock, record: dict) -> None:
    from fixtures.dsl import compat
    from fixtures.dsl.compiler import Compiler

    try:
        operands = _operands(case, "cpu")
    except Exception as exc:  # noqa: BLE001 - reported, judged by the parent
        record.update(stage="operands", error=compat.cause_chain(exc))
        barrier.abort()
        return
    start = time.perf_counter()
    try:
        barrier.wait()
        with lock:
            compiled = Compiler().compile(case, *operands)
    except BaseException as exc:  # noqa: BLE001 - reported, judged by the parent
        record.update(stage="compile", error=compat.cause_chain(exc), seconds=round(time.perf_counter() - start, 3))
        return
    record.update(ok=True, seconds=round(time.perf_counter() - start, 3),
                  ptx_sha256=hashlib.sha256(compiled.ptx.encode()).hexdigest(),
                  accesses=compiled.accesses.describe(), function=compiled.function is not None)


def _launch_thread(case, barrier: threading.Barrier, lock, record: dict) -> None:
    """Compile (under ``lock``) and place ``case`` (``runner.prepare``), launch it on a torch stream
    of this thread's own, and check it (``Launch.verify``)."""
    import torch

    from fixtures.dsl import compat, runner
    from fixtures.dsl.compiler import Compiler

    stage, start = "compile", time.perf_counter()
    try:
        barrier.wait()
        with lock:
            launch = runner.prepare(case, runner.seed_for(case.id), Compiler())
        record.update(seconds=round(time.perf_counter() - start, 3),
                      ptx_sha256=hashlib.sha256(launch.compiled.ptx.encode()).hexdigest())
        stage = "launch"
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())  # the fills, on this thread's default stream
        with torch.cuda.stream(stream):
            launch.launch()
        stream.synchronize()
        record["stream"] = stream.cuda_stream
        stage = "verify"
        launch.verify()
    except BaseException as exc:  # noqa: BLE001 - reported, judged by the parent
        record.update(stage=stage, error=compat.cause_chain(exc))
        return
    record.update(ok=True)


def main(spec_path: str) -> None:
    import contextlib
    import importlib.metadata

    from fixtures.cases import matrix
    from fixtures.dsl.compiler import Compiler

    spec = json.loads(Path(spec_path).read_text())
    known = {c.id: c for c in matrix.cases(spec.get("plan", "compile"))}
    report = {"dsl": importlib.metadata.version("nvidia-cutlass-dsl"), "warm": []}
    for case_id in spec.get("warm", ()):
        start = time.perf_counter()
        Compiler().on_host(known[case_id])
        report["warm"].append({"case": case_id, "seconds": round(time.perf_counter() - start, 3)})
    print(f"warm: {report['warm']}", flush=True)  # what the parent sees of a child that dies below
    lock = threading.Lock() if spec.get("lock") else contextlib.nullcontext()
    target = _launch_thread if spec.get("launch") else _compile_thread
    cases = [known[i] for i in spec["threads"]]
    records = [{"case": c.id, "ok": False} for c in cases]
    barrier = threading.Barrier(len(cases))
    threads = [threading.Thread(target=target, args=(c, barrier, lock, r), name=f"compile-{c.id}")
               for c, r in zip(cases, records)]
    start = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    report.update(threads=records, seconds=round(time.perf_counter() - start, 3))
    Path(spec["out"]).write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main(*sys.argv[1:])
