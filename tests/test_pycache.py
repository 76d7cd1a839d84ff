"""The run's shared bytecode (``fixtures.plugin.pycache``): where an environment keeps no bytecode
for a package and writes none, the controller's processes compile it once into the run's folder,
and where it keeps or writes its own, nothing changes. Throwaway packages in temporary folders."""

import json
import os
import subprocess
import sys
import textwrap
import time

import pytest

from fixtures.plugin import pycache

pytestmark = pytest.mark.harness

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture
def package(tmp_path):
    """Packages ``sharedpkg`` and ``otherpkg`` with no bytecode beside their sources."""
    site = tmp_path / "site"
    for name in ("sharedpkg", "otherpkg"):
        (site / name).mkdir(parents=True)
        (site / name / "__init__.py").write_text("VALUE = 41 + 1\n")
    return site


def _python(code: str, site, **env) -> subprocess.CompletedProcess:
    environ = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX")}
    environ |= {"PYTHONPATH": os.pathsep.join([str(site), ROOT]), **env}
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=environ, capture_output=True, text=True,
                          check=True)


SHARE_THEN_CHILD = """
    import json, subprocess, sys
    from pathlib import Path
    from fixtures.plugin import pycache
    found = pycache.share(Path({folder!r}), ("sharedpkg",))
    import sharedpkg
    child = subprocess.run([sys.executable, "-c", "import sharedpkg; print(sharedpkg.__spec__.cached)"],
                           capture_output=True, text=True, check=True)
    print(json.dumps({{"found": found, "mine": sharedpkg.__spec__.cached, "child": child.stdout.strip()}}))
"""


def test_a_package_compiled_in_every_process_is_compiled_once_into_the_runs_folder(package, tmp_path):
    folder = tmp_path / "run" / "pycache"
    out = json.loads(_python(SHARE_THEN_CHILD.format(folder=str(folder)), package, PYTHONDONTWRITEBYTECODE="1").stdout)
    assert out["found"] == ["sharedpkg"]
    assert out["mine"].startswith(str(folder)) and os.path.exists(out["mine"]), "this process wrote no bytecode there"
    assert out["child"] == out["mine"], "a process it started did not read the run's bytecode"
    assert not (package / "sharedpkg" / "__pycache__").exists(), "bytecode written beside the source"


@pytest.mark.parametrize("env, compiled", [
    pytest.param({}, False, id="python-writes-its-own"),
    pytest.param({"PYTHONDONTWRITEBYTECODE": "1"}, True, id="bytecode-already-cached"),
    pytest.param({"PYTHONDONTWRITEBYTECODE": "1", "PYTHONPYCACHEPREFIX": "USER"}, False, id="the-users-own-prefix"),
])
def test_nothing_changes_where_bytecode_is_cached_written_or_placed_by_the_user(package, tmp_path, env, compiled):
    if compiled:
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(package)], check=True)
    env = {k: str(tmp_path / "user") if v == "USER" else v for k, v in env.items()}
    folder = tmp_path / "run" / "pycache"
    out = json.loads(_python(SHARE_THEN_CHILD.format(folder=str(folder)), package, **env).stdout)
    assert out["found"] == [] and not folder.exists()
    assert out["child"] == out["mine"]


def test_a_read_only_cache_folder_counts_as_compiled_every_time(package, monkeypatch):
    if os.geteuid() == 0:  # root writes anywhere: stand the check in
        monkeypatch.setattr(pycache.os, "access", lambda path, mode: False)
    else:
        (package / "sharedpkg").chmod(0o555)
    monkeypatch.syspath_prepend(str(package))
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    try:
        assert pycache.compiled_every_time(("sharedpkg",)) == ["sharedpkg"]
    finally:
        (package / "sharedpkg").chmod(0o755)


WARM = """
    import json, sys
    from pathlib import Path
    from fixtures.plugin import pycache
    found = pycache.share(Path({folder!r}), ("sharedpkg",))
    done = Path({folder!r}).parent / "warmed"
    warmer = pycache.warm((("sharedpkg",), ("otherpkg",)), done=done)
    status = warmer.wait()
    print(json.dumps({{"status": status, "done": done.exists(),
                      "imported_here": "sharedpkg" in sys.modules or "otherpkg" in sys.modules}}))
"""


