"""The file-cache tier's child process: ``python -m suites.cache._cache_child SPEC.json``.

Each child is one fresh process with the DSL's file cache on (``CUTE_DSL_CACHE_DIR`` set by the
parent, ``CUTE_DSL_DISABLE_FILE_CACHING`` absent), so what it loads can only come from the folder.
It calls ``scaled_sum`` (a host-side ``@cute.jit`` function, ``res = b + k * a`` with ``k`` a
``Constexpr``, so each ``k`` is its own cache entry) once per step of the spec, and writes what it
saw as JSON to the spec's ``out`` path: per call the cache key the DSL computed, whether the
DSL's file loader returned an entry, how often the compile pipeline ran, whether it wrote an
entry, the values, the error if any, and the seconds each part took. The parent decides what
passes; this module only observes.

What it hooks (each a thin wrapper that counts and passes through, installed before the first
call): ``Compiler.compile`` (the pass pipeline: a file hit never runs it), ``BaseDSL.get_module_hash``
(the key), the file cache's ``load_cache_from_path`` and ``dump_cache_to_path`` where the DSL calls
them (``base_dsl.dsl`` up to 4.7, ``base_dsl.compile_backend`` in 4.8), and ``cache_helpers.log``
(the warnings the cache helpers give, which the DSL's logger drops unless logging is on).

Spec keys (all optional but ``out`` and ``steps``):

- ``steps``: ``[{"k": 3, "n": 16, "explicit": false}, ...]``; ``explicit`` calls
  ``cute.compile`` and then the compiled function instead of the implicit call.
- ``identity``: ``"source"`` (one DSL source file reads one byte longer), ``"dso"`` (the compiler
  library hashes differently: 4.8's baked digest, earlier releases' file bytes) or ``"flavour"``
  (the loaded compiler library carries the other CUDA flavour's tag, same digest): what a
  different DSL install would look like to the DSL's own version hash, patched in before it is
  first computed.
- ``plant``: where the DSL cannot build a JIT engine here (4.3/4.4 without a CUDA driver), write
  the entry it would have written, with its own ``dump_cache_to_path`` and CRC writer, from the
  module its pipeline compiled: those releases write an entry only after the engine is built.
- ``drop_dac``: run without CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH and CAP_FOWNER (root otherwise
  writes into a read-only folder); the child re-executes itself once with them dropped.
- ``ready`` / ``go``: touch ``ready`` once imported and hooked, then wait for ``go`` to exist
  (two children starting their calls at the same moment).
"""

from __future__ import annotations

import importlib
import json
import os
import sys
import time
from pathlib import Path

_DAC_MARK = "_CUTE_HARNESS_CACHE_CHILD_DAC"
_DAC_CAPS = {"CAP_DAC_OVERRIDE": 1, "CAP_DAC_READ_SEARCH": 2, "CAP_FOWNER": 3}
_PR_CAPBSET_DROP = 24


def _drop_dac_and_reexec(spec_path: str) -> None:
    """Drop root's permission-bypassing capabilities from the bounding set and exec this module
    again, so the new process has none of them: a root child then honours a folder's mode bits."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    failed = [name for name, cap in _DAC_CAPS.items() if libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0) != 0]
    os.environ[_DAC_MARK] = "failed: " + ",".join(failed) if failed else "dropped"
    os.execv(sys.executable, [sys.executable, "-m", "suites.cache._cache_child", spec_path])


if __name__ == "__main__":
    _SPEC_PATH = sys.argv[1]
    _SPEC = json.loads(Path(_SPEC_PATH).read_text())
    if _SPEC.get("drop_dac") and os.geteuid() == 0 and _DAC_MARK not in os.environ:
        _drop_dac_and_reexec(_SPEC_PATH)

_T0 = time.perf_counter()
import numpy as np  # noqa: E402

import cutlass  # noqa: E402
import cutlass.cute as cute  # noqa: E402
from cutlass.cute.runtime import from_dlpack  # noqa: E402

_IMPORT_S = time.perf_counter() - _T0


@cute.jit
def scaled_sum(res: cute.Tensor, a: cute.Tensor, b: cute.Tensor, k: cutlass.Constexpr):
    """``res = b + k * a``; ``k`` is a constant of the traced module, so each ``k`` is its own entry."""
    res.store(b.load() + a.load() * k)


SENTINEL = -777_777  # what res holds before the call: a call that writes nothing leaves it


def operands(n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    i = np.arange(n, dtype=np.int32)
    return np.full(n, SENTINEL, np.int32), i * 7 + 1, i[::-1] * 3 - 50


class Observed:
    """What the hooks saw during one call."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.hashes: list[str] = []
        self.key_s = 0.0
        self.compiles = 0
        self.compile_s = 0.0
        self.loads: list[bool] = []  # per file-cache lookup: did the loader return an entry
        self.load_s = 0.0
        self.dumps = 0
        self.dump_errors: list[str] = []
        self.last_module = None


