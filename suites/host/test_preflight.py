"""Checks of the install itself, before any kernel: the first thing to read when validating
a driver or a DSL release. Each failure says what to fix."""

import importlib.metadata
import os
from pathlib import Path

import pytest
from packaging.version import Version

from fixtures.dsl import environment

pytestmark = pytest.mark.host


def test_libs_packages_match_the_dsl_version():
    dsl = importlib.metadata.version("nvidia-cutlass-dsl")
    libs = environment.dsl_libs_packages()
    mismatched = {name: v for name, v in libs.items() if v != dsl}
    assert not mismatched, (
        f"nvidia-cutlass-dsl is {dsl} but {mismatched}: reinstall with "
        f"`pip install --force-reinstall nvidia-cutlass-dsl=={dsl}` (it pins its libs packages)"
    )


def test_at_most_one_cuda_flavour_installed():
    flavours = [n for n in environment.dsl_libs_packages() if n.rsplit("-", 1)[1].startswith("cu")]
    assert len(flavours) <= 1, (
        f"{' and '.join(flavours)} are both installed and the DSL loads only "
        f"{environment.loaded_dsl_extension()}: uninstall the one you don't mean to use"
    )


def test_loaded_build_is_the_installed_one():
    """The IR extension mapped into the process must be the installed libs package's build."""
    loaded = environment.loaded_dsl_extension()
    assert loaded is not None, "no _cutlass_ir extension is mapped into the process: is cutlass importable?"
    path, flavour = loaded
    installed = environment.dsl_libs_flavour()
    if installed == "bundled":
        assert flavour is None, f"no libs package is installed, yet the DSL loaded a {flavour} build from {path}"
        return
    assert flavour == installed, (
        f"the DSL loaded {path} but nvidia-cutlass-dsl-libs-{installed} is what is installed: "
        f"check CUTE_DSL_LIBS={os.environ.get('CUTE_DSL_LIBS')!r} and stale site-packages"
    )
    major = environment.dsl_cuda_version().split(".")[0]
    assert flavour == f"cu{major}", f"the DSL reports CUDA {environment.dsl_cuda_version()} but loaded its {flavour} build"


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
