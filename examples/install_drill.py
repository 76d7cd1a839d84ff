"""The install drill: break a copy of a working install in each way a team's install breaks, run the
host tier on it, and tell how the harness answered (exit status, the line it stopped with, whether
a report was written). The table it prints is docs/install-integrity.md's.

    python examples/install_drill.py VENV [--only NAME ...] [--keep]

VENV is a virtual environment with the README's install (``nvidia-cutlass-dsl[cu13]``); it is
never changed: each drill works on a hard-linked copy (a file a drill edits is replaced, never
written through the link), removed afterwards unless ``--keep``. Drills that install an older
package need the package index.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

PROJECT = Path(__file__).resolve().parent.parent


@dataclass
class Drill:
    name: str
    breaks: str  # what is done to the copy, as the docs' table says it
    expected_exit: int
    setup: Callable[[Path, dict], None] = lambda site, env: None
    pip: list[str] = field(default_factory=list)  # pip arguments run in the copy first
    args: list[str] = field(default_factory=list)  # more pytest arguments


def _site(venv: Path) -> Path:
    return next(venv.glob("lib/python3*/site-packages"))


def _dsl_root(site: Path) -> Path:
    return site / "nvidia_cutlass_dsl"


def _cute(site: Path) -> Path:
    return _dsl_root(site) / "dsl_packages" / "cutlass" / "cute"


def _replace(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` as a new file: the copy's other hard links stay the original's."""
    path.unlink()
    path.write_text(text)


def _edit_source(site: Path, env: dict) -> None:
    typing = _cute(site) / "typing.py"
    _replace(typing, typing.read_text() + "\n# an edit after install\n")


def _delete_source(site: Path, env: dict) -> None:
    (_cute(site) / "math.py").unlink()


def _delete_runtime(site: Path, env: dict) -> None:
    for lib in _dsl_root(site).glob("cu*/lib/libcute_dsl_runtime.so"):
        lib.unlink()


def _stale_dist_info(site: Path, env: dict) -> None:
    current = next(site.glob("nvidia_cutlass_dsl-*.dist-info"))
    stale = site / "nvidia_cutlass_dsl-4.7.1.dist-info"
    shutil.copytree(current, stale, copy_function=shutil.copy)
    metadata = stale / "METADATA"
    _replace(metadata, metadata.read_text().replace(f"Version: {current.name.split('-')[1].removesuffix('.dist')}",
                                                    "Version: 4.7.1", 1))


def _shadowing_cutlass(site: Path, env: dict) -> None:
    """A ``cutlass/`` in the folder pytest runs from: on 4.8 a ``PYTHONPATH`` entry cannot shadow
    the DSL (its ``.pth`` puts it first on ``sys.path``), the working directory (``python -m``) can."""
    project = Path(env["DRILL_TMP"]) / "project"
    shutil.copytree(PROJECT, project, ignore=shutil.ignore_patterns(".tox", ".git", "runs", ".device", ".gpu", "__pycache__"))
    (project / "cutlass").mkdir()
    (project / "cutlass" / "__init__.py").write_text("# a folder named cutlass where the run starts\n")
    env["DRILL_PROJECT"] = str(project)


def _libs_nowhere(site: Path, env: dict) -> None:
    env["CUTE_DSL_LIBS"] = "/opt/nowhere/libcute_dsl_runtime.so"


def _libs_other_flavour(site: Path, env: dict) -> None:
    env["CUTE_DSL_LIBS"] = str(_dsl_root(site) / "cu12" / "lib" / "libcute_dsl_runtime.so")


def _tvm_ffi_switch(site: Path, env: dict) -> None:
    env["CUTE_DSL_ENABLE_TVM_FFI"] = "1"


def _break_torch(site: Path, env: dict) -> None:
    (site / "torch" / "lib" / "libtorch_cpu.so").unlink()