SEEN = Observed()
WARNINGS: list[dict] = []  # every warning the cache helpers gave, over the whole process
IDENTITY_HITS = [0]  # how often a patched input of the DSL's version hash was read


def _describe(exc: BaseException) -> str:
    first = (str(exc).strip().splitlines() or [""])
    return f"{type(exc).__name__}: {' '.join(line.strip() for line in first)[:400]}"


def _warning_record(msg, args) -> dict:
    """A warning as the logging module would format it: ``msg % args`` must work, else Python's
    logging prints "--- Logging error ---" in its place."""
    record = {"msg": str(msg)[:600], "args": [_describe(a) if isinstance(a, BaseException) else repr(a)[:300] for a in args]}
    try:
        record["text"] = str(msg) % args if args else str(msg)
        record["formats"] = True
    except (TypeError, ValueError) as exc:
        record["text"] = None
        record["formats"] = False
        record["format_error"] = _describe(exc)
    return record


def _install_hooks() -> None:
    from cutlass._mlir import ir
    from cutlass.base_dsl import cache_helpers, compiler
    from cutlass.base_dsl import dsl as dsl_mod

    compile_ = compiler.Compiler.compile

    def counted_compile(self, module, *args, **kwargs):
        start = time.perf_counter()
        try:
            out = compile_(self, module, *args, **kwargs)
        finally:
            SEEN.compiles += 1
            SEEN.compile_s += time.perf_counter() - start
        SEEN.last_module = out if isinstance(out, ir.Module) else module
        return out

    compiler.Compiler.compile = counted_compile

    module_hash = dsl_mod.BaseDSL.get_module_hash

    def keyed(self, *args, **kwargs):
        start = time.perf_counter()
        out = module_hash(self, *args, **kwargs)
        SEEN.key_s += time.perf_counter() - start
        SEEN.hashes.append(out)
        return out

    dsl_mod.BaseDSL.get_module_hash = keyed

    callers = [dsl_mod]
    try:  # 4.8 moved the cache lookup into base_dsl.compile_backend; earlier releases have no such module
        callers.append(importlib.import_module("cutlass.base_dsl.compile_backend"))
    except ImportError:
        pass
    for mod in callers:
        if hasattr(mod, "load_cache_from_path"):
            mod.load_cache_from_path = _wrap_load(mod.load_cache_from_path)
        if hasattr(mod, "dump_cache_to_path"):
            mod.dump_cache_to_path = _wrap_dump(mod.dump_cache_to_path)

    real_log = cache_helpers.log

    class WarningsSeen:
        def __getattr__(self, name):
            return getattr(real_log(), name)

        def warning(self, msg, *args, **kwargs):
            WARNINGS.append(_warning_record(msg, args))
            return real_log().warning(msg, *args, **kwargs)

    seen = WarningsSeen()
    cache_helpers.log = lambda: seen


