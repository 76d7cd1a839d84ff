"""The DSL's on-disk JIT cache (``CUTE_DSL_CACHE_DIR``), which every implicit ``@cute.jit`` call
reads and writes unless ``CUTE_DSL_DISABLE_FILE_CACHING`` is set (the harness sets it for its own
runs, ``fixtures.dsl.settings``; ``cute.compile`` never uses the cache).

Every check runs in child processes (``suites/cache/_cache_child.py``) with the cache on, in a
folder of its own under the run's temporary folder (a group of tests shares its children and their
folder across xdist workers, ``once_per_run``: each child imports cutlass, the slow part): a first process compiles and writes an entry, a later one must load
it instead of compiling (the pass pipeline never runs, the entry is not rewritten) and compute
the same values; the key must change with what changes the compiled code and nothing else; a
damaged entry must be compiled again, never crash the process nor run; a read-only folder must
not break a call; two processes writing one entry at once must both succeed. Every call's result
is checked element by element: a cached wrong kernel is the failure this tier is for.

DSL 4.3 and 4.4 build a JIT engine (which needs the CUDA driver) before they write an entry, so
on a host without a driver they never write one: there the child plants the entry the DSL
would have written, with the DSL's own writer, and the tests check what the DSL decides (load
or compile, the key) without values; what needs a call to run is skipped, saying so.
``docs/file-cache.md`` has how the cache works and the findings.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import sys
import time
import zlib
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable

import pytest

from fixtures.cases import releases

pytestmark = pytest.mark.cache

ROOT = Path(__file__).resolve().parents[2]
CHILD = "suites.cache._cache_child"
CHILD_TIMEOUT_S = 240
KEPT_DSL_VARS = ("CUTE_DSL_ARCH", "CUTE_DSL_LIBS")  # the compile target and the runtime libraries: the run's own
NO_ENGINE = (
    "host-side @cute.jit execution needs the CUDA driver on this DSL release and this host has none: "
    "the DSL builds its JIT engine before it writes an entry, so nothing here ran"
)


@dataclass
class Child:
    """One child process's report (``_cache_child.main``), or how it died."""

    report: dict
    returncode: int
    stderr: str
    crash: str | None = None

    @property
    def calls(self) -> list[dict]:
        assert self.crash is None, self.crash
        return self.report["calls"]

    def call(self, k: int, explicit: bool = False) -> dict:
        return next(c for c in self.calls if c["k"] == k and c["explicit"] == explicit)


