"""The machine's fault turn: taken just before a faulting process's launch, held until it exits."""

import fcntl
import subprocess
import sys
from pathlib import Path

import pytest

from fixtures.cases import matrix
from fixtures.dsl import fault_turn, runner

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


@pytest.mark.parametrize("large", [False, True], ids=["case", "large-case"])
def test_the_turn_comes_after_the_compile_and_operands_and_before_the_launch(large, monkeypatch):
    events: list[str] = []
    monkeypatch.setattr(matrix, "is_large", lambda case: large)
    monkeypatch.setattr(runner, "compile_on_a_small_twin", lambda case, compiler: events.append("twin"))
    monkeypatch.setattr(runner, "prepare", lambda case, seed, compiler: events.append("prepare") or _Launch(events))
    monkeypatch.setattr(runner.torch.cuda, "synchronize", lambda: None)
    monkeypatch.setattr(runner.torch.cuda, "empty_cache", lambda: None)
    runner.run_case(object(), 0, None, before_launch=lambda: events.append("turn"))
    assert events == (["twin"] if large else []) + ["prepare", "turn", "launch", "verify"]
