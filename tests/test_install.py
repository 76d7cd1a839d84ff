"""The install checks at start: each kind of broken install is found and named, with its repair,
and a sound one passes (fake packages in temporary folders; end-to-end, a run stops with exit 6
and writes its report). ``examples/install_drill.py`` breaks a real install the same ways."""

import base64
import hashlib
import json
import os

import pytest

from fixtures.dsl import compat
from fixtures.plugin import distributions, install
from reports import summary
from reports.model import INSTALL_BROKEN_EXIT, Fingerprint, InstallFinding, RunResult

pytestmark = pytest.mark.harness


def _record_line(root, relative: str) -> str:
    digest = hashlib.sha256((root / relative).read_bytes()).digest()
    return f"{relative},sha256={base64.urlsafe_b64encode(digest).rstrip(b'=').decode()},{(root / relative).stat().st_size}"


def make_dist(site, name: str, version: str, files: dict[str, str]) -> None:
    """A package ``name`` installed into ``site`` with ``files``, its RECORD hashing each."""
    info = site / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    for relative, text in files.items():
        (site / relative).parent.mkdir(parents=True, exist_ok=True)
        (site / relative).write_text(text)
    lines = [_record_line(site, relative) for relative in files]
    (info / "RECORD").write_text("\n".join([*lines, f"{info.name}/RECORD,,"]) + "\n")


@pytest.fixture
def site(tmp_path):
    site = tmp_path / "site"
    make_dist(site, "nvidia-cutlass-dsl", "4.8.1", {"nvidia_cutlass_dsl.pth": "import os\n"})
    make_dist(site, "nvidia-cutlass-dsl-libs-core", "4.8.1",
              {"nvidia_cutlass_dsl/pkg/cutlass/__init__.py": "", "nvidia_cutlass_dsl/pkg/cutlass/cute/typing.py": "Int8 = 8\n"})
    return site


def dsl_of(site):
    return install.dsl_distributions(install.installed([str(site)]))


def test_an_intact_install_has_no_findings(site):
    dsl = dsl_of(site)
    assert sorted(d.metadata["Name"] for d in dsl) == ["nvidia-cutlass-dsl", "nvidia-cutlass-dsl-libs-core"]
    assert [f for d in dsl for f in install.record_findings(d)] == []
    assert install.version_findings(dsl) == []


def test_an_edited_file_is_found_with_its_package_and_repair(site):
    typing = site / "nvidia_cutlass_dsl/pkg/cutlass/cute/typing.py"
    typing.write_text("Int8 = 7\n")
    (finding,) = [f for d in dsl_of(site) for f in install.record_findings(d)]
    assert finding.cause == "files" and finding.subject == "nvidia-cutlass-dsl-libs-core 4.8.1"
    assert "1 of its 2 files are not as installed: 1 changed (nvidia_cutlass_dsl/pkg/cutlass/cute/typing.py)" in finding.detail
    assert finding.repair == "`pip install --force-reinstall --no-deps nvidia-cutlass-dsl-libs-core==4.8.1`"


def test_a_deleted_file_is_found(site):
    (site / "nvidia_cutlass_dsl/pkg/cutlass/cute/typing.py").unlink()
    (finding,) = [f for d in dsl_of(site) for f in install.record_findings(d)]
    assert "1 missing (nvidia_cutlass_dsl/pkg/cutlass/cute/typing.py)" in finding.detail


def test_libs_at_another_version_than_the_top_package(site):
    make_dist(site, "nvidia-cutlass-dsl-libs-cu13", "4.7.1", {"nvidia_cutlass_dsl/cu13/lib/x.so": "x"})
    (finding,) = install.version_findings(dsl_of(site))
    assert finding.cause == "mixed" and "nvidia-cutlass-dsl-libs-cu13 4.7.1" in finding.detail
    assert "nvidia-cutlass-dsl==4.8.1" in finding.repair


def test_libs_without_the_top_package(tmp_path):
    make_dist(tmp_path, "nvidia-cutlass-dsl-libs-base", "4.8.1", {"a.py": ""})
    (finding,) = install.version_findings(dsl_of(tmp_path))
    assert finding.subject == "nvidia-cutlass-dsl" and "is not installed, but nvidia-cutlass-dsl-libs-base 4.8.1 are" in finding.detail


def test_a_stale_duplicate_dist_info_is_found(site, tmp_path):
    """A stale ``dist-info`` beside the real one: which one pip names is the folder's listing order."""
    make_dist(site, "nvidia-cutlass-dsl", "4.7.1", {"y.py": ""})
    dists = install.installed([str(site), str(site)])  # a folder listed twice is read once
    (finding,) = install.duplicate_findings(dists, ["nvidia-cutlass-dsl", "torch"])
    assert finding.cause == "duplicate" and f"2 installs in one folder (" in finding.detail and f" in {site}): a stale" in finding.detail
    assert {"4.7.1", "4.8.1"} <= set(finding.detail.replace("(", " ").split())
    assert install.version_findings(install.dsl_distributions(dists)) == []  # the duplicate is the finding, not a mix


def _site_of(tmp_path, folder: str, module: str, version: str | None, monkeypatch):
    """A site folder ``folder`` on ``sys.path`` (appended: each later one is found after) holding
    package ``fake-<module>`` at ``version`` (None: nothing), its module ``module``."""
    site = tmp_path / folder
    site.mkdir()
    if version is not None:
        make_dist(site, f"fake-{module}", version, {f"{module}/__init__.py": f"__version__ = '{version}'\n"})
    monkeypatch.setattr("sys.path", [*__import__("sys").path, str(site)])
    return site


def test_a_venv_over_system_packages_is_one_install(tmp_path, monkeypatch):
    """``python3 -m venv --system-site-packages``: the user site (an unrelated package), then the
    venv's site-packages, then the system's, each holding a copy of the package: the venv's copy is
    both the one imported and the one named, so it is one install (issue 68's false red)."""
    import importlib

    module = f"venvmod{abs(hash(str(tmp_path)))}"
    user = _site_of(tmp_path, "user", module, None, monkeypatch)
    make_dist(user, "unrelated", "1.0", {"unrelated_mod.py": ""})
    venv = _site_of(tmp_path, "venv", module, "26.4", monkeypatch)
    _site_of(tmp_path, "system", module, "26.2", monkeypatch)
    importlib.invalidate_caches()
    dists = install.installed([str(tmp_path / f) for f in ("user", "venv", "system")])
    assert [distributions.dist_name(d) for d in dists].count(f"fake-{module}") == 2
    assert install.duplicate_findings(dists, [f"fake-{module}", "unrelated"]) == []
    # the venv's copy gone but its dist-info left: the one named (26.4) is not the one imported (26.2)
    (venv / module / "__init__.py").unlink()
    (venv / module).rmdir()
    importlib.invalidate_caches()
    (finding,) = install.duplicate_findings(dists, [f"fake-{module}"])
    assert finding.detail == (f"2 installs on the path: 26.4 in {venv} is the one named, but `import {module}` finds 26.2 in "
                              f"{tmp_path / 'system'}")
    assert finding.repair.startswith(f"`rm -r {venv / f'fake_{module}-26.4.dist-info'}`")


_VENV_VERDICT = """
import json, sys
from fixtures.plugin import distributions, install
dists = install.installed()
names = [distributions.dist_name(d) for d in install.dsl_distributions(dists)] + ["torch", *install._required_names(install.REQUIREMENTS)]
found = install.duplicate_findings(dists, names) + install.shadow_findings(dists) + install.requirement_findings(install.REQUIREMENTS, dists)
print(json.dumps({"path": sys.path, "findings": [f.detail for f in found]}))
"""