def _wrap_load(load):
    def counted_load(*args, **kwargs):
        start = time.perf_counter()
        try:
            out = load(*args, **kwargs)
        finally:
            SEEN.load_s += time.perf_counter() - start
        SEEN.loads.append(out is not None)
        return out

    return counted_load


def _wrap_dump(dump):
    def counted_dump(*args, **kwargs):
        SEEN.dumps += 1
        try:
            return dump(*args, **kwargs)
        except BaseException as exc:
            SEEN.dump_errors.append(_describe(exc))
            raise

    return counted_dump


def _patch_identity(kind: str) -> dict:
    """Make the DSL's version hash see a different install (before it is first computed)."""
    import builtins
    import hashlib

    cdsl = sys.modules["cutlass.cutlass_dsl.cutlass"]
    note: dict = {"identity": kind}
    baked = getattr(cdsl, "_get_baked_dso_digest", None)  # 4.8: the compiler library's build digest
    if kind == "source":
        target = os.path.realpath(cute.__file__)  # cutlass/cute/__init__.py: every release hashes it
        note["edited"] = target
        cdsl.open = _edited_open(builtins.open, target, b"\n# another build\n")
    elif kind == "dso" and baked is not None:
        def other_build(name):
            IDENTITY_HITS[0] += 1
            return hashlib.sha256(baked(name) + b"another build").digest()

        cdsl._get_baked_dso_digest = other_build
        note["via"] = "_get_baked_dso_digest"
    elif kind == "dso":  # up to 4.7 the DSL reads the library's bytes
        loaded = sys.modules["cutlass._mlir._mlir_libs._cutlass_ir"].__file__
        note["via"], note["edited"] = "file bytes", os.path.realpath(loaded)
        cdsl.open = _edited_open(builtins.open, note["edited"], b"another build")
    elif kind == "flavour":
        ext = sys.modules["cutlass._mlir._mlir_libs._cutlass_ir"]
        name = Path(ext.__file__).name
        tag = name.split(".")[1] if name.count(".") >= 2 else ""
        if not (tag.startswith("cu") and tag[2:].isdigit()):
            note["no_flavour"] = f"the loaded compiler library {name} carries no CUDA flavour tag: one build, no flavour to key"
            return note
        if baked is None:
            note["no_flavour"] = (f"this release hashes the compiler library's bytes (no baked digest by name), "
                                  f"so another flavour is another library: the dsl-binary case covers it")
            return note
        other = "cu13" if tag != "cu13" else "cu12"
        digest = baked(name)
        ext.__file__ = str(Path(ext.__file__).with_name(name.replace(f".{tag}.", f".{other}.")))
        def same_build(_name):  # the same bytes: only the tag differs
            IDENTITY_HITS[0] += 1
            return digest

        cdsl._get_baked_dso_digest = same_build
        note["from"], note["to"] = tag, other
    else:
        raise SystemExit(f"unknown identity patch {kind!r}")
    dsl_cls = getattr(cdsl, "CuTeDSL")
    clear = getattr(getattr(dsl_cls, "get_version", None), "cache_clear", None)
    if clear is not None:
        clear()
    return note


def _edited_open(real_open, target: str, extra: bytes):
    """``open`` for the DSL module's globals: ``target`` reads with ``extra`` appended."""

    class Edited:
        def __init__(self, f):
            self._f, self._tail = f, extra

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self._f.close()

        def read(self, size=-1):
            IDENTITY_HITS[0] += 1
            data = self._f.read(size)
            if size is None or size < 0 or not data:
                data, self._tail = data + self._tail, b""
            return data

    def edited_open(path, mode="r", *args, **kwargs):
        f = real_open(path, mode, *args, **kwargs)
        return Edited(f) if "b" in mode and os.path.realpath(path) == target else f

    return edited_open


def _needs_driver(exc: BaseException) -> bool:
    from fixtures.dsl import compat

    return compat.driver_missing() and compat._jit_engine_needed_a_driver(exc)


