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
    Drill("xdist-below-floor", "pytest-xdist 3.6.0 (3.5-3.7 end every run in an INTERNALERROR)", 6,
          pip=["install", "-q", "pytest-xdist==3.6.0"]),
    Drill("numpy-below-floor", "numpy 1.25.2, below the floor", 6, pip=["install", "-q", "numpy==1.25.2"]),
    Drill("torch-missing", "torch uninstalled", 6, pip=["uninstall", "-q", "-y", "torch"]),
    Drill("torch-broken", "torch's libtorch_cpu.so deleted", 6, _break_torch),
]


def run(drill: Drill, venv: Path, scratch: Path) -> dict:
    copy = scratch / drill.name / "venv"
    subprocess.run(["cp", "-al", str(venv), str(copy)], check=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("CUTE_DSL_") and k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["DRILL_TMP"] = str(scratch / drill.name)
    python = copy / "bin" / "python"
    if drill.pip:
        subprocess.run([str(python), "-m", "pip", *drill.pip, "--disable-pip-version-check"], check=True, env=env)
    drill.setup(_site(copy), env)
    report = scratch / drill.name / "report"
    done = subprocess.run([str(python), "-m", "pytest", "suites", "-m", "host", "-q", "-p", "no:randomly", "-n", "2",
                           f"--report-dir={report}"], cwd=env.pop("DRILL_PROJECT", PROJECT), env=env, capture_output=True, text=True)
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