@pytest.mark.parametrize("how", ["venv", "symlinked-venv"])
def test_a_real_venv_with_system_site_packages_is_green(tmp_path, how):
    """A real ``python3 -m venv --system-site-packages`` over this install, ``packaging`` copied into
    it at another version (as pip would put it there), a user site with an unrelated package: the
    checks that read copies find nothing; a stale ``numpy`` dist-info in the venv is still found."""
    import shutil
    import subprocess
    import sys
    import sysconfig

    import packaging

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", str(venv)], check=True)
    relative = os.path.relpath(sysconfig.get_paths()["purelib"], sys.prefix)
    inside = venv / relative
    system = __import__("pathlib").Path(packaging.__file__).parents[1]
    shutil.copytree(system / "packaging", inside / "packaging")
    (info,) = system.glob("packaging-*.dist-info")
    shutil.copytree(info, inside / "packaging-0.0.1.dist-info")
    metadata = inside / "packaging-0.0.1.dist-info" / "METADATA"
    metadata.write_text("\n".join("Version: 99.0" if line.startswith("Version:") else line
                                  for line in metadata.read_text().splitlines()) + "\n")
    user = tmp_path / "user"
    make_dist(user / relative.replace(sys.prefix, ""), "unrelated", "1.0", {"unrelated_mod.py": ""})
    python = venv / "bin" / "python"
    if how == "symlinked-venv":
        (tmp_path / "link").symlink_to(venv)
        python = tmp_path / "link" / "bin" / "python"
    env = {**os.environ, "PYTHONUSERBASE": str(user)}
    env.pop("PYTHONNOUSERSITE", None)
    root = __import__("pathlib").Path(install.__file__).parents[2]

    def verdict():
        out = subprocess.run([str(python), "-c", _VENV_VERDICT], cwd=root, env=env, capture_output=True, text=True, check=True)
        return json.loads(out.stdout.splitlines()[-1])

    seen = verdict()
    assert any(p.startswith(str(python.parents[1])) for p in seen["path"]) and any(p.startswith(str(user)) for p in seen["path"])
    assert seen["findings"] == []
    stale = inside / "numpy-99.0.dist-info"
    (numpy_info,) = system.glob("numpy-*.dist-info")
    shutil.copytree(numpy_info, stale)
    (detail,) = verdict()["findings"]
    assert detail.startswith("2 installs on the path: ") and "`import numpy` finds" in detail


def test_a_module_shadowing_the_installed_one(site, tmp_path, monkeypatch):
    shadow = tmp_path / "cwd"
    (shadow / "fakemod").mkdir(parents=True)
    (shadow / "fakemod" / "__init__.py").write_text("")
    make_dist(site, "fakepkg", "1.0", {"fakemod/__init__.py": ""})
    dists = install.installed([str(site)])
    monkeypatch.syspath_prepend(str(site))
    assert install.shadow_findings(dists, {"fakemod": "fakepkg"}) == []
    monkeypatch.syspath_prepend(str(shadow))
    (finding,) = install.shadow_findings(dists, {"fakemod": "fakepkg"})
    assert finding.cause == "shadowed" and f"imports from {shadow / 'fakemod' / '__init__.py'}, not fakepkg's" in finding.detail
    assert str(shadow / "fakemod") in finding.repair


def test_requirement_floors_not_ceilings(site, tmp_path):
    make_dist(site, "fakepkg", "1.0", {"f.py": ""})
    requirements = tmp_path / "pyproject.toml"
    requirements.write_text('[project]\ndependencies = ["fakepkg>=0.5,<0.9", "absentpkg>=1; python_version < \'3\'"]\n')
    dists = install.installed([str(site)])
    assert install.requirement_findings(requirements, dists) == []  # a ceiling is not enforced; a marker that does not apply
    requirements.write_text('[project]\ndependencies = ["fakepkg>=3.8", "absentpkg>=1"]\n')
    below, absent = install.requirement_findings(requirements, dists)
    assert below.subject == "fakepkg" and below.detail == "1.0 is below what pyproject.toml asks for (>=3.8)"
    assert absent.subject == "absentpkg" and absent.detail.startswith("not installed")