def _plant(call: dict) -> None:
    """Write the entry the DSL would have written after building its engine, with its own writer."""
    from types import SimpleNamespace

    from cutlass.base_dsl import cache_helpers

    module = SEEN.last_module
    if module is None or not call["hash"]:
        call["planted"] = "nothing compiled to plant"
        return
    cache_helpers.dump_cache_to_path(
        "CUTE_DSL",
        SimpleNamespace(ir_module=module),
        call["hash"],
        path=os.environ["CUTE_DSL_CACHE_DIR"],
        bytecode_writer=lambda f: cache_helpers.write_bytecode_with_crc32(f, module),
    )
    call["planted"] = True


def _call(step: dict, plant: bool) -> dict:
    k, n = step["k"], step.get("n", 16)
    res, a, b = operands(n)
    SEEN.reset()
    warned = len(WARNINGS)
    call: dict = {"k": k, "n": n, "explicit": bool(step.get("explicit")), "error": None, "values": None}
    start = time.perf_counter()
    try:
        if step.get("explicit"):
            compiled = cute.compile(scaled_sum, from_dlpack(res), from_dlpack(a), from_dlpack(b), k)
            compiled(from_dlpack(res), from_dlpack(a), from_dlpack(b))
        else:
            scaled_sum(from_dlpack(res), from_dlpack(a), from_dlpack(b), k)
        call["values"] = res.tolist()
    except Exception as exc:  # noqa: BLE001 - the parent judges every failure
        call["error"] = _describe(exc)
        call["error_type"] = type(exc).__name__
        call["needs_driver"] = _needs_driver(exc)
    call["seconds"] = time.perf_counter() - start
    call.update(
        hash=SEEN.hashes[-1] if SEEN.hashes else None,
        hashes=len(SEEN.hashes),
        key_s=SEEN.key_s,
        loads=SEEN.loads,
        loaded=any(SEEN.loads),
        load_s=SEEN.load_s,
        compiles=SEEN.compiles,
        compile_s=SEEN.compile_s,
        dumps=SEEN.dumps,
        dump_errors=SEEN.dump_errors,
        a=a.tolist(),
        b=b.tolist(),
        sentinel=SENTINEL,
        planted=False,
        warnings=WARNINGS[warned:],
    )
    if plant and call["error"] and call.get("needs_driver") and not step.get("explicit"):
        _plant(call)
    return call


def _writable(folder: Path) -> bool:
    """Whether this process can create a file in ``folder`` (or its nearest existing parent)."""
    while not folder.exists():
        folder = folder.parent
    probe = folder / f".probe-{os.getpid()}"
    try:
        probe.write_bytes(b"")
    except OSError:
        return False
    probe.unlink()
    return True


def main(spec: dict) -> dict:
    report: dict = {
        "pid": os.getpid(),
        "import_s": _IMPORT_S,
        "dac": os.environ.get(_DAC_MARK),
        "cache_dir": os.environ.get("CUTE_DSL_CACHE_DIR"),
    }
    from importlib.metadata import version

    report["dsl"] = version("nvidia-cutlass-dsl")
    _install_hooks()
    if spec.get("identity"):
        report["identity"] = _patch_identity(spec["identity"])
        if report["identity"].get("no_flavour"):
            return report
    report["cache_writable"] = _writable(Path(os.environ["CUTE_DSL_CACHE_DIR"]))
    if spec.get("ready"):
        Path(spec["ready"]).write_text(str(os.getpid()))
    if spec.get("go"):
        deadline = time.monotonic() + 120
        while not Path(spec["go"]).exists():
            if time.monotonic() > deadline:
                raise SystemExit("the parent never said go")
            time.sleep(0.005)
    report["calls"] = [_call(step, bool(spec.get("plant"))) for step in spec["steps"]]
    report["warnings"] = WARNINGS
    report["identity_hits"] = IDENTITY_HITS[0]
    return report


if __name__ == "__main__":
    Path(_SPEC["out"]).write_text(json.dumps(main(_SPEC)))
