"""Checks of the install itself, before any kernel: the first thing to read when validating
a driver or a DSL release. Each failure says what to fix. (The packages' versions, files and
imports are checked as the run starts: ``fixtures.plugin.install``.)"""

import os
from pathlib import Path

import pytest
from packaging.version import Version

from fixtures.dsl import environment

pytestmark = pytest.mark.host


def test_loaded_build_is_the_one_the_loader_picks():
    """Both CUDA flavours may be installed (``nvidia-cutlass-dsl[cu13]`` brings cu12 too): the
    DSL's loader takes the newest build the driver covers, the newest without a driver. The
    build mapped into the process must be that one, and its libs package installed."""
    loaded = environment.loaded_dsl_extension()
    assert loaded is not None, "no _cutlass_ir extension is mapped into the process: is cutlass importable?"
    path, flavour = loaded
    mlir_libs = environment.mlir_libs_dir()
    choice = environment.loader_choice(mlir_libs, environment.driver_cuda_version())
    if not choice.installed:
        assert flavour is None, f"this release installs one untagged build, yet a {flavour} build was loaded from {path}"
        assert not environment.installed_flavours(), (
            f"{environment.installed_flavours()} libs packages are installed beside a release that bundles its build: "
            "uninstall them (`pip uninstall nvidia-cutlass-dsl-libs-cu12 nvidia-cutlass-dsl-libs-cu13`)"
        )
        return
    assert flavour == choice.chosen, (
        f"the DSL loaded its {flavour} build ({path}) but its loader's rule picks {choice.chosen} ({choice.why()}): "
        f"check CUTE_DSL_LIBS={os.environ.get('CUTE_DSL_LIBS')!r} and stale files in {mlir_libs}"
    )
    assert f"nvidia-cutlass-dsl-libs-{flavour}" in environment.dsl_libs_packages(), (
        f"the DSL loaded its {flavour} build from {path}, but nvidia-cutlass-dsl-libs-{flavour} is not installed: "
        f"a file left behind by an uninstall; `pip install --force-reinstall 'nvidia-cutlass-dsl[{flavour}]'`"
    )
    major = environment.dsl_cuda_version().split(".")[0]
    assert flavour == f"cu{major}", f"the DSL reports CUDA {environment.dsl_cuda_version()} but loaded its {flavour} build"


def test_runtime_library_is_the_loaded_builds(host_jit):
    """A host-side JIT call loads the DSL's runtime library: from ``CUTE_DSL_LIBS`` where it is
    set, else from the loaded flavour's ``cu<N>/lib``. A runtime of another flavour beside the
    loaded IR build is a mixed install."""
    from fixtures.dsl import _host_probe

    _host_probe.run()
    runtime = environment.loaded_runtime_library()
    assert runtime is not None, "a host-side JIT call ran, but no libcute_dsl_runtime.so is mapped into the process"
    chosen = os.environ.get("CUTE_DSL_LIBS")
    if chosen:
        assert any(Path(runtime).samefile(p) for p in chosen.split(os.pathsep) if Path(p).exists()), (
            f"CUTE_DSL_LIBS={chosen!r}, but the DSL loaded its runtime from {runtime}"
        )
        return
    flavour = environment.loaded_flavour()
    if flavour != "bundled":
        assert Path(runtime).parent.parent.name == flavour, (
            f"the DSL's {flavour} build loaded the runtime library {runtime}: a mixed install; "
            f"`pip install --force-reinstall 'nvidia-cutlass-dsl[{flavour}]'`"
        )


@pytest.mark.gpu
def test_driver_is_new_enough_for_the_dsl():
    """CUDA's minor-version compatibility lets a 13.x build run on any 13.y driver (the DSL ships
    cubins, not PTX for the driver to JIT), so only the major version must be covered."""
    fp = environment.fingerprint()
    if fp.dsl_cuda == environment.UNKNOWN:  # 4.3 has no cutlass.CUDA_VERSION (seen on an H100 with 4.3.5)
        pytest.skip(f"DSL {fp.dsl} does not report the CUDA version it was built for")
    assert Version(fp.driver_cuda).major >= Version(fp.dsl_cuda).major, (
        f"driver {fp.driver} supports CUDA {fp.driver_cuda}, older than the CUDA {Version(fp.dsl_cuda).major} "
        f"the DSL's {fp.dsl_libs} build needs: update the driver or install the DSL's cu12 libs"
    )


def test_compile_cache_is_isolated_per_run():
    """Kernels must come from this run's compiles, not a file cache a previous install left."""
    assert os.environ.get("CUTE_DSL_DISABLE_FILE_CACHING") == "1", "the harness did not disable the DSL file cache"
    dump = Path(os.environ["CUTE_DSL_DUMP_DIR"])
    assert dump.is_dir() and os.access(dump, os.W_OK), f"dump folder {dump} is missing or read-only"
    assert dump.resolve() != Path.cwd().resolve(), "PTX dumps would land in the working directory"