def test_the_warmer_compiles_each_group_into_the_runs_folder_before_this_process_imports(package, tmp_path):
    """The controller waits on the import child before each import; the warmer has the bytecode
    of every group written by then (each in a process of its own), under the run's folder and
    nowhere else."""
    folder = tmp_path / "run" / "pycache"
    out = json.loads(_python(WARM.format(folder=str(folder)), package, PYTHONDONTWRITEBYTECODE="1").stdout)
    assert out == {"status": 0, "done": True, "imported_here": False}
    written = [p.relative_to(folder).as_posix() for p in folder.rglob("*.pyc")]
    for name in ("sharedpkg", "otherpkg"):
        assert any(f"/{name}/__init__." in path for path in written), f"the warmer wrote no {name} bytecode there: {written}"
        assert not (package / name / "__pycache__").exists(), "bytecode written beside the source"


WARM_TREES = """
    import json, sys
    from pathlib import Path
    from fixtures.plugin import pycache
    pycache.share(Path({folder!r}), ("sharedpkg",))
    done = Path({folder!r}).parent / "warmed"
    print(pycache.warm((("otherpkg",),), done=done, after=(), trees=("sharedpkg",)).wait())
"""


def test_the_warmer_compiles_a_packages_whole_tree_in_processes_of_its_own(package, tmp_path):
    """``trees``: every source of the package, the modules no group imports too, compiled into the
    run's folder by processes beside the groups' imports (an import compiles its modules on one CPU)."""
    (package / "sharedpkg" / "sub").mkdir()
    (package / "sharedpkg" / "sub" / "__init__.py").write_text("")
    (package / "sharedpkg" / "sub" / "deep.py").write_text("DEEP = 1\n")
    (package / "sharedpkg" / "unused.py").write_text("UNUSED = 1\n")
    folder = tmp_path / "run" / "pycache"
    assert _python(WARM_TREES.format(folder=str(folder)), package, PYTHONDONTWRITEBYTECODE="1").stdout.strip() == "0"
    written = sorted(p.relative_to(folder).as_posix().split("/sharedpkg/", 1)[1].split(".")[0]
                     for p in folder.rglob("*.pyc") if "/sharedpkg/" in p.as_posix())
    assert written == ["__init__", "sub/__init__", "sub/deep", "unused"]
    assert not (package / "sharedpkg" / "__pycache__").exists(), "bytecode written beside the source"


def test_a_warmer_is_stopped_with_the_processes_it_started(tmp_path):
    """A run that ends before the warmer leaves none of its group processes writing into the
    scratch folder that goes next."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "slowpkg.py").write_text("import os, time\nopen(os.environ['PID_FILE'], 'w').write(str(os.getpid()))\ntime.sleep(60)\n")
    pid_file = tmp_path / "pid"
    sys.path.insert(0, str(site))
    os.environ["PID_FILE"] = str(pid_file)
    try:
        warmer = pycache.warm((("json",), ("slowpkg",)), after=())
        deadline = time.monotonic() + 30
        while not pid_file.exists() or not pid_file.read_text():
            assert time.monotonic() < deadline, "the group process never started"
            time.sleep(0.05)
        pycache.stop(warmer)
    finally:
        sys.path.remove(str(site))
        del os.environ["PID_FILE"]
    side = int(pid_file.read_text())
    deadline = time.monotonic() + 10
    while pycache._running(side):
        assert time.monotonic() < deadline, "a group process outlived the stopped warmer"
        time.sleep(0.05)


def test_a_warmer_still_running_is_stopped():
    warmer = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    pycache.stop(warmer)
    assert warmer.returncode is not None
    pycache.stop(warmer)  # again: nothing left to do
    pycache.stop(None)


def test_a_worker_waits_for_the_warmer_until_it_is_done_or_gone(tmp_path):
    """Workers start beside the warmer (``beside``): each waits until the warmer has written its
    file, or has ended without (a crash must not hold the run)."""
    done = tmp_path / "warmed"
    warmer = pycache.warm((("json",),), done=done)
    pycache.wait_for_warmer(done, warmer.pid)
    assert done.exists()
    warmer.wait()
    crashed = subprocess.Popen([sys.executable, "-c", "import os; os.abort()"])
    crashed.wait()
    pycache.wait_for_warmer(tmp_path / "never", crashed.pid)  # returns: nothing will write it
    slow = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(0.5)"])
    pycache.wait_for_warmer(tmp_path / "never", slow.pid)  # waits while it runs, returns once it has ended
    assert slow.poll() is not None