def test_an_import_that_fails_is_one_finding_with_its_cause(tmp_path, monkeypatch):
    (tmp_path / "brokenmod.py").write_text("raise OSError('libtorch_cpu.so: cannot open shared object file')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    (finding,) = install.import_findings("brokenmod", "brokenpkg")
    assert finding.cause == "import"
    assert finding.detail == "does not import: OSError: libtorch_cpu.so: cannot open shared object file"
    assert install.import_findings("json", "json") == []


def test_a_variable_the_dsl_refuses_names_the_variable_not_a_reinstall(tmp_path, monkeypatch):
    """An import that fails on the DSL's environment reader refusing a value (4.8:
    ``CUTE_DSL_USE_EXTENSION_COMPILER=maybe``) is the variable's finding, repaired by setting it."""
    (tmp_path / "strictmod.py").write_text(
        "try:\n    raise ValueError(\"Invalid value for environment variable CUTE_DSL_USE_EXTENSION_COMPILER='maybe'. "
        "Expected a boolean\")\nexcept ValueError as e:\n    raise RuntimeError('init failed') from e\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    (finding,) = install.import_findings("strictmod", "strictpkg")
    assert (finding.cause, finding.subject) == ("environment", "CUTE_DSL_USE_EXTENSION_COMPILER")
    assert "set CUTE_DSL_USE_EXTENSION_COMPILER" in finding.repair and "reinstall" not in finding.repair


@pytest.mark.parametrize(("variables", "subject", "words"), [
    ({"CUTE_DSL_LIBS": "/opt/nowhere/libcute_dsl_runtime.so"}, "CUTE_DSL_LIBS", "which does not exist"),
    ({"CUTE_DSL_ENABLE_TVM_FFI": "1"}, "CUTE_DSL_ENABLE_TVM_FFI", "apache-tvm-ffi (the tvm_ffi module it needs) is not installed"),
], ids=["libs-nowhere", "tvm-ffi-absent"])
def test_a_variable_that_cannot_work(variables, subject, words, monkeypatch):
    monkeypatch.setattr(install, "_importable", lambda module: False)
    (finding,) = install.variable_findings(variables)
    assert finding.subject == subject and words in finding.detail
    assert install.variable_findings({"CUTE_DSL_LOG_LEVEL": "10", "CUTE_DSL_ENABLE_TVM_FFI": "0"}) == []


def test_user_variables_are_the_cute_dsl_ones():
    assert install.user_variables({"CUTE_DSL_ARCH": "sm_90a", "PATH": "/bin", "CUTE_DSL_LIBS": "x"}) == {
        "CUTE_DSL_ARCH": "sm_90a", "CUTE_DSL_LIBS": "x"}


def test_host_jit_is_skipped_only_where_it_is_known_not_to_run(monkeypatch):
    """The no-driver case of 4.3/4.4 is a reason to skip; any other failure is a broken install."""
    monkeypatch.setattr(compat, "driver_missing", lambda: True)
    known = RuntimeError("Unknown function _noop")
    monkeypatch.setattr(compat, "_host_probe_error", lambda: known)
    assert "needs the CUDA driver" in compat.host_jit_unavailable()
    broken = ImportError("cannot import name 'Int8'")
    broken.__cause__ = FileNotFoundError("typing.py")
    monkeypatch.setattr(compat, "_host_probe_error", lambda: broken)
    with pytest.raises(compat.HostJitBroken, match="ImportError: cannot import name 'Int8' <- FileNotFoundError: typing.py"):
        compat.host_jit_unavailable()
    monkeypatch.setattr(compat, "_host_probe_error", lambda: None)
    assert compat.host_jit_unavailable() is None


def test_the_verdict_of_a_broken_install_names_the_first_finding():
    found = [InstallFinding("files", "nvidia-cutlass-dsl-libs-core 4.8.1", "1 of its 208 files are not as installed", "`pip ...`"),
             InstallFinding("requirement", "numpy", "1.25.2 is below ...", "`pip install -r requirements.txt`")]
    run = RunResult(fingerprint=Fingerprint(), arch="", started="", status="install broken", exit_status=INSTALL_BROKEN_EXIT, install=found)
    assert summary.verdict(run) == ("INSTALL BROKEN: nvidia-cutlass-dsl-libs-core 4.8.1: 1 of its 208 files are not as installed; "
                                    "repair: `pip ...` (and 1 more: summary.md) · nothing ran")
    assert RunResult.from_json(json.loads(json.dumps(run.to_json()))).install == found
    assert "- requirement: `numpy`: 1.25.2 is below ...; repair: `pip install -r requirements.txt`" in summary.render(run)


def test_a_run_on_a_broken_install_stops_with_exit_6_and_a_report(project, monkeypatch):
    """End to end: a requirement floor the install does not meet (a stand-in for every finding)."""
    (project.path / "pyproject.toml").write_text('[project]\ndependencies = ["torch>=999"]\n')
    monkeypatch.setattr(install, "REQUIREMENTS", project.path / "pyproject.toml")  # the run is in this process
    project.makepyfile(test_one="import pytest\n\n@pytest.mark.host\ndef test_one():\n    pass\n")
    result = project.runpytest_inprocess("--report-dir=report")
    assert result.ret == INSTALL_BROKEN_EXIT
    (line, where) = [line for line in result.errlines if line.strip()]
    assert line.startswith("Exit: INSTALL BROKEN: torch: ") and "is below what pyproject.toml asks for (>=999)" in line
    assert where == f"reports: {project.path / 'report'}"
    run = RunResult.from_json(json.loads((project.path / "report" / "results.json").read_text()))
    assert (run.status, run.exit_status, run.install[0].cause) == ("install broken", INSTALL_BROKEN_EXIT, "requirement")
    assert "## The install" in (project.path / "report" / "summary.md").read_text()


def test_a_broken_install_found_beside_the_workers_start_stops_the_run_the_same_way(project, monkeypatch):
    """Under xdist the install is checked beside the workers' start (``beside``): the same exit 6,
    the same two lines on stderr and the install's report, and no case dealt to a worker."""
    (project.path / "pyproject.toml").write_text('[project]\ndependencies = ["torch>=999"]\n')
    monkeypatch.setattr(install, "REQUIREMENTS", project.path / "pyproject.toml")  # the controller is this process
    project.makepyfile(test_one="import pytest\n\n@pytest.mark.host\ndef test_one():\n    pass\n")
    result = project.runpytest_inprocess("-n", "2", "--report-dir=report")
    assert result.ret == INSTALL_BROKEN_EXIT
    (line, where) = [line for line in result.errlines if line.strip()]
    assert line.startswith("Exit: INSTALL BROKEN: torch: ") and "is below what pyproject.toml asks for (>=999)" in line
    assert where == f"reports: {project.path / 'report'}"
    run = RunResult.from_json(json.loads((project.path / "report" / "results.json").read_text()))
    assert (run.status, run.collected, run.cases) == ("install broken", 0, [])
    assert "PASSED" not in result.stdout.str() and "test_one" not in result.stdout.str()


def test_a_variable_pointing_at_nothing_stops_the_run(project, monkeypatch):
    monkeypatch.setenv("CUTE_DSL_LIBS", "/opt/nowhere/libcute_dsl_runtime.so")
    project.makepyfile(test_one="import pytest\n\n@pytest.mark.host\ndef test_one():\n    pass\n")
    result = project.runpytest_inprocess("--report-dir=report")
    assert result.ret == INSTALL_BROKEN_EXIT
    assert result.errlines[0].startswith("Exit: INSTALL BROKEN: CUTE_DSL_LIBS: names /opt/nowhere/libcute_dsl_runtime.so")
    run = json.loads((project.path / "report" / "results.json").read_text())
    assert run["environment"]["CUTE_DSL_LIBS"] == "/opt/nowhere/libcute_dsl_runtime.so"  # as the user set it


def test_the_report_header_names_the_users_variables(project, monkeypatch):
    for name in [n for n in os.environ if n.startswith("CUTE_DSL_")]:  # what this run's harness set
        monkeypatch.delenv(name)
    monkeypatch.setenv("CUTE_DSL_LOG_LEVEL", "10")
    project.makepyfile(test_one="import pytest\n\n@pytest.mark.harness\ndef test_one():\n    pass\n")
    result = project.runpytest_inprocess("--report-dir=report")
    assert result.ret == 0
    result.stdout.fnmatch_lines(["cute-dsl: * (libs: *; built for CUDA *; *)", "CUTE_DSL_[*] set by the user: CUTE_DSL_LOG_LEVEL=10"])


# --- issue 62: the last broken installs ---------------------------------------------------------


def test_an_unreadable_file_is_a_finding_with_its_path(site, monkeypatch):
    """``chmod 000`` as a user without root's override (this machine runs as root: the error is planted)."""
    locked = site / "nvidia_cutlass_dsl/pkg/cutlass/cute/typing.py"
    real_open = type(locked).open

    def refusing(self, *args, **kwargs):
        if self == locked:
            raise PermissionError(13, "Permission denied")
        return real_open(self, *args, **kwargs)

    monkeypatch.setattr(type(locked), "open", refusing)
    (finding,) = [f for d in dsl_of(site) for f in install.record_findings(d)]
    assert "1 unreadable (nvidia_cutlass_dsl/pkg/cutlass/cute/typing.py: PermissionError: Permission denied)" in finding.detail
    assert finding.repair.startswith(f"`chmod a+r {locked}`")


def test_an_unreadable_record_is_a_finding_not_an_internal_error(site, monkeypatch):
    (dist,) = [d for d in dsl_of(site) if d.metadata["Name"] == "nvidia-cutlass-dsl-libs-core"]
    real = type(dist).read_text
    monkeypatch.setattr(type(dist), "read_text", lambda self, name: (_ for _ in ()).throw(PermissionError(13, "Permission denied"))
                        if self is dist and name == "RECORD" else real(self, name))
    (finding,) = install.record_findings(dist)
    assert finding.detail == "its RECORD cannot be read: PermissionError: Permission denied" and "chmod a+r" in finding.repair


def test_a_file_missing_from_disk_is_still_one_the_record_lists(site):
    """Python 3.12's ``Distribution.files`` leaves out a file missing from disk: the checks read
    the ``RECORD`` themselves (``distributions.files_of``), so a deleted file is still a finding."""
    (dist,) = [d for d in dsl_of(site) if d.metadata["Name"] == "nvidia-cutlass-dsl-libs-core"]
    gone = site / "nvidia_cutlass_dsl/pkg/cutlass/cute/typing.py"
    gone.unlink()
    listed = {str(f): f for f in distributions.files_of(dist)}
    assert "nvidia_cutlass_dsl/pkg/cutlass/cute/typing.py" in listed and listed["nvidia_cutlass_dsl/pkg/cutlass/cute/typing.py"].hash
    (finding,) = install.record_findings(dist)
    assert "1 missing (nvidia_cutlass_dsl/pkg/cutlass/cute/typing.py)" in finding.detail


def test_a_script_recorded_outside_the_site_folder_is_not_the_installs_code(site):
    """``pip install --target`` records a package's console scripts at ``../../bin/NAME``, where
    they are not (it puts them in the target's ``bin/``): no code a run imports, no finding."""
    (dist,) = [d for d in dsl_of(site) if d.metadata["Name"] == "nvidia-cutlass-dsl-libs-core"]
    record = next(site.glob("nvidia_cutlass_dsl_libs_core-*.dist-info")) / "RECORD"
    record.write_text(record.read_text() + "../../bin/run-tool,sha256=AAAA,12\n")
    assert "../../bin/run-tool" in {str(f) for f in distributions.files_of(dist)}
    assert install.record_findings(dist) == []


def test_an_unreadable_metadata_is_a_finding(site, monkeypatch):
    dists = install.installed([str(site)])
    (core,) = [d for d in dists if d.metadata["Name"] == "nvidia-cutlass-dsl-libs-core"]
    real = type(core).read_text
    monkeypatch.setattr(type(core), "read_text", lambda self, name: (_ for _ in ()).throw(PermissionError(13, "Permission denied"))
                        if self is core and name == "METADATA" else real(self, name))
    (finding,) = install.dist_info_findings(dists, [])
    where = next(site.glob("nvidia_cutlass_dsl_libs_core-*.dist-info"))
    assert finding.subject == str(where)
    assert finding.detail.startswith("nvidia-cutlass-dsl-libs-core 4.8.1's METADATA cannot be read (PermissionError: Permission denied")
    assert finding.repair.startswith(f"`rm -r {where}`, then `pip install --force-reinstall --no-deps nvidia-cutlass-dsl-libs-core==4.8.1`")


@pytest.fixture
def libs_site(site):
    """The DSL's libs-base beside libs-core in one folder (``nvidia_cutlass_dsl/``), as 4.8 ships them."""
    make_dist(site, "nvidia-cutlass-dsl-libs-base", "4.8.1", {"nvidia_cutlass_dsl/base/__init__.py": ""})
    return site


@pytest.mark.parametrize("how", ["metadata-dangling", "metadata-missing", "metadata-nameless", "record-deleted", "record-dangling"])
def test_a_broken_dist_info_is_named_with_its_package(libs_site, how):
    """libs-core's METADATA a dangling symlink, or its RECORD deleted with a DSL file edited: the
    dist-info and libs-core are named, not 2 files owned by none with libs-base's reinstall (which,
    followed, left ``import cutlass.cute`` failing)."""
    info = next(libs_site.glob("nvidia_cutlass_dsl_libs_core-*.dist-info"))
    file, kind = how.split("-")
    target = info / file.upper()
    target.unlink()
    if kind == "dangling":
        target.symlink_to(libs_site / "gone")
    elif kind == "nameless":
        target.write_text("Metadata-Version: 2.1\nVersion: 4.8.1\n")
    (libs_site / "nvidia_cutlass_dsl/pkg/cutlass/cute/typing.py").write_text("Int8 = 7\n")
    dists = install.installed([str(libs_site)])
    (finding,) = install.dist_info_findings(dists, ["torch"])
    assert (finding.cause, finding.subject) == ("files", str(info))
    words = {"dangling": f"is a symlink to {libs_site / 'gone'}, which does not exist", "missing": "is missing",
             "deleted": "is missing: no file of the package can be checked", "nameless": "names no package"}[kind]
    assert finding.detail.startswith(f"nvidia-cutlass-dsl-libs-core 4.8.1's {file.upper()} {words}")
    assert finding.repair.startswith(f"`rm -r {info}`, then `pip install --force-reinstall --no-deps nvidia-cutlass-dsl-libs-core==4.8.1`")
    assert "libs-base" not in finding.repair


def test_a_record_missing_where_a_distribution_installed_it_is_no_finding(site):
    """A Debian-style ``dist-info`` (its package manager owns the files; it ships no RECORD), or a
    package other than the DSL's (a torch or numpy built into a container image): no finding."""
    make_dist(site, "numpy", "1.26.4", {"numpy/__init__.py": ""})
    make_dist(site, "hypothesis", "6.100.0", {"hypothesis/__init__.py": ""})
    for package in ("numpy", "hypothesis"):
        info = next(site.glob(f"{package}-*.dist-info"))
        (info / "RECORD").unlink()
    (next(site.glob("numpy-*.dist-info")) / "INSTALLER").write_text("debian\n")
    assert install.dist_info_findings(install.installed([str(site)]), ["numpy", "hypothesis"]) == []


def _wheel(folder, name: str, version: str, files: dict[str, str]):
    """A wheel of ``files`` built by hand (pip installs it with ``--no-index``)."""
    import zipfile

    info = f"{name}-{version}.dist-info"
    content = {**files, f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n",
               f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: hand\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}
    record = [f"{path},sha256={base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b'=').decode()},"
              f"{len(text.encode())}" for path, text in content.items()]
    content[f"{info}/RECORD"] = "\n".join([*record, f"{info}/RECORD,,"]) + "\n"
    wheel = folder / f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for path, text in content.items():
            archive.writestr(path, text)
    return wheel


def test_the_broken_dist_info_repair_works_when_followed(tmp_path):
    """The repair followed in a real venv (a local wheel for the index): pip's own reinstall fails on
    a deleted RECORD; ``rm -r`` the dist-info, then the reinstall, restores the edited file and
    its RECORD, and the check finds nothing."""
    import shutil
    import subprocess
    import sys

    wheels = tmp_path / "wheels"
    wheels.mkdir()
    _wheel(wheels, "nvidia_cutlass_dsl_libs_fake", "1.0", {"fakedslpkg/__init__.py": "VALUE = 1\n"})
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)  # its own pip (ensurepip): a tox env made by uv has none
    python = str(venv / "bin" / "python")

    def pip(*args):
        return subprocess.run([python, "-m", "pip", "install", "-q", "--no-index",
                               "--find-links", str(wheels), "--disable-pip-version-check", *args], capture_output=True, text=True)

    assert pip("--no-deps", "nvidia-cutlass-dsl-libs-fake==1.0").returncode == 0
    (site,) = venv.glob("lib/python*/site-packages")
    info = site / "nvidia_cutlass_dsl_libs_fake-1.0.dist-info"
    (info / "RECORD").unlink()
    (site / "fakedslpkg" / "__init__.py").write_text("VALUE = 2\n")
    (finding,) = install.dist_info_findings(install.installed([str(site)]), [])
    assert finding.detail.startswith("nvidia-cutlass-dsl-libs-fake 1.0's RECORD is missing")
    assert "RECORD file not found" in pip("--force-reinstall", "--no-deps", "nvidia-cutlass-dsl-libs-fake==1.0").stderr  # pip's own hint fails
    removal, reinstall = finding.repair.split("`")[1], finding.repair.split("`")[3]
    assert removal == f"rm -r {info}"
    shutil.rmtree(info)
    assert pip(*reinstall.split()[2:]).returncode == 0
    assert (site / "fakedslpkg" / "__init__.py").read_text() == "VALUE = 1\n"
    assert install.dist_info_findings(install.installed([str(site)]), []) == []


def test_a_truncated_dependency_file_is_found_by_its_size(site):
    """numpy's core ``.so`` truncated (a bus error at ``import torch``): its size against RECORD,
    without hashing."""
    make_dist(site, "numpy", "2.4.6", {"numpy/_core/_multiarray_umath.so": "x" * 64})
    (numpy,) = install.dependency_distributions(install.installed([str(site)]), ["numpy", "apache-tvm-ffi"])
    (site / "numpy/_core/_multiarray_umath.so").write_text("x" * 10)
    (finding,) = install.record_findings(numpy, hashed=False)
    assert finding.subject == "numpy 2.4.6" and "1 changed (numpy/_core/_multiarray_umath.so)" in finding.detail
    assert finding.repair == "`pip install --force-reinstall --no-deps numpy==2.4.6`"


def test_a_file_no_package_owns_in_the_dsls_folder(site):
    """An orphan ``_cutlass_ir.cu13...so``, or a layout-algebra edit with its RECORD row deleted."""
    assert install.unowned_findings(dsl_of(site)) == []
    (site / "nvidia_cutlass_dsl/pkg/cutlass/__pycache__").mkdir()
    (site / "nvidia_cutlass_dsl/pkg/cutlass/__pycache__/x.cpython-311.pyc").write_bytes(b"")  # not counted
    orphan = site / "nvidia_cutlass_dsl/pkg/cutlass/_cutlass_ir.cu13.cpython-311-x86_64-linux-gnu.so"
    orphan.write_text("")
    (finding,) = install.unowned_findings(dsl_of(site))
    assert finding.subject == str(site / "nvidia_cutlass_dsl") and f"1 file(s) that no installed package owns: {orphan}" in finding.detail
    assert finding.repair == f"`rm {orphan}`, then `pip install --force-reinstall --no-deps nvidia-cutlass-dsl-libs-core==4.8.1` " \
                             "(which puts back any it ships)"


def test_the_dsls_own_requirements_are_checked_as_pip_would(site):
    """cuda-bindings 11.8.7 where the DSL requires >= 12.8: the package is named, not cutlass.cute."""
    info = next(site.glob("nvidia_cutlass_dsl_libs_core-*.dist-info"))
    (info / "METADATA").write_text((info / "METADATA").read_text() + "Requires-Dist: cuda-bindings>=12.8\n"
                                   "Requires-Dist: absentpkg>=1; extra == \"sass\"\nRequires-Dist: backports.strenum; python_version < \"3.11\"\n")
    make_dist(site, "cuda-bindings", "11.8.7", {"cuda/bindings/x.py": ""})
    dists = install.installed([str(site)])
    (finding,) = install.dsl_requirement_findings(install.dsl_distributions(dists), dists)
    assert (finding.cause, finding.subject) == ("requirement", "cuda-bindings")
    assert finding.detail == "11.8.7 is installed, but nvidia-cutlass-dsl-libs-core 4.8.1 requires cuda-bindings>=12.8"
    assert finding.repair == '`pip install "cuda-bindings>=12.8"`'


def test_a_crash_in_the_child_import_is_a_finding(tmp_path):
    """A module that takes the interpreter down (a truncated extension's bus error): the child dies,
    the finding names the signal and the file; this process goes on."""
    (tmp_path / "crashing.py").write_text("import os, signal\nos.kill(os.getpid(), signal.SIGBUS)\n")
    (tmp_path / "fine.py").write_text("")
    child = install.ImportChild(("fine", "crashing"), path=[str(tmp_path), *__import__("sys").path])
    assert child.crash_findings("fine") == []
    (finding,) = child.crash_findings("crashing")
    assert finding.cause == "import" and finding.subject == "crashing"
    assert finding.detail.startswith("`import crashing` crashed the interpreter (signal 7 (SIGBUS)) in a child process, "
                                     f"in {tmp_path / 'crashing.py'}")
    (tmp_path / "raising.py").write_text("raise ImportError('no')\n")
    child = install.ImportChild(("raising", "fine"), path=[str(tmp_path), *__import__("sys").path])
    assert child.crash_findings("raising") == []  # an exception is this process's import's to name


def test_the_stale_pyc_answer_is_none_where_a_child_did_not_get_that_far(tmp_path):
    """A module whose import raised: its child says nothing of stale bytecode, so the answer is
    None (the set-up looks in this process), not the other child's empty one."""
    (tmp_path / "raising.py").write_text("raise ImportError('no')\n")
    (tmp_path / "fine.py").write_text("")
    child = install.ImportChild(("fine", "raising"), path=[str(tmp_path), *__import__("sys").path])
    assert child.crash_findings("raising") == []
    assert child.stale_bytecode() is None


def test_each_module_is_tried_in_a_child_of_its_own_side_by_side(tmp_path):
    """The set-up waits on the DSL's child once torch is imported: the DSL's import from source
    runs beside torch's, not after it."""
    for name in ("first", "second"):
        stamp = f"open({str(tmp_path / name)!r} + '-{{}}', 'w').write(repr(time.time()))"
        (tmp_path / f"{name}.py").write_text(f"import time\n{stamp.format('began')}\ntime.sleep(2)\n{stamp.format('ended')}\n")
    child = install.ImportChild(("first", "second"), path=[str(tmp_path), *__import__("sys").path])
    assert child.crash_findings("second") == []
    at = {p.name: float(p.read_text()) for p in tmp_path.iterdir() if p.name.endswith(("-began", "-ended"))}
    assert at["second-began"] < at["first-ended"] and at["first-began"] < at["second-ended"], at
    assert child.stale_bytecode() == {}


def test_a_module_that_prints_as_it_imports_is_no_finding(tmp_path):
    """What an imported module prints (a banner, a .pth's line) goes to the child's stderr, not into
    the lines the child reports on: the run reads every module imported, and the stale-.pyc answer."""
    (tmp_path / "chatty.py").write_text("import os\nprint('hello from chatty', flush=True)\nos.write(1, b'[\"x\"]\\n')\n")
    child = install.ImportChild(("chatty",), path=[str(tmp_path), *__import__("sys").path])
    assert child.crash_findings("chatty") == []
    assert child.done["chatty"] == "imported"
    assert child.stale_bytecode() == {}


def test_a_stale_pyc_is_named(tmp_path):
    """Byte-code compiled from an edited source of the same size, the source put back with its old time stamp."""
    import importlib.util
    import py_compile

    from fixtures.plugin import bytecode

    source = tmp_path / "where.py"
    source.write_text("def where(c, a, b):\n    return a if c else b\n")
    stamp = source.stat().st_mtime
    cached = importlib.util.cache_from_source(str(source))
    assert bytecode.stale_bytecode(str(source), py_compile.compile(str(source), cfile=cached)) is None
    source.write_text("def where(c, a, b):\n    return b if c else a\n")
    os.utime(source, (stamp, stamp))
    py_compile.compile(str(source), cfile=cached)
    os.utime(cached, (stamp - 10, stamp - 10))  # written before the source is restored (a later ctime)
    source.write_text("def where(c, a, b):\n    return a if c else b\n")
    os.utime(source, (stamp, stamp))
    assert bytecode.stale_bytecode(str(source), cached) == cached


def _own_cute(folder):
    """A stand-in ``cutlass.cute`` whose ``where`` is defined in ``folder/cute.py``: the module and that file."""
    import types

    own = folder / "cute.py"
    own.write_text("def where(c, a, b):\n    return a if c else b\n")
    cute = types.ModuleType("cutlass.cute")
    exec(compile(own.read_text(), str(own), "exec"), vars(cute))
    return cute, own


def test_a_function_patched_into_the_dsl_is_named(tmp_path, monkeypatch):
    """A ``.pth`` that imports a module replacing ``cute.where``: the function, its file and the ``.pth``."""
    from fixtures.plugin import paths, provenance

    (tmp_path / "patcher.py").write_text("def where(c, a, b):\n    return b if c else a\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import patcher

    (tmp_path / "zz_patch.pth").write_text("import patcher\n")
    monkeypatch.setattr(paths, "site_folders", lambda: [str(tmp_path)])
    cute, own = _own_cute(tmp_path)
    assert provenance.foreign_functions([cute], {str(own)}) == []
    cute.where = patcher.where
    (finding,) = provenance.foreign_functions([cute], {str(own)})
    assert (finding.cause, finding.subject) == ("patched", "cutlass.cute.where")
    assert f"is patcher.where from {tmp_path / 'patcher.py'}, not the DSL's own code" in finding.detail
    assert finding.repair == f"remove {tmp_path / 'zz_patch.pth'} (it imports patcher into every Python process)"


def test_the_loaded_dsl_is_its_packages_code():
    """This install: every loaded cutlass module from its packages' files, no function foreign."""
    import cutlass.cute  # noqa: F401

    from fixtures.plugin import provenance

    dists = install.installed()
    assert provenance.findings(install.dsl_distributions(dists), dists) == []


@pytest.mark.parametrize(("where", "words"), [
    ("file", "which is a regular file"), ("under-file", "lies under"), ("fine", None)])
def test_cute_dsl_cache_dir_that_cannot_be_a_folder(tmp_path, where, words):
    (tmp_path / "plain").write_text("")
    cache = {"file": tmp_path / "plain", "under-file": tmp_path / "plain" / "cache", "fine": tmp_path / "new" / "cache"}[where]
    found = install.variable_findings({"CUTE_DSL_CACHE_DIR": str(cache)})
    if words is None:
        assert found == []
        return
    (finding,) = found
    assert finding.subject == "CUTE_DSL_CACHE_DIR" and words in finding.detail and "NotADirectoryError" in finding.detail
    assert finding.repair == "point CUTE_DSL_CACHE_DIR at a folder, or unset it"


def test_a_cpu_torch_under_require_gpu_is_named(monkeypatch):
    import torch

    from fixtures.dsl import environment

    monkeypatch.setattr(environment, "driver_cuda_version", lambda: "13.0")
    monkeypatch.setattr(torch.version, "cuda", None)
    (finding,) = install.gpu_build_findings()
    assert (finding.cause, finding.subject) == ("build", "torch")
    assert "is a CPU build (torch.version.cuda is None), on a machine whose driver covers CUDA 13.0" in finding.detail
    assert "install torch's CUDA build" in finding.repair
    monkeypatch.setattr(environment, "driver_cuda_version", lambda: None)
    assert install.gpu_build_findings() == []  # no driver: --require-gpu's own line says so


def test_an_old_driver_first_on_ld_library_path_is_named(tmp_path, monkeypatch):
    """The DSL's loader refusing the driver it found; that driver from LD_LIBRARY_PATH: the repair is the variable."""
    from fixtures.dsl import environment

    (tmp_path / "oldcuda.py").write_text(
        "raise RuntimeError('None of the installed toolkit flavors (cu12) are compatible with the CUDA driver "
        "(driver supports up to CUDA 11.8).')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("LD_LIBRARY_PATH", f"/opt/old-driver{os.pathsep}/usr/lib")
    monkeypatch.setattr(environment, "driver_library", lambda: ("/opt/old-driver/libcuda.so.1", "11.8"))
    (finding,) = install.import_findings("oldcuda", "nvidia-cutlass-dsl")
    assert finding.subject == "LD_LIBRARY_PATH" and "the driver library found is /opt/old-driver/libcuda.so.1 (CUDA 11.8)" in finding.detail
    assert finding.repair.startswith("remove /opt/old-driver from LD_LIBRARY_PATH")
    monkeypatch.setenv("LD_LIBRARY_PATH", "/usr/lib")
    (finding,) = install.import_findings("oldcuda", "nvidia-cutlass-dsl")
    assert finding.subject == "oldcuda" and finding.repair.startswith("update the CUDA driver") and "reinstall" not in finding.repair


@pytest.mark.parametrize("started", ["in-it", "elsewhere"])
def test_a_shadowing_module_file_is_named_not_its_folder(site, tmp_path, monkeypatch, started):
    """A ``cutlass.py`` in the folder the run starts from: the file is the repair, never the whole
    folder. In the harness's checkout with the run started elsewhere (pytest puts the checkout on
    ``sys.path`` for its ``conftest.py``), the checkout is named as such: running from another
    folder would not help."""
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    (checkout / "fakemod.py").write_text("")
    make_dist(site, "fakepkg", "1.0", {"fakemod/__init__.py": ""})
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.syspath_prepend(str(checkout))
    if started == "in-it":
        monkeypatch.chdir(checkout)
        expected = f"rename or remove {checkout / 'fakemod.py'}, or run from another folder"
    else:
        monkeypatch.chdir(tmp_path)
        monkeypatch.setattr(install, "CHECKOUT", checkout.resolve())
        expected = (f"rename or remove {checkout / 'fakemod.py'} (in the harness's checkout, which pytest puts on sys.path "
                    "for its conftest.py wherever the run starts)")
    (finding,) = install.shadow_findings(install.installed([str(site)]), {"fakemod": "fakepkg"})
    assert finding.repair == expected


def test_a_driver_library_forced_by_ld_preload_is_named(tmp_path, monkeypatch):
    """A CUDA 11.8 ``libcuda.so.1`` forced by ``LD_PRELOAD``: the variable is the repair, not the driver."""
    from fixtures.dsl import environment

    (tmp_path / "preloadcuda.py").write_text(
        "raise RuntimeError('None of the installed toolkit flavors (cu12) are compatible with the CUDA driver "
        "(driver supports up to CUDA 11.8).')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("LD_PRELOAD", "/opt/libfoo.so /opt/cuda-11.8/libcuda.so.1")
    monkeypatch.delenv("LD_LIBRARY_PATH", raising=False)
    monkeypatch.setattr(environment, "driver_library", lambda: ("/opt/cuda-11.8/libcuda.so.1", "11.8"))
    (finding,) = install.import_findings("preloadcuda", "nvidia-cutlass-dsl")
    assert finding.subject == "LD_PRELOAD" and finding.detail.endswith("(CUDA 11.8), preloaded by LD_PRELOAD")
    assert finding.repair == "remove /opt/cuda-11.8/libcuda.so.1 from LD_PRELOAD (the system's driver library is then loaded)"
    monkeypatch.setenv("LD_PRELOAD", "/opt/libfoo.so")
    (finding,) = install.import_findings("preloadcuda", "nvidia-cutlass-dsl")
    assert finding.subject == "preloadcuda" and finding.repair.startswith("update the CUDA driver")


@pytest.mark.parametrize("renamed", [False, True])
def test_a_version_in_a_repair_is_one_that_was_installed(site, renamed):
    """The top package's METADATA edited to say 4.8.2 (no such release): the repair names the 4.8.1
    its dist-info was installed as, never 4.8.2; with the folder renamed to match, no version at all.
    The libs at 4.8.1 are not a version mix: the edit is the finding."""
    info = next(site.glob("nvidia_cutlass_dsl-*.dist-info"))
    (info / "RECORD").write_text(_record_line(site, f"{info.name}/METADATA") + "\n" + (info / "RECORD").read_text())  # as a wheel's
    (info / "METADATA").write_text((info / "METADATA").read_text().replace("Version: 4.8.1", "Version: 4.8.2"))
    if renamed:
        record = info / "RECORD"
        record.write_text(record.read_text().replace(info.name, "nvidia_cutlass_dsl-4.8.2.dist-info"))
        info = info.rename(info.with_name("nvidia_cutlass_dsl-4.8.2.dist-info"))
    dsl = dsl_of(site)
    (top,) = [d for d in dsl if d.metadata["Name"] == "nvidia-cutlass-dsl"]
    assert top.version == "4.8.2" and install.version_findings(dsl) == []
    (finding,) = install.record_findings(top)
    assert f"1 changed ({info.name}/METADATA)" in finding.detail and "4.8.2`" not in finding.repair
    assert finding.repair == ("`pip install --force-reinstall --no-deps nvidia-cutlass-dsl==VERSION`, a release `pip index versions "
                              "nvidia-cutlass-dsl` lists (its METADATA was edited after install: the 4.8.2 it says is no version to "
                              "trust)" if renamed else "`pip install --force-reinstall --no-deps nvidia-cutlass-dsl==4.8.1`")


@pytest.mark.parametrize("how", ["PYTHONPATH", ".pth"])
def test_a_shadowing_entry_names_pythonpath_or_its_pth(site, tmp_path, monkeypatch, how):
    """A second torch on ``PYTHONPATH``, a dev tree through a ``.pth``: the variable or the file is the repair."""
    from fixtures.plugin import paths

    tree = tmp_path / "dev tree"
    (tree / "fakemod").mkdir(parents=True)
    (tree / "fakemod" / "__init__.py").write_text("")
    make_dist(site, "fakepkg", "1.0", {"fakemod/__init__.py": ""})
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.syspath_prepend(str(tree))
    monkeypatch.setattr(paths, "site_folders", lambda: [str(site)])
    if how == "PYTHONPATH":
        monkeypatch.setenv("PYTHONPATH", str(tree))
        expected = f"remove {tree} from PYTHONPATH (it holds another fakemod)"
    else:
        monkeypatch.delenv("PYTHONPATH", raising=False)
        (site / "dev.pth").write_text(f"{tree}\n")
        expected = f"remove the line that adds {tree} from {site / 'dev.pth'} (or that .pth file)"
    (finding,) = install.shadow_findings(install.installed([str(site)]), {"fakemod": "fakepkg"})
    assert finding.repair == expected


def test_a_run_whose_import_crashes_stops_with_exit_6_and_a_report(project, monkeypatch, tmp_path):
    """End to end: the child dies importing (a planted module first in its list); the run names it."""
    from fixtures.plugin import import_child

    (tmp_path / "crashing.py").write_text("import os, signal\nos.kill(os.getpid(), signal.SIGBUS)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(import_child, "MODULES", ("crashing", *import_child.MODULES))
    project.makepyfile(test_one="import pytest\n\n@pytest.mark.host\ndef test_one():\n    pass\n")
    result = project.runpytest_inprocess("--report-dir=report")
    assert result.ret == INSTALL_BROKEN_EXIT
    assert result.errlines[0].startswith("Exit: INSTALL BROKEN: crashing: `import crashing` crashed the interpreter (signal 7 (SIGBUS))")
    run = RunResult.from_json(json.loads((project.path / "report" / "results.json").read_text()))
    assert (run.status, run.install[0].cause) == ("install broken", "import")


def test_package_names_compare_as_pip_normalises_them():
    """``Foo.Bar_baz`` and ``foo-bar-baz`` are one distribution (PEP 503): a requirement spelled one
    way finds a package named the other (a dotted name was 'not installed' before)."""
    from types import SimpleNamespace

    assert distributions.dist_name(SimpleNamespace(metadata={"Name": "Zope.Interface_X"})) == "zope-interface-x"


def test_the_install_checks_import_one_way():
    """``install`` imports ``provenance`` (inside ``check_dsl``); neither ``provenance`` nor
    ``distributions``, which both read package names from, imports ``install`` back."""
    import ast
    from pathlib import Path

    def imported(module) -> set[str]:
        tree = ast.parse(Path(module.__file__).read_text())
        return {f"{n.module}.{a.name}" if isinstance(n, ast.ImportFrom) else a.name
                for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom)) for a in n.names}

    from fixtures.plugin import provenance

    assert "fixtures.plugin.provenance" in imported(install)
    for module in (provenance, distributions):
        assert not any(name.startswith("fixtures.plugin.install") for name in imported(module)), module.__name__


def test_a_copy_without_its_dist_info_on_pythonpath_is_refused(tmp_path, monkeypatch):
    """numpy 1.25.2 unpacked onto ``PYTHONPATH`` without a dist-info, the numpy named 2.4.6: the
    module imported is the unpacked one, named with ``PYTHONPATH``; without it, no finding."""
    import importlib

    module = f"numlike{abs(hash(str(tmp_path)))}"
    site = _site_of(tmp_path, "site", module, "2.4.6", monkeypatch)
    name = f"fake-{module}"
    importlib.invalidate_caches()
    assert install.imported_copy_findings(install.installed([str(site)]), [name]) == []
    unpacked = tmp_path / "unpacked"
    (unpacked / module).mkdir(parents=True)
    (unpacked / module / "__init__.py").write_text("__version__ = '1.25.2'\n")
    monkeypatch.syspath_prepend(str(unpacked))
    monkeypatch.setenv("PYTHONPATH", str(unpacked))
    (finding,) = install.imported_copy_findings(install.installed([str(site)]), [name])
    assert (finding.cause, finding.subject) == ("shadowed", module)
    assert finding.detail == (f"imports from {unpacked / module / '__init__.py'}, which no installed package owns, not {name} 2.4.6's "
                              f"files in {site}")
    assert finding.repair == f"remove {unpacked} from PYTHONPATH (it holds another {module})"


@pytest.mark.parametrize("where", ["its-own-files", "pythonpath"])
def test_a_floor_is_checked_against_the_module_imported(tmp_path, monkeypatch, where):
    """The module's ``__version__`` below the floor while its metadata meets it: a METADATA that says
    2.4.6 over files of 1.25.2 (repair: a reinstall within the floor), or a copy imported from
    ``PYTHONPATH`` (repair: the entry)."""
    import importlib
    import sys
    import types

    module = f"numver{abs(hash(str(tmp_path)))}"
    site = _site_of(tmp_path, "site", module, "2.4.6", monkeypatch)
    requirements = tmp_path / "pyproject.toml"
    requirements.write_text(f'[project]\ndependencies = ["fake-{module}>=1.26"]\n')
    loaded = types.ModuleType(module)
    loaded.__version__ = "2.4.6"
    loaded.__file__ = str(site / module / "__init__.py")
    monkeypatch.setitem(sys.modules, module, loaded)
    importlib.invalidate_caches()
    dists = install.installed([str(site)])
    assert install.imported_version_findings(requirements, dists) == []
    loaded.__version__ = "1.25.2"
    if where == "pythonpath":
        loaded.__file__ = str(tmp_path / "unpacked" / module / "__init__.py")
        monkeypatch.setenv("PYTHONPATH", str(tmp_path / "unpacked"))
        monkeypatch.syspath_prepend(str(tmp_path / "unpacked"))
    (finding,) = install.imported_version_findings(requirements, dists)
    assert (finding.cause, finding.subject) == ("requirement", f"fake-{module}")
    assert finding.detail == (f"the {module} imported ({loaded.__file__}) is 1.25.2, below what pyproject.toml asks for (>=1.26), "
                              "though its metadata says 2.4.6")
    assert finding.repair == (f'`pip install --force-reinstall --no-deps "fake-{module}>=1.26"` (its files are not the version its '
                              "metadata names)" if where == "its-own-files" else
                              f"remove {tmp_path / 'unpacked'} from PYTHONPATH (it holds another {module})")


def test_an_arch_the_dsl_does_not_know_stops_the_run(project, monkeypatch):
    """``CUTE_DSL_ARCH=sm_1000``: green before (the harness compiles for its own arch); every compile
    of the user's own programs fails with it."""
    assert install.variable_findings({"CUTE_DSL_ARCH": "sm_90a"}) == []
    monkeypatch.setenv("CUTE_DSL_ARCH", "sm_1000")
    project.makepyfile(test_one="import pytest\n\n@pytest.mark.host\ndef test_one():\n    pass\n")
    result = project.runpytest_inprocess("--report-dir=report")
    assert result.ret == INSTALL_BROKEN_EXIT
    assert result.errlines[0].startswith("Exit: INSTALL BROKEN: CUTE_DSL_ARCH: names sm_1000, an arch the DSL does not know: "
                                         "every compile outside the harness fails")
    assert "repair: unset it, or set one the DSL knows (sm_80 ... " in result.errlines[0]


def test_a_variable_the_harness_overrides_is_named_in_the_header(project, monkeypatch):
    """The user's ``CUTE_DSL_ARCH`` and ``CUTE_DSL_DISABLE_FILE_CACHING``, set otherwise for the run:
    the header names each with the user's value; one the harness leaves alone is not named."""
    assert install.overridden({"CUTE_DSL_LOG_LEVEL": "10"}, {"CUTE_DSL_LOG_LEVEL": "10"}) is None
    for name in [n for n in os.environ if n.startswith("CUTE_DSL_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("CUTE_DSL_ARCH", "sm_80")
    monkeypatch.setenv("CUTE_DSL_DISABLE_FILE_CACHING", "0")
    monkeypatch.setenv("CUTE_DSL_LOG_LEVEL", "10")
    project.makepyfile(test_one="import pytest\n\n@pytest.mark.harness\ndef test_one():\n    pass\n")
    result = project.runpytest_inprocess("--report-dir=report", "--arch=sm_90a")
    assert result.ret == 0
    result.stdout.fnmatch_lines(["CUTE_DSL_[*] the harness overrides for its run: "
                                 "CUTE_DSL_ARCH=sm_80 (yours, what your own programs run with; the run's: sm_90a), "
                                 "CUTE_DSL_DISABLE_FILE_CACHING=0 (yours, what your own programs run with; the run's: 1)"])


def test_a_callable_object_patched_into_the_dsl_is_named(tmp_path, monkeypatch):
    """A ``.pth`` that wraps ``cute.where`` in a callable object (its class's ``__call__``), or a
    partial of a function: not plain functions, named all the same (49 failures, the patch never
    named, before)."""
    import functools

    from fixtures.plugin import paths, provenance

    (tmp_path / "wrapper.py").write_text("class Wrapped:\n    def __init__(self, f):\n        self.f = f\n"
                                         "    def __call__(self, c, a, b):\n        return self.f(c, b, a)\n"
                                         "def swapped(f, c, a, b):\n    return f(c, b, a)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import wrapper

    (tmp_path / "zz_wrap.pth").write_text("import wrapper\n")
    monkeypatch.setattr(paths, "site_folders", lambda: [str(tmp_path)])
    cute, own = _own_cute(tmp_path)
    real = cute.where
    for patch, what in [(wrapper.Wrapped(real), "a wrapper.Wrapped object (its __call__)"),
                        (functools.partial(wrapper.swapped, real), "wrapper.swapped")]:
        cute.where = patch
        (finding,) = provenance.foreign_functions([cute], {str(own)})
        assert finding.subject == "cutlass.cute.where"
        assert finding.detail.startswith(f"is {what} from {tmp_path / 'wrapper.py'}, not the DSL's own code")
        assert finding.repair == f"remove {tmp_path / 'zz_wrap.pth'} (it imports wrapper into every Python process)"


def test_a_patched_torch_reference_is_named_as_the_harnesss_reference(tmp_path, monkeypatch):
    """A ``sitecustomize.py`` that patches ``torch.add`` and ``Tensor.__add__``: named as the
    harness's reference (9 failures blamed the DSL before, whose answers were right)."""
    import importlib.util

    import torch

    from fixtures.plugin import provenance

    dists = install.installed()
    assert provenance.reference_findings(dists) == []
    (tmp_path / "sitecustomize.py").write_text(
        "import torch\n_add = torch.add\ndef add(a, b, **kw):\n    return _add(a, b, **kw) + 1\n"
        "class Plus:\n    def __init__(self, f):\n        self.f = f\n    def __call__(self, a, b):\n        return self.f(a, b) + 1\n")
    spec = importlib.util.spec_from_file_location("planted_sitecustomize", tmp_path / "sitecustomize.py")  # this one's own may be loaded
    planted = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(planted)
    monkeypatch.setattr(torch, "add", planted.add)
    monkeypatch.setattr(torch.Tensor, "__add__", planted.Plus(torch.Tensor.__add__))
    found = provenance.reference_findings(dists)
    assert sorted(f.subject for f in found) == ["torch.Tensor.__add__", "torch.add"]
    for finding in found:
        assert f"from {tmp_path / 'sitecustomize.py'}, not torch's own code: the harness's reference" in finding.detail
        assert finding.repair == f"remove {tmp_path / 'sitecustomize.py'}, or what imports it at start"


def test_a_plugin_that_patches_the_dsl_after_start_stops_the_run(project, monkeypatch):
    """A pytest plugin (``-p``, as its own ``pytest11`` entry point loads it) that wraps ``cute.where``
    in its ``pytest_sessionstart``, after the start's check: the run stops naming it, exit 6, its
    report written (49 semantics failures, the patch never named, before)."""
    project.makepyfile(
        patching_plugin="import cutlass.cute as cute\n\nclass Wrapped:\n    def __init__(self, f):\n        self.f = f\n"
                        "    def __call__(self, *a, **k):\n        return self.f(*a, **k)\n\n"
                        "def pytest_sessionstart(session):\n    cute.where = Wrapped(cute.where)\n\n"
                        "def pytest_unconfigure(config):\n    if isinstance(cute.where, Wrapped):\n        cute.where = cute.where.f\n",
        test_one="import pytest\n\n@pytest.mark.host\ndef test_one():\n    pass\n")
    monkeypatch.syspath_prepend(str(project.path))
    result = project.runpytest_inprocess("-p", "patching_plugin", "--report-dir=report")
    assert result.ret == INSTALL_BROKEN_EXIT
    assert "INSTALL BROKEN: cutlass.cute.where: is a patching_plugin.Wrapped object (its __call__) from " in result.stdout.str() + result.stderr.str()
    run = RunResult.from_json(json.loads((project.path / "report" / "results.json").read_text()))
    assert (run.status, run.install[0].subject) == ("install broken", "cutlass.cute.where")
    assert "passed" not in {c.outcome for c in run.cases}


def test_a_venv_whose_packages_are_links_is_one_install(tmp_path, monkeypatch):
    """A venv whose package folders and dist-info are symlinks to another install's (how
    ``tests/test_semantics_planted.py`` builds its edited DSL's venv): the module imported through
    the link is the named copy's, no finding."""
    import importlib

    module = f"linked{abs(hash(str(tmp_path)))}"
    real = tmp_path / "real"
    make_dist(real, f"fake-{module}", "1.0", {f"{module}/__init__.py": ""})
    venv = tmp_path / "venv"
    venv.mkdir()
    for entry in real.iterdir():
        (venv / entry.name).symlink_to(entry)
    monkeypatch.syspath_prepend(str(venv))
    importlib.invalidate_caches()
    dists = install.installed([str(venv)])
    assert install.imported_copy_findings(dists, [f"fake-{module}"]) == []
    assert install.duplicate_findings(dists, [f"fake-{module}"]) == []


def test_the_dsl_in_a_venv_and_in_the_system_is_judged_by_the_venvs_copy(site, tmp_path):
    """The DSL in a venv and an older one in the system it was made over: its versions and
    requirements are the venv's copy's (the one named and imported), not the later copy's."""
    system = tmp_path / "system"
    make_dist(system, "nvidia-cutlass-dsl", "4.3.5", {"nvidia_cutlass_dsl.pth": ""})
    make_dist(system, "nvidia-cutlass-dsl-libs-core", "4.3.5", {"nvidia_cutlass_dsl/pkg/cutlass/__init__.py": ""})
    info = next(system.glob("nvidia_cutlass_dsl_libs_core-*.dist-info"))
    (info / "METADATA").write_text((info / "METADATA").read_text() + "Requires-Dist: absentpkg>=1\n")
    dists = install.installed([str(site), str(system)])
    dsl = install.dsl_distributions(dists)
    assert len(dsl) == 4
    assert install.version_findings(dsl) == []
    assert install.dsl_requirement_findings(dsl, dists) == []
    make_dist(site, "nvidia-cutlass-dsl-libs-cu13", "4.7.1", {"nvidia_cutlass_dsl/cu13/x.so": "x"})  # a mix in the venv still is
    (finding,) = install.version_findings(install.dsl_distributions(install.installed([str(site), str(system)])))
    assert finding.subject == "nvidia-cutlass-dsl 4.8.1" and "nvidia-cutlass-dsl-libs-cu13 4.7.1" in finding.detail