@dataclass
class Folder:
    """A cache folder and the environment its children share; children run in it."""

    root: Path
    cache: Path
    env: dict
    _specs: int = 0

    @classmethod
    def new(cls, root: Path) -> "Folder":
        (root / "cache").mkdir(parents=True)
        (root / "dump").mkdir()
        return cls(root, root / "cache", child_env(root / "cache", root / "dump"))

    def spawn(self, steps: list[dict], env: dict | None = None, **spec) -> tuple[subprocess.Popen, Path]:
        self._specs += 1  # named by pid too: the workers of a run share a folder
        name = f"{os.getpid()}-{self._specs}"
        out, spec_path = self.root / f"report-{name}.json", self.root / f"spec-{name}.json"
        spec_path.write_text(json.dumps({"out": str(out), "steps": steps, **spec}))
        proc = subprocess.Popen(
            [sys.executable, "-m", CHILD, str(spec_path)], cwd=ROOT, env={**self.env, **(env or {})},
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        return proc, out

    @staticmethod
    def wait(proc: subprocess.Popen, out: Path) -> Child:
        try:
            _, stderr = proc.communicate(timeout=CHILD_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            _, stderr = proc.communicate()
            return Child({}, -9, stderr, f"the child ran past {CHILD_TIMEOUT_S} s:\n{stderr[-2000:]}")
        if proc.returncode != 0 or not out.exists():
            return Child({}, proc.returncode, stderr,
                         f"the child process died (exit status {proc.returncode}):\n{stderr[-3000:]}")
        return Child(json.loads(out.read_text()), proc.returncode, stderr)

    def run(self, steps: list[dict], env: dict | None = None, **spec) -> Child:
        return self.wait(*self.spawn(steps, env, **spec))

    def entries(self) -> dict[str, list[int]]:
        """Each file in the cache folder: [inode, mtime_ns, size], so a rewrite shows."""
        stats = {p.name: p.stat() for p in sorted(self.cache.iterdir())}
        return {name: [s.st_ino, s.st_mtime_ns, s.st_size] for name, s in stats.items()}


class Shared(dict):
    """What a group's children reported, built once per run and read by every worker."""

    def child(self, name: str) -> Child:
        return Child(**self[name])

    @property
    def folder(self) -> Folder:
        root = Path(self["root"])
        return Folder(root, root / "cache", child_env(root / "cache", root / "dump"))


def once_per_run(tmp_path_factory: pytest.TempPathFactory, name: str, build: Callable[[Folder], dict]) -> Shared:
    """``build(folder)`` once in the whole run: the first xdist worker to get here runs the group's
    children (each a cutlass import, the slow part), the others wait and read what it wrote."""
    base = tmp_path_factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base  # the workers' common folder
    root, done = shared / f"file-cache-{name}", shared / f"file-cache-{name}" / "done.json"
    with open(shared / f"file-cache-{name}.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not done.exists():
            if root.exists():  # a worker died half-way through
                shutil.rmtree(root)
            built = {"root": str(root), **build(Folder.new(root))}
            done.write_text(json.dumps({k: asdict(v) if isinstance(v, Child) else v for k, v in built.items()}))
        return Shared(json.loads(done.read_text()))


def child_env(cache: Path, dump: Path) -> dict:
    """The run's environment with the file cache on in ``cache``: every other CUTE_DSL_ setting
    goes (a KEEP_* or NO_CACHE switch would turn the cache off), the dump folder is the group's
    (DSL 4.3-4.7 hash it into the key, so every child of a group shares it)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("CUTE_DSL_") or k in KEPT_DSL_VARS}
    env["CUTE_DSL_CACHE_DIR"] = str(cache)
    env["CUTE_DSL_DUMP_DIR"] = str(dump)
    return env


def entry_name(key: str) -> str:
    return f"cute_dsl_{key}.mlir"  # cache_helpers.save_ir: f"{dsl_name.lower()}_{module_hash}.mlir"


def crc_ok_bytes(data: bytes) -> bool:
    """The DSL's own integrity check (``read_bytecode_and_check_crc32``): the last 4 bytes are the
    CRC32 of the rest, in the host's byte order."""
    return len(data) >= 4 and zlib.crc32(data[:-4]) == int.from_bytes(data[-4:], sys.byteorder)


def crc_ok(path: Path) -> bool:
    return crc_ok_bytes(path.read_bytes())


def executes(call: dict) -> bool:
    """Whether the call ran; where it did not, only for want of a CUDA driver on a release that
    needs one for host JIT (``compat.host_jit_unavailable``, probed in this process), else it fails here."""
    if call["error"] is None:
        return True
    from fixtures.dsl.compat import host_jit_unavailable

    assert call.get("needs_driver") and host_jit_unavailable(), f"k={call['k']}: the call failed: {call['error']}"
    return False


def check_values(call: dict) -> None:
    expected = [b + call["k"] * a for a, b in zip(call["a"], call["b"])]
    got = call["values"]
    assert got is not None, f"k={call['k']}: the call returned no values ({call['error']})"
    assert len(got) == len(expected), f"k={call['k']}: {len(got)} values for {len(expected)} elements"
    wrong = [i for i, (g, e) in enumerate(zip(got, expected)) if g != e]
    if wrong:
        i = wrong[0]
        never = " (never written)" if got[i] == call["sentinel"] else ""
        raise AssertionError(f"k={call['k']}: {len(wrong)} of {len(expected)} elements differ from b + {call['k']}*a; "
                             f"first at {i}: got {got[i]}{never}, expected {expected[i]}")


def check_ran(call: dict) -> bool:
    """The call's values are right, or it could not run here for want of a driver (False)."""
    if not executes(call):
        return False
    check_values(call)
    return True


def leftovers(folder: Path) -> list[str]:
    """save_ir writes into tmp.pid_<pid>_<uuid>/ and renames: a folder left means a write broke."""
    return [p.name for p in folder.iterdir() if p.name.startswith("tmp.")]


def record(request: pytest.FixtureRequest, name: str, value) -> None:
    request.node.user_properties.append((name, json.dumps(value)))
    print(f"{name}: {json.dumps(value)}")


# -- 1: a first process writes the entry, a second one loads it --------------------------------------


def _warm(folder: Folder) -> dict:
    first = folder.run([{"k": 3}], plant=True)
    after_first = folder.entries()
    second = folder.run([{"k": 3}, {"k": 3, "explicit": True}])
    return {"first": first, "after_first": after_first, "second": second, "after_second": folder.entries()}


@pytest.fixture(scope="module")
def warm(tmp_path_factory: pytest.TempPathFactory) -> Shared:
    return once_per_run(tmp_path_factory, "warm", _warm)


def test_a_first_call_compiles_and_writes_one_entry(warm: Shared) -> None:
    call = warm.child("first").call(3)
    assert not call["loaded"], "an empty cache folder served an entry"
    assert call["compiles"] >= 1, "the first call never ran the compile pipeline"
    if check_ran(call):
        assert call["dumps"] == 1, f"the DSL wrote {call['dumps']} entries for one compile"
    else:  # 4.3/4.4 without a driver: no engine, so no entry; the child planted the one the DSL would write
        assert call["dumps"] == 0 and call["planted"] is True, f"dumps {call['dumps']}, planted {call['planted']}"
    assert list(warm["after_first"]) == [entry_name(call["hash"])], f"the cache folder holds {list(warm['after_first'])}"
    assert crc_ok(warm.folder.cache / entry_name(call["hash"])), "the entry fails the DSL's own CRC check"


def test_a_second_process_loads_the_entry_instead_of_compiling(warm: Shared, request: pytest.FixtureRequest) -> None:
    first, second = warm.child("first"), warm.child("second")
    compiled, loaded = first.call(3), second.call(3)
    assert loaded["hash"] == compiled["hash"], "the same function, arguments and settings got another key in a new process"
    assert loaded["loaded"], "the second process did not load the entry the first wrote"
    assert loaded["compiles"] == 0, f"the second process ran the compile pipeline {loaded['compiles']} times"
    assert loaded["dumps"] == 0, "the second process wrote the entry again"
    assert warm["after_second"] == warm["after_first"], (
        f"the cache folder changed on a load: {warm['after_first']} -> {warm['after_second']}"
    )
    ran = check_ran(loaded)
    record(request, "file_cache_seconds", {
        "dsl": second.report["dsl"], "executed": ran,
        "compile_call_s": round(compiled["seconds"], 4), "load_call_s": round(loaded["seconds"], 4),
        "pipeline_s": round(compiled["compile_s"], 4), "entry_read_s": round(loaded["load_s"], 4),
        "key_s": [round(compiled["key_s"], 4), round(loaded["key_s"], 4)],
        "import_s": [round(first.report["import_s"], 3), round(second.report["import_s"], 3)],
    })


def test_an_explicit_compile_bypasses_the_file_cache(warm: Shared) -> None:
    """``cute.compile`` passes ``no_cache`` (CompileCallable): it neither reads nor writes an entry."""
    call = warm.child("second").call(3, explicit=True)
    assert call["loads"] == [], "cute.compile looked the function up in the file cache"
    assert call["compiles"] >= 1 and call["dumps"] == 0, f"compiles {call['compiles']}, dumps {call['dumps']}"
    check_ran(call)


# -- 2: what the key includes ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def keyed(tmp_path_factory: pytest.TempPathFactory) -> Shared:
    def build(folder: Folder) -> dict:
        base = folder.run([{"k": 3}], plant=True)
        return {"base": base, "base_entries": folder.entries()}

    return once_per_run(tmp_path_factory, "keyed", build)


def _base(keyed: Shared) -> dict:
    call = keyed.child("base").call(3)
    assert entry_name(call["hash"]) in keyed["base_entries"], f"the baseline wrote no entry ({call['error']})"
    return call


COMPILE_AFFECTING = [
    pytest.param({"env": {"CUTE_DSL_LINEINFO": "1"}}, id="lineinfo"),  # --lineinfo: the device code changes
    pytest.param({"env": {"CUTE_DSL_ARCH": "{other_arch}"}}, id="arch"),  # another compile target
    pytest.param({"identity": "source"}, id="dsl-source"),  # one DSL source file differs (an upgrade, a patch)
    pytest.param({"identity": "dso"}, id="dsl-binary"),  # the compiler library differs
    pytest.param({"identity": "flavour"}, id="cuda-flavour"),  # the cu12 build against the cu13 one
]


@pytest.mark.parametrize("change", COMPILE_AFFECTING)
def test_a_compile_affecting_change_gets_its_own_entry(keyed: Shared, change: dict) -> None:
    """The key (``get_module_hash``) is sha256 over the DSL's version hash (its sources and its
    compiler library), the traced module, the compile-affecting settings and the compile
    options: changing any of them must miss the entry, never load it."""
    base = _base(keyed)
    folder = keyed.folder
    other_arch = "sm_80" if os.environ.get("CUTE_DSL_ARCH") != "sm_80" else "sm_90a"
    env = {k: v.format(other_arch=other_arch) for k, v in change.get("env", {}).items()}
    child = folder.run([{"k": 3}], env=env, identity=change.get("identity"))
    note = child.report.get("identity", {})
    if note.get("no_flavour"):
        pytest.skip(note["no_flavour"])
    call = child.call(3)
    if change.get("identity"):
        assert child.report["identity_hits"] > 0, f"the patch never reached the DSL's version hash: {note}"
    assert call["hash"] != base["hash"], f"{change} left the key unchanged: the entry of another build would be loaded"
    assert not call["loaded"] and call["compiles"] >= 1, f"loaded {call['loaded']}, compiles {call['compiles']}"
    if check_ran(call):
        assert (folder.cache / entry_name(call["hash"])).exists(), "the changed call wrote no entry of its own"
    base_entry = entry_name(base["hash"])
    assert folder.entries()[base_entry] == keyed["base_entries"][base_entry], "the baseline's entry was rewritten"


KEYED_SETTINGS = (
    "DSL 4.3-4.7 hash every setting of their environment manager into the key (get_module_hash over "
    "envar.__dict__: the cache folder, the dump folder, the logging switches among them), so moving the cache "
    "folder or turning logging on misses every entry; 4.8 hashes only the settings declared affects_compile "
    "(EnvVarSpec.cache_key_str). Seen on 4.3.5, the same code at the v4.4.2 to v4.7.0 tags; 4.8.1 keeps the entry"
)


@pytest.mark.parametrize(
    "change",
    [
        pytest.param({"moved": True}, id="cache-folder-moved"),
        pytest.param({"env": {"CUTE_DSL_DUMP_DIR": "{tmp}/other-dump"}}, id="other-dump-dir"),
        pytest.param({"env": {"CUTE_DSL_LOG_TO_CONSOLE": "1", "CUTE_DSL_LOG_LEVEL": "20"}}, id="logging-on"),
    ],
)
@pytest.mark.xfail(releases.matches("<4.8"), strict=True, reason=KEYED_SETTINGS)
def test_a_setting_that_does_not_affect_the_compile_keeps_the_entry(keyed: Shared, change: dict,
                                                                     tmp_path: Path) -> None:
    base = _base(keyed)
    folder = keyed.folder
    env = {k: v.format(tmp=tmp_path) for k, v in change.get("env", {}).items()}
    if change.get("moved"):  # a CI cache restored at another path: the same entry, another folder
        moved = tmp_path / "moved-cache"
        moved.mkdir()
        shutil.copy2(folder.cache / entry_name(base["hash"]), moved)
        env["CUTE_DSL_CACHE_DIR"] = str(moved)
    if "CUTE_DSL_DUMP_DIR" in env:
        Path(env["CUTE_DSL_DUMP_DIR"]).mkdir()
    call = folder.run([{"k": 3}], env=env).call(3)
    assert call["hash"] == base["hash"], f"{sorted(env)} changed the key"
    assert call["loaded"] and call["compiles"] == 0, f"loaded {call['loaded']}, compiles {call['compiles']}"
    check_ran(call)


# -- 3: damaged entries ---------------------------------------------------------------------------


def _truncated(data: bytes) -> bytes:
    return data[: len(data) // 2]  # an interrupted copy


def _corrupted(data: bytes) -> bytes:
    flipped = bytearray(data)
    flipped[len(data) // 3] ^= 0xFF  # a flipped byte, the CRC now wrong
    return bytes(flipped)


def _garbage_with_valid_crc(data: bytes) -> bytes:
    body = (b"not MLIR bytecode " * len(data))[: len(data) - 4]  # passes the CRC, fails the parse
    return body + zlib.crc32(body).to_bytes(4, sys.byteorder)


def _empty(data: bytes) -> bytes:
    return b""  # a crash between create and write (or a full disk)


DAMAGES = {"truncated": (2, _truncated), "corrupted": (3, _corrupted),
           "garbage-with-valid-crc": (4, _garbage_with_valid_crc), "empty": (5, _empty)}
CRC_REFUSALS = ("truncated", "corrupted", "empty")  # refused by the CRC check itself


def _damaged(folder: Folder) -> dict:
    steps = [{"k": k} for k, _ in DAMAGES.values()]
    writer = folder.run(steps, plant=True)
    original = {}
    for name, (k, damage) in DAMAGES.items():
        path = folder.cache / entry_name(writer.call(k)["hash"])
        original[name] = path.read_bytes().hex()
        path.write_bytes(damage(bytes.fromhex(original[name])))
    reader = folder.run(steps)
    rewritten = {name: (folder.cache / entry_name(writer.call(k)["hash"])).read_bytes().hex()
                 for name, (k, _) in DAMAGES.items()}
    return {"writer": writer, "original": original, "reader": reader, "rewritten": rewritten,
            "verifier": folder.run(steps)}


@pytest.fixture(scope="module")
def damaged(tmp_path_factory: pytest.TempPathFactory) -> Shared:
    return once_per_run(tmp_path_factory, "damaged", _damaged)


@pytest.mark.parametrize("damage", list(DAMAGES))
def test_a_damaged_entry_is_compiled_again(damaged: Shared, damage: str) -> None:
    k = DAMAGES[damage][0]
    reader = damaged.child("reader")
    assert reader.crash is None, f"a damaged entry took the process down: {reader.crash}"
    call = reader.call(k)
    assert call["hash"] == damaged.child("writer").call(k)["hash"], "the key moved between processes"
    assert not call["loaded"], f"the {damage} entry was loaded"
    assert call["compiles"] >= 1, f"the {damage} entry was neither loaded nor compiled"
    if check_ran(call):
        rewritten = bytes.fromhex(damaged["rewritten"][damage])
        assert call["dumps"] == 1, f"the {damage} entry was not written again"
        assert rewritten == bytes.fromhex(damaged["original"][damage]), (
            f"the entry written in place of the {damage} one differs from the first compile's "
            f"({len(rewritten)} bytes{', CRC ok' if crc_ok_bytes(rewritten) else ', CRC wrong'})"
        )


def test_a_rewritten_entry_loads_in_the_next_process(damaged: Shared) -> None:
    if not executes(damaged.child("writer").calls[0]):
        pytest.skip(NO_ENGINE)
    verifier = damaged.child("verifier")
    for name, (k, _) in DAMAGES.items():
        call = verifier.call(k)
        assert call["loaded"] and call["compiles"] == 0, f"{name}: the rewritten entry was not loaded"
        check_values(call)


@pytest.mark.xfail(
    releases.matches("<4.4"), strict=True,
    reason="DSL 4.3's cache_helpers raises DSLRuntimeError on a CRC mismatch without importing it: the refusal "
           "surfaces as a NameError (still caught by load_cache_from_path, so the entry is compiled again); "
           "v4.4.2's cache_helpers imports it",
)
@pytest.mark.parametrize("damage", CRC_REFUSALS)
def test_a_checksum_failure_is_refused_as_a_dsl_error(damaged: Shared, damage: str) -> None:
    warnings = damaged.child("reader").call(DAMAGES[damage][0])["warnings"]
    assert warnings, f"the {damage} entry was refused without a warning"
    reasons = [arg for w in warnings for arg in w["args"]]
    assert any(r.startswith("DSLRuntimeError") for r in reasons), f"the refusal's reason: {reasons}"


@pytest.mark.xfail(
    strict=True,
    reason="load_cache_from_path warns with log().warning(f'... for {file}.', e): an argument and no placeholder, "
           "so with logging on Python prints '--- Logging error ---' and a traceback instead of the warning, and "
           "with logging off (the default) the refusal is silent. In 4.3.5 and 4.8.1, and at the v4.4.2 to v4.7.0 tags",
)
def test_a_refused_entry_is_reported_legibly(damaged: Shared) -> None:
    reader = damaged.child("reader")
    for name, (k, _) in DAMAGES.items():
        warnings = reader.call(k)["warnings"]
        assert warnings, f"the {name} entry was refused without a warning"
        assert all(w["formats"] for w in warnings), f"{name}: {warnings[0]['msg']!r} % {warnings[0]['args']} fails"


# -- 4: a read-only cache folder ------------------------------------------------------------------


def _read_only(folder: Folder) -> dict:
    writer = folder.run([{"k": 3}], plant=True)
    before = folder.entries()
    modes = {p: p.stat().st_mode for p in [folder.cache, *folder.cache.iterdir()]}
    for path in folder.cache.iterdir():
        path.chmod(0o444)
    folder.cache.chmod(0o555)
    try:  # root writes anywhere: the children drop CAP_DAC_OVERRIDE and its kin first (drop_dac)
        reader = folder.run([{"k": 3}, {"k": 4}], drop_dac=True)
        after = folder.entries()
        tmp_left = leftovers(folder.cache)
        missing = folder.cache / "missing"  # a cache folder that does not exist and cannot be made
        uncreatable = folder.run([{"k": 3}], env={"CUTE_DSL_CACHE_DIR": str(missing)}, drop_dac=True)
    finally:
        for path, mode in modes.items():
            path.chmod(mode)
    return {"writer": writer, "before": before, "reader": reader, "after": after, "tmp_left": tmp_left,
            "uncreatable": uncreatable}


@pytest.fixture(scope="module")
def read_only(tmp_path_factory: pytest.TempPathFactory) -> Shared:
    shared = once_per_run(tmp_path_factory, "read-only", _read_only)
    report = shared.child("reader").report
    if report.get("cache_writable"):
        pytest.skip(f"the child could still write into the read-only folder (uid {os.geteuid()}, "
                    f"dropping root's DAC capabilities: {report.get('dac')})")
    return shared


def test_a_read_only_folder_serves_its_entries(read_only: Shared) -> None:
    call = read_only.child("reader").call(3)
    assert call["hash"] == read_only.child("writer").call(3)["hash"], "the key moved between processes"
    assert call["loaded"] and call["compiles"] == 0, f"loaded {call['loaded']}, compiles {call['compiles']}"
    check_ran(call)


def test_a_read_only_folder_still_compiles_what_it_lacks(read_only: Shared, request: pytest.FixtureRequest) -> None:
    reader = read_only.child("reader")
    call = reader.call(4)
    if not check_ran(call):
        pytest.skip(NO_ENGINE + " (the write this test is about comes after the engine)")
    assert not call["loaded"] and call["compiles"] >= 1
    assert call["dumps"] == 1 and call["dump_errors"] == [], f"the failed write escaped: {call['dump_errors']}"
    assert read_only["after"] == read_only["before"] and not read_only["tmp_left"], "a read-only folder changed"
    said = [w["text"] or w["msg"] for w in call["warnings"]]
    record(request, "read_only_write", {"warned_through_dsl_logger": said,
                                        "stderr_mentions_cache": "cache" in reader.stderr.lower()})
    assert any("dumping" in s for s in said), "the failed write was not even logged"


@pytest.mark.xfail(
    strict=True,
    reason="dump_cache_to_path calls os.makedirs(path) outside its try: a CUTE_DSL_CACHE_DIR that does not "
           "exist and cannot be created fails every compiling call with PermissionError (an existing read-only "
           "folder is tolerated). In 4.3.5 and 4.8.1, and at the v4.4.2 to v4.7.0 tags",
)
def test_an_uncreatable_cache_folder_does_not_break_the_call(read_only: Shared) -> None:
    call = read_only.child("uncreatable").call(3)
    if call["error"] is not None and not executes(call):
        pytest.skip(NO_ENGINE + " (the folder is made after the engine)")
    assert call["error"] is None, f"the call failed: {call['error']} (dump: {call['dump_errors']})"
    check_values(call)


# -- 5: two processes writing one entry at once ---------------------------------------------------


def test_two_processes_writing_one_entry_at_once(tmp_path: Path, request: pytest.FixtureRequest) -> None:
    folder = Folder.new(tmp_path / "concurrent")
    steps = [{"k": k} for k in (6, 7, 8)]
    go = folder.root / "go"
    ready = [folder.root / f"ready-{i}" for i in range(2)]
    started = [folder.spawn(steps, ready=str(r), go=str(go)) for r in ready]
    deadline = time.monotonic() + CHILD_TIMEOUT_S
    while not all(r.exists() for r in ready):  # both imported and hooked
        if time.monotonic() > deadline or any(proc.poll() is not None for proc, _ in started):
            break
        time.sleep(0.01)
    go.touch()  # both calls start now
    children = [folder.wait(proc, out) for proc, out in started]
    for child in children:
        assert child.crash is None, child.crash
    if not executes(children[0].calls[0]):
        pytest.skip(NO_ENGINE)
    for child in children:
        for call in child.calls:
            check_values(call)
    keys = {k: children[0].call(k)["hash"] for k in (6, 7, 8)}
    files = folder.entries()
    assert sorted(files) == sorted(entry_name(h) for h in keys.values()), f"the folder holds {sorted(files)}"
    assert not leftovers(folder.cache)
    for k, key in keys.items():
        assert all(child.call(k)["hash"] == key for child in children), f"k={k}: two keys for one call"
        assert crc_ok(folder.cache / entry_name(key)), f"k={k}: the entry both wrote fails its CRC"
    record(request, "concurrent_writes", {
        "written_by_both": [k for k in keys if all(child.call(k)["dumps"] for child in children)],
        "loaded_from_the_other": [k for k in keys if any(child.call(k)["loaded"] for child in children)],
    })
    verifier = folder.run(steps)
    for call in verifier.calls:
        assert call["loaded"] and call["compiles"] == 0, f"k={call['k']}: the entry written twice did not load"
        check_values(call)
