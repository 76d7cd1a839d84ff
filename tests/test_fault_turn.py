"""The machine's fault turn: taken just before a faulting process's launch, held until it exits."""

import fcntl
import subprocess
from contextlib import contextmanager
import sys
from pathlib import Path

import pytest

from fixtures.cases import failures, matrix
from fixtures.dsl import fault_turn, large_room, runner

pytestmark = pytest.mark.harness

# a process that takes the turn (twice: the second is a no-op), says so, and lives until its stdin closes
HOLDER = """
import sys
from pathlib import Path
from fixtures.dsl import fault_turn
fault_turn.LOCK_PATH = Path(sys.argv[1])
fault_turn.take()
fault_turn.take()
print("held", flush=True)
sys.stdin.read()
"""


def _free(path: Path) -> bool:
    with open(path, "a") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        fcntl.flock(lock, fcntl.LOCK_UN)
        return True


def test_a_process_holds_the_turn_from_taking_it_until_it_exits(tmp_path):
    path = tmp_path / "turn.lock"
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(path)], cwd=Path(__file__).parents[1],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        assert not _free(path), "the turn was free while its holder lived"
    finally:
        holder.communicate(timeout=30)
    assert holder.returncode == 0
    assert _free(path), "the turn stayed taken after its holder exited"


class _Launch:
    def __init__(self, events: list[str]) -> None:
        self.events = events

    def launch(self) -> None:
        self.events.append("launch")

    def verify(self) -> None:
        self.events.append("verify")


def _record(events: list[str], monkeypatch, large: bool) -> None:
    """``runner.run_case``'s steps recorded in ``events`` instead of done; ``large``: the case is a large one."""
    @contextmanager
    def held(nbytes: int):
        events.append(f"room {nbytes}")
        yield
        events.append("room let go")

    monkeypatch.setattr(matrix, "is_large", lambda case: large)
    monkeypatch.setattr(matrix, "device_bytes", lambda case: 7)
    monkeypatch.setattr(large_room, "held", held)
    monkeypatch.setattr(runner, "compile_on_a_small_twin", lambda case, compiler: events.append("twin"))
    monkeypatch.setattr(runner, "prepare", lambda case, seed, compiler: events.append("prepare") or _Launch(events))
    monkeypatch.setattr(runner.torch.cuda, "synchronize", lambda: None)
    monkeypatch.setattr(runner.torch.cuda, "empty_cache", lambda: events.append("empty cache"))


@pytest.mark.parametrize("large", [False, True], ids=["case", "large-case"])
def test_the_turn_comes_after_the_compile_and_operands_and_before_the_launch(large, monkeypatch):
    """A large case also holds its bytes of the GPU's room for them from after its small twin's
    compile (no memory of its own yet) until its memory is handed back."""
    events: list[str] = []
    _record(events, monkeypatch, large)
    runner.run_case(object(), 0, None, before_launch=lambda: events.append("turn"))
    steps = ["prepare", "turn", "launch", "verify"]
    assert events == (["twin", "room 7", *steps, "empty cache", "room let go"] if large else steps)


def test_a_large_case_that_fails_hands_its_memory_back_before_its_room(monkeypatch):
    events: list[str] = []
    _record(events, monkeypatch, large=True)

    def wrong() -> None:
        raise failures.Mismatch("wrong")

    monkeypatch.setattr(_Launch, "verify", lambda self: wrong())
    with pytest.raises(failures.Mismatch):
        runner.run_case(object(), 0, None)
    assert events == ["twin", "room 7", "prepare", "launch", "empty cache", "room let go"]