def _truncate(path: Path) -> None:
    data = path.read_bytes()
    path.unlink()
    path.write_bytes(data[: len(data) // 2])


def _cache_dir_under_file(site: Path, env: dict) -> None:
    plain = Path(env["DRILL_TMP"]) / "plain-file"
    plain.write_text("")
    env["CUTE_DSL_CACHE_DIR"] = str(plain / "cute-cache")


def _truncate_numpy_core(site: Path, env: dict) -> None:
    _truncate(next((site / "numpy" / "_core").glob("_multiarray_umath*.so")))


def _truncate_tvm_ffi_core(site: Path, env: dict) -> None:
    _truncate(next((site / "tvm_ffi").glob("core*.so")))


def _mlir_libs(site: Path) -> Path:
    return _dsl_root(site) / "dsl_packages" / "cutlass" / "_mlir" / "_mlir_libs"


def _orphan_build(site: Path, env: dict) -> None:
    """A ``_cutlass_ir`` of a flavour no installed package ships (its libs package uninstalled by hand)."""
    build = next(_mlir_libs(site).glob("_cutlass_ir.cu1*.so"))
    flavour = build.name.split(".")[1]
    other = "cu13" if flavour == "cu12" else "cu14"
    shutil.copy(build, build.with_name(build.name.replace(f".{flavour}.", f".{other}.")))


def _edit_and_drop_record_row(site: Path, env: dict) -> None:
    """The layout-algebra file edited and its RECORD row deleted: the edit passes the hash check."""
    core = _cute(site) / "core.py"
    _replace(core, core.read_text() + "\n# an edit after install\n")
    record = next(site.glob("nvidia_cutlass_dsl_libs_core-*.dist-info")) / "RECORD"
    _replace(record, "".join(ln for ln in record.read_text().splitlines(keepends=True) if "/cutlass/cute/core.py," not in ln))


def _stale_pyc(site: Path, env: dict) -> None:
    """``cute.where`` edited to swap its operands (same size), byte-compiled (as an import that may
    write byte-code does), the source put back with its old time stamp: Python keeps running the
    edited byte-code."""
    tensor = _cute(site) / "tensor.py"
    original = tensor.read_text()
    stamp = tensor.stat().st_mtime
    edited = original.replace("res_val = arith.select(cond_val, x, y", "res_val = arith.select(cond_val, y, x", 1)
    if edited == original:
        raise RuntimeError("cute/tensor.py: where's select not found")
    _replace(tensor, edited)
    os.utime(tensor, (stamp, stamp))
    for cached in (tensor.parent / "__pycache__").glob("tensor.*.pyc"):  # else its header, time and size alike, is trusted
        cached.unlink()
    compile_it = f"import importlib.util, py_compile; py_compile.compile({str(tensor)!r}, cfile=importlib.util.cache_from_source({str(tensor)!r}))"
    subprocess.run([str(site.parents[2] / "bin" / "python"), "-c", compile_it], check=True, capture_output=True)
    _replace(tensor, original)
    os.utime(tensor, (stamp, stamp))


def _pth_patch(site: Path, env: dict) -> None:
    """A ``.pth`` that imports a module replacing ``cute.where`` in every process."""
    (site / "cute_where_patch.py").write_text(
        "import cutlass.cute as _cute\n_where = _cute.where\n\n\ndef where(cond, a, b, *args, **kwargs):\n"
        "    return _where(cond, b, a, *args, **kwargs)\n\n\n_cute.where = where\n")
    (site / "zz_cute_where_patch.pth").write_text("import cute_where_patch\n")


def _fake_driver(env: dict, cuda: int) -> None:
    """A ``libcuda.so.1`` that reports CUDA ``cuda`` (12080: 12.8), first on ``LD_LIBRARY_PATH``."""
    folder = Path(env["DRILL_TMP"]) / "driver"
    folder.mkdir()
    (folder / "fake.c").write_text(f"int cuDriverGetVersion(int *v) {{ *v = {cuda}; return 0; }}\n")
    subprocess.run(["gcc", "-shared", "-fPIC", "-o", str(folder / "libcuda.so.1"), str(folder / "fake.c")], check=True)
    env["LD_LIBRARY_PATH"] = os.pathsep.join(p for p in (str(folder), env.get("LD_LIBRARY_PATH", "")) if p)


def _old_driver(site: Path, env: dict) -> None:
    _fake_driver(env, 11080)


def _driver_for_cpu_torch(site: Path, env: dict) -> None:
    _fake_driver(env, 13000)


def _cutlass_py_in_checkout(site: Path, env: dict) -> None:
    project = Path(env["DRILL_TMP"]) / "project"
    shutil.copytree(PROJECT, project, ignore=shutil.ignore_patterns(".tox", ".git", "runs", ".device", ".gpu", "__pycache__"))
    (project / "cutlass.py").write_text("# a module named cutlass where the run starts\n")
    env["DRILL_PROJECT"] = str(project)


def _dev_tree_pth(site: Path, env: dict) -> None:
    """A dev tree put first on ``sys.path`` by a ``.pth`` read after the DSL's."""
    tree = Path(env["DRILL_TMP"]) / "cutlass-dev"
    (tree / "cutlass").mkdir(parents=True)
    (tree / "cutlass" / "__init__.py").write_text("# a dev tree\n")
    (site / "zz_cutlass_dev.pth").write_text(f"import sys; sys.path.insert(0, {str(tree)!r})\n")


def _torch_on_pythonpath(site: Path, env: dict) -> None:
    other = Path(env["DRILL_TMP"]) / "other-torch"
    (other / "torch").mkdir(parents=True)
    (other / "torch" / "__init__.py").write_text("__version__ = '0.0'\n")
    env["PYTHONPATH"] = str(other)


def _tvm_ffi_on(site: Path, env: dict) -> None:
    env["CUTE_DSL_ENABLE_TVM_FFI"] = "1"


def _optimize(site: Path, env: dict) -> None:
    env["PYTHONOPTIMIZE"] = "1"


DRILLS = [
    Drill("control", "nothing: the README's install as it is", 0),
    Drill("edited-source", "one DSL source file edited (cute/typing.py)", 6, _edit_source),
    Drill("deleted-source", "one DSL source file deleted (cute/math.py)", 6, _delete_source),
    Drill("runtime-missing", "the runtime library deleted (cu*/lib/libcute_dsl_runtime.so)", 6, _delete_runtime),
    Drill("stale-dist-info", "a stale duplicate nvidia_cutlass_dsl-4.7.1.dist-info beside the real one", 6, _stale_dist_info),
    Drill("top-downgraded", "nvidia-cutlass-dsl downgraded alone to 4.7.1 (--no-deps)", 6,
          pip=["install", "-q", "--no-deps", "nvidia-cutlass-dsl==4.7.1"]),
    Drill("libs-without-top", "nvidia-cutlass-dsl uninstalled, its libs packages left", 6,
          pip=["uninstall", "-q", "-y", "nvidia-cutlass-dsl"]),
    Drill("shadowing-cutlass", "a cutlass/ folder in the folder the run starts from", 6, _shadowing_cutlass),
    Drill("libs-nowhere", "CUTE_DSL_LIBS names a file that does not exist", 6, _libs_nowhere),
    Drill("libs-other-flavour", "CUTE_DSL_LIBS names the cu12 runtime while the cu13 build loads", 6, _libs_other_flavour),
    Drill("tvm-ffi-switch", "CUTE_DSL_ENABLE_TVM_FFI=1 without apache-tvm-ffi", 6, _tvm_ffi_switch),
    Drill("xdist-below-floor", "pytest-xdist 3.4.0, below the floor", 6, pip=["install", "-q", "pytest-xdist==3.4.0"]),
    Drill("numpy-below-floor", "numpy 1.25.2, below the floor", 6, pip=["install", "-q", "numpy==1.25.2"]),
    Drill("torch-missing", "torch uninstalled", 6, pip=["uninstall", "-q", "-y", "torch"]),
    Drill("torch-broken", "torch's libtorch_cpu.so deleted", 6, _break_torch),
    # issue 62
    Drill("cache-dir-under-file", "CUTE_DSL_CACHE_DIR under a regular file", 6, _cache_dir_under_file),
    Drill("numpy-core-truncated", "numpy's _multiarray_umath .so cut to half its size", 6, _truncate_numpy_core),
    Drill("tvm-ffi-core-truncated", "apache-tvm-ffi's core .so cut to half its size", 6, _truncate_tvm_ffi_core),
    Drill("orphan-build", "a _cutlass_ir build of a flavour no installed package owns", 6, _orphan_build),
    Drill("cuda-bindings-old", "cuda-bindings 11.8.7 (the DSL requires >=12.8)", 6,
          pip=["install", "-q", "--no-deps", "cuda-bindings==11.8.7"]),
    Drill("stale-pyc", "cute.where's operands swapped in its .pyc, the source put back with its time stamp", 6, _stale_pyc),
    Drill("pth-patch", "a .pth importing a module that replaces cute.where", 6, _pth_patch),
    Drill("edit-record-row-deleted", "cute/core.py edited and its RECORD row deleted", 6, _edit_and_drop_record_row),
    Drill("old-driver-first", "a libcuda.so.1 of CUDA 11.8 first on LD_LIBRARY_PATH", 6, _old_driver),
    Drill("cpu-torch-with-driver", "a CPU torch, a driver of CUDA 13.0, --require-gpu", 6, _driver_for_cpu_torch,
          args=["--require-gpu"]),
    Drill("cutlass-py-in-checkout", "a cutlass.py in the folder the run starts from", 6, _cutlass_py_in_checkout),
    Drill("dev-tree-pth", "a dev tree's cutlass/ put first on sys.path by a .pth", 6, _dev_tree_pth),
    Drill("torch-on-pythonpath", "a second torch on PYTHONPATH", 6, _torch_on_pythonpath),
    Drill("tvm-ffi-on", "not broken: CUTE_DSL_ENABLE_TVM_FFI=1 with apache-tvm-ffi installed", 0, _tvm_ffi_on),
    Drill("optimize", "not broken: PYTHONOPTIMIZE=1", 0, _optimize),
]


def run(drill: Drill, venv: Path, scratch: Path) -> dict:
    copy = scratch / drill.name / "venv"
    subprocess.run(["cp", "-al", str(venv), str(copy)], check=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("CUTE_DSL_") and k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["DRILL_TMP"] = str(scratch / drill.name)
    python = copy / "bin" / "python"
    if drill.pip:
        has_pip = subprocess.run([str(python), "-m", "pip", "--version"], capture_output=True).returncode == 0
        command = ([str(python), "-m", "pip", *drill.pip, "--disable-pip-version-check"] if has_pip  # a venv uv made has no pip
                   else ["uv", "pip", drill.pip[0], "--python", str(python), *(a for a in drill.pip[1:] if a != "-y")])
        subprocess.run(command, check=True, env=env)
    drill.setup(_site(copy), env)
    report = scratch / drill.name / "report"
    done = subprocess.run([str(python), "-m", "pytest", "suites", "-m", "host", "-q", "-p", "no:randomly", "-n", "2",
                           f"--report-dir={report}", *drill.args], cwd=env.pop("DRILL_PROJECT", PROJECT), env=env, capture_output=True, text=True)
    lines = [ln for ln in (done.stdout + done.stderr).splitlines() if ln.strip()]
    said = next((ln for ln in lines if ln.startswith(("Exit: ", "ERROR: ", "INTERNALERROR>"))), None)
    said = said or next((ln for ln in lines if ln.startswith(("PASSED", "FAILED", "NOT PASSED", "NOTHING RAN"))), lines[-1] if lines else "")
    results = report / "results.json"
    status = json.loads(results.read_text())["status"] if results.exists() else None
    return {"drill": drill.name, "breaks": drill.breaks, "exit": done.returncode, "expected": drill.expected_exit,
            "report": status, "said": said}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("venv", type=Path)
    parser.add_argument("--only", nargs="*", default=None)
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args(argv)
    if not (args.venv / "pyvenv.cfg").is_file():
        parser.error(f"{args.venv}: not a virtual environment (no pyvenv.cfg)")
    unknown = set(args.only or ()) - {d.name for d in DRILLS}
    if unknown:
        parser.error(f"--only: no drill named {', '.join(sorted(unknown))}")
    scratch = Path(tempfile.mkdtemp(prefix="install-drill-"))
    rows = []
    try:
        for drill in DRILLS:
            if args.only is None or drill.name in args.only:
                (scratch / drill.name).mkdir()
                rows.append(run(drill, args.venv.resolve(), scratch))
                print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
    finally:
        if not args.keep:
            shutil.rmtree(scratch, ignore_errors=True)
    print("| drill | broken | exit (expected) | report | the line it stopped with |\n|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['drill']} | {r['breaks']} | {r['exit']} ({r['expected']}) | {r['report'] or 'none'} | `{r['said']}` |")
    return 0 if all(r["exit"] == r["expected"] and r["report"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
