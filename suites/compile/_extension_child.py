"""The extension-compiler test's child: ``python -m suites.compile._extension_child OUT.json PLAN CASE_ID...``.

Compiles each case for ``--arch`` (``Compiler.on_host``, ``CUTE_DSL_ARCH`` from the parent) in a
fresh process, so the DSL reads ``CUTE_DSL_USE_EXTENSION_COMPILER`` as the parent set it (the DSL
reads its settings once, at import). Before the first compile it wraps two of the DSL's own
methods, each passing through and noting what it returned:

- ``CuTeDSL.generate_func_op``: the operation each kernel is traced into (``cuda.kernel`` on the
  legacy route, ``lir.func`` on the extension route);
- ``CuTeDSL._get_pipeline``: the pass pipeline each compile ran (the extension route starts with
  ``lir-to-cute-dsl``).

It writes, as JSON to ``OUT.json``: the compiler the fingerprint reports
(``fixtures.dsl.environment.dsl_compiler``), and per case the kernel operations, the pipelines
(each path in it reduced to ``<path>``), the PTX's sha256, its ``.version``/``.target`` header and
its global accesses. The parent decides what passes; this module only observes.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from pathlib import Path


def _hook(seen: dict) -> None:
    from cutlass.cutlass_dsl import CuTeDSL

    # 4.8's internals, reached by name: the test runs this child only where the switch exists (4.8+),
    # and the api tier holds every name spelled directly to every release
    generate_func_op, get_pipeline = getattr(CuTeDSL, "generate_func_op"), CuTeDSL._get_pipeline

    def noting_generate_func_op(self, *args, **kwargs):
        op = generate_func_op(self, *args, **kwargs)
        seen["kernel_ops"].append(getattr(op, "operation", op).name)
        return op

    def noting_get_pipeline(self, *args, **kwargs):
        pipeline = get_pipeline(self, *args, **kwargs)
        seen["pipelines"].append(re.sub(r"'[^']*'", "<path>", " ".join(str(pipeline).split())))
        return pipeline

    setattr(CuTeDSL, "generate_func_op", noting_generate_func_op)
    CuTeDSL._get_pipeline = noting_get_pipeline


def main(out: str, plan: str, *case_ids: str) -> None:
    from fixtures.cases import matrix
    from fixtures.dsl import environment
    from fixtures.dsl.compiler import Compiler

    known = {c.id: c for c in matrix.cases(plan)}
    report = {"compiler": environment.dsl_compiler(), "cases": {}}
    seen: dict = {}
    _hook(seen)
    compiler = Compiler()
    for case_id in case_ids:
        seen.update(kernel_ops=[], pipelines=[])
        compiled = compiler.on_host(known[case_id])
        accesses = compiled.accesses
        header = [ln.strip() for ln in compiled.ptx.splitlines() if ln.startswith((".version", ".target"))]
        report["cases"][case_id] = {
            "kernel_ops": seen["kernel_ops"], "pipelines": seen["pipelines"],
            "ptx_sha256": hashlib.sha256(compiled.ptx.encode()).hexdigest(), "ptx_header": header,
            "loads": {str(w): n for w, n in sorted(accesses.loads.items())},
            "stores": {str(w): n for w, n in sorted(accesses.stores.items())},
            "accesses": accesses.describe(),
        }
    Path(out).write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main(*sys.argv[1:])
