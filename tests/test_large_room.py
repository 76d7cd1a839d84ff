"""The large cases' room on a GPU, shared by the processes that run them (``fixtures.dsl.large_room``)."""

import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from fixtures.dsl import large_room, settings

pytestmark = pytest.mark.harness

ROOT = Path(__file__).parents[1]
UNIT = 3 * large_room.GIB  # more than a worker's reserve: a case of a unit takes room
ROOM = 10 * UNIT

# a process that holds NBYTES of the room, says so, and lets go when its stdin closes
HOLDER = """
import sys
from fixtures.dsl import large_room
with large_room.held(int(sys.argv[1])):
    print("held", flush=True)
    sys.stdin.read()
"""


def _tickets(ledger: Path) -> list[large_room.Ticket]:
    """The account's tickets (its lock file left out)."""
    return [t for t in map(large_room.Ticket.parse, os.listdir(ledger)) if t is not None] if ledger.exists() else []


@pytest.fixture
def room_here(monkeypatch, tmp_path) -> Path:
    """This process has a room of ``ROOM`` bytes, its account in the returned folder (the holders' too)."""
    monkeypatch.setenv(settings.LARGE_ROOM_BYTES, str(ROOM))
    monkeypatch.setenv(settings.LARGE_ROOM_LEDGER, str(tmp_path / "ledger"))
    return tmp_path / "ledger"


class _Holder:
    def __init__(self, ledger: Path, units: int) -> None:
        env = {**os.environ, settings.LARGE_ROOM_BYTES: str(ROOM), settings.LARGE_ROOM_LEDGER: str(ledger)}
        self.proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(units * UNIT)], cwd=ROOT, env=env,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.ledger = ledger

    def wait_held(self, timeout_s: float = 30) -> None:
        assert select.select([self.proc.stdout], [], [], timeout_s)[0], "never let in"
        assert self.proc.stdout.readline().strip() == "held"

    def tickets(self) -> list[large_room.Ticket]:
        return [t for t in _tickets(self.ledger) if t.pid == self.proc.pid]

    def wait_waiting(self) -> None:
        """Until its ticket is in the account, then a few of its looks at it: still not let in."""
        deadline = time.monotonic() + 60
        while not self.tickets() and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(5 * large_room.POLL_S)
        assert [t.state for t in self.tickets()] == [large_room.WAITING], self.tickets()

    def let_go(self) -> None:
        self.proc.communicate(timeout=60)
        assert self.proc.returncode == 0


@pytest.fixture
def holders(tmp_path):
    started: list[_Holder] = []

    def start(units: int) -> _Holder:
        started.append(_Holder(tmp_path / "ledger", units))
        return started[-1]

    yield start
    for holder in started:
        if holder.proc.poll() is None:
            holder.proc.kill()
            holder.proc.communicate()


def test_cases_that_fit_together_hold_the_room_at_once_and_the_next_waits_for_its_bytes(holders):
    first, second = holders(4), holders(4)
    first.wait_held()
    second.wait_held()
    third = holders(4)
    third.wait_waiting()
    first.let_go()
    third.wait_held()
    second.let_go()
    third.let_go()


def test_a_wide_waiter_is_not_passed_by_a_narrow_one_that_came_after_it(holders):
    holding = holders(8)
    holding.wait_held()
    wide = holders(8)
    wide.wait_waiting()
    narrow = holders(2)  # fits beside the holder, but came after the wide one
    narrow.wait_waiting()
    holding.let_go()
    wide.wait_held()
    narrow.wait_held()  # 8 + 2 fit the room of 10
    wide.let_go()
    narrow.let_go()


def test_a_holder_that_dies_lets_go_of_its_bytes(holders):
    dead = holders(8)
    dead.wait_held()
    waiting = holders(8)
    waiting.wait_waiting()
    dead.proc.send_signal(signal.SIGKILL)
    dead.proc.communicate()
    waiting.wait_held()
    assert not dead.tickets()
    waiting.let_go()


def test_a_case_wider_than_the_room_is_let_in_alone(holders):
    narrow = holders(2)
    narrow.wait_held()
    wider = holders(12)
    wider.wait_waiting()
    narrow.let_go()
    wider.wait_held()
    wider.let_go()
    assert not _tickets(wider.ledger)


