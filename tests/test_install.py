"""The install checks at start: each kind of broken install is found and named, with its repair,
and a sound one passes (fake packages in temporary folders; end-to-end, a run stops with exit 6
and writes its report). ``examples/install_drill.py`` breaks a real install the same ways."""

import base64
import hashlib
import json
import os

import pytest

from fixtures.dsl import compat
from fixtures.plugin import install
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
    make_dist(tmp_path / "other", "nvidia-cutlass-dsl", "4.7.1", {"y.py": ""})
    dists = install.installed([str(site), str(tmp_path / "other"), str(site)])  # a folder listed twice is read once
    (finding,) = install.duplicate_findings(dists, ["nvidia-cutlass-dsl", "torch"])
    assert finding.cause == "duplicate" and "2 installs on the path (4.8.1 in" in finding.detail and "4.7.1 in" in finding.detail
    assert install.version_findings(install.dsl_distributions(dists)) == []  # the duplicate is the finding, not a mix


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