def test_a_process_that_inherited_no_room_waits_for_nothing(monkeypatch, tmp_path):
    monkeypatch.delenv(settings.LARGE_ROOM_BYTES, raising=False)
    monkeypatch.delenv(settings.LARGE_ROOM_LEDGER, raising=False)
    monkeypatch.chdir(tmp_path)
    with large_room.held(ROOM * 100):
        pass
    assert not list(tmp_path.iterdir())


def test_a_case_within_a_workers_reserve_takes_no_room(holders, room_here):
    full = holders(10)
    full.wait_held()
    assert full.ledger == room_here
    with large_room.held(large_room.WORKER_RESERVE):  # let in at once, beside a full room
        assert [t.state for t in _tickets(room_here)] == [large_room.HOLDING]
    full.let_go()


def test_a_child_that_runs_a_case_alone_is_handed_no_room_while_its_parent_holds_its_bytes(room_here):
    with large_room.held_for_a_child(4 * UNIT) as env:
        assert [(t.state, t.pid) for t in _tickets(room_here)] == [(large_room.HOLDING, os.getpid())]
        assert settings.LARGE_ROOM_BYTES not in env and settings.LARGE_ROOM_LEDGER not in env
        assert env["PATH"] == os.environ["PATH"]
    assert not _tickets(room_here)


@pytest.mark.parametrize("plan", ["gpu", "compile"])
def test_a_canary_of_a_large_case_holds_its_bytes_while_its_child_runs_on_the_gpu(plan, monkeypatch, room_here):
    from fixtures.cases import matrix
    from fixtures.plugin import canary

    case = next(c for c in matrix.large_cases() if large_room.WORKER_RESERVE < matrix.device_bytes(c) <= ROOM)
    seen = []

    def child(args, env, **kwargs):
        seen.append(([t.state for t in _tickets(room_here)], settings.LARGE_ROOM_BYTES in env))

    monkeypatch.setattr(canary.subprocess, "run", child)
    canary.run_alone("run_one", plan, case)
    assert seen == [([large_room.HOLDING] if plan == "gpu" else [], False)]


@pytest.mark.parametrize(("workers", "skipped"), [(16, True), (4, False)])
def test_a_large_case_skips_by_the_room_the_start_checked_and_the_lanes_share(workers, skipped, pytestconfig, monkeypatch):
    """One figure for a GPU's room for large cases: NVML's total less the workers' reserves, as
    ``gpus.check_free`` counts it at start and the lanes share it; the fp32 case past 2**31
    elements (54.1 GiB) skips under 16 workers on an H100 and runs under 4."""
    from fixtures.cases import matrix
    from fixtures.plugin import gpus, run_state
    from fixtures.plugin.provided import _skip_without_room
    from reports.model import GpuRecord

    h100 = GpuRecord(0, "GPU-fake-0", "NVIDIA H100 80GB HBM3", 81559, None, "host")
    state = run_state.of(pytestconfig)
    monkeypatch.setattr(state, "pinned", h100)
    monkeypatch.setattr(state, "gpus", [h100])
    monkeypatch.setattr(pytestconfig, "workerinput", {"workercount": workers}, raising=False)
    case = next(c for c in matrix.large_cases() if c.dtype.id == "fp32" and c.shape == matrix.HUGE)
    assert matrix.device_bytes(case) > gpus.large_room(81559 * gpus.MIB, 16)
    if skipped:
        with pytest.raises(pytest.skip.Exception, match=r"this GPU has 79\.6 GiB, .* 15 other workers .*: 47\.6 GiB$"):
            _skip_without_room(case, pytestconfig)
    else:
        _skip_without_room(case, pytestconfig)


def test_a_planted_large_case_run_alone_has_its_bytes_held_while_its_child_runs(monkeypatch, room_here):
    from types import SimpleNamespace

    from fixtures.cases import matrix
    from suites.gpu import _run_planted
    from suites.gpu._planted_classes import PLANTED_LARGE

    case = next(c for p in PLANTED_LARGE for c in p.cases(p.caught) if c.shape == matrix.HUGE)
    assert large_room.WORKER_RESERVE < matrix.device_bytes(case) <= ROOM
    seen = []

    def child(args, env, **kwargs):
        seen.append(([t.state for t in _tickets(room_here)], settings.LARGE_ROOM_BYTES in env, args[-1]))
        return SimpleNamespace(returncode=1, stdout="", stderr="illegal memory access")

    monkeypatch.setattr(_run_planted.subprocess, "run", child)
    assert _run_planted.run_alone(case).endswith("illegal memory access")
    assert seen == [([large_room.HOLDING], False, case.id)] and not _tickets(room_here)
