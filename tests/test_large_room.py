"""The large cases' room on a GPU, shared by the workers that run them (``fixtures.plugin.large_room``)."""

import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch

from fixtures.cases import matrix
from fixtures.plugin import gpus, large_room, run_state
from reports.model import GpuRecord

pytestmark = pytest.mark.harness

ROOT = Path(__file__).parents[1]
UNIT = 3 * gpus.GIB
ROOM = 10 * UNIT

# a process that holds NBYTES of ROOM in LEDGER, says so, and lets go when its stdin closes
HOLDER = """
import sys
from pathlib import Path
from fixtures.plugin import large_room
with large_room.held(Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])):
    print("held", flush=True)
    sys.stdin.read()
"""


def _tickets(ledger: Path) -> list[large_room.Ticket]:
    """The account's tickets (its lock file left out)."""
    return [t for t in map(large_room.Ticket.parse, os.listdir(ledger)) if t is not None] if ledger.exists() else []


class _Holder:
    def __init__(self, ledger: Path, units: int) -> None:
        self.proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(ledger), str(ROOM), str(units * UNIT)], cwd=ROOT,
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


H100 = GpuRecord(0, "GPU-fake-0", "NVIDIA H100 80GB HBM3", 81559, None, "host")


def _item(config, case, marker: str = "gpu") -> SimpleNamespace:
    """What ``held_by`` reads of a test: its config, its ``case`` parameter, its markers."""
    return SimpleNamespace(config=config, callspec=SimpleNamespace(params={"case": case}),
                           get_closest_marker=lambda name: name == marker or None)


@pytest.fixture
def worker(pytestconfig, monkeypatch, tmp_path):
    """This process as a worker of 16 on one H100 (scratch in ``tmp_path``); torch's cache calls recorded."""
    state = run_state.of(pytestconfig)
    for name, value in (("pinned", H100), ("gpus", [H100]), ("scratch", tmp_path)):
        monkeypatch.setattr(state, name, value)
    monkeypatch.setattr(pytestconfig, "workerinput", {"workercount": 16}, raising=False)
    emptied = []
    monkeypatch.setattr(torch.cuda, "is_initialized", lambda: True)
    monkeypatch.setattr(torch.cuda, "empty_cache", lambda: emptied.append(_tickets(tmp_path / "large-room-GPU-fake-0")))
    return SimpleNamespace(config=pytestconfig, ledger=tmp_path / "large-room-GPU-fake-0", emptied=emptied)


def _planted_huge() -> matrix.Case:
    from suites.gpu._planted_classes import PLANTED_LARGE

    return next(c for p in PLANTED_LARGE for c in p.cases(p.caught) if c.shape == matrix.HUGE)


@pytest.mark.parametrize("case", [pytest.param("matrix", id="matrix-case"), pytest.param("planted", id="planted-case")])
def test_a_workers_gpu_test_of_a_large_case_holds_its_bytes_until_its_memory_is_back(case, worker):
    """Whichever way the test runs its case (the runner, a call path, a child process it waits
    for), it holds the case's bytes of its GPU's room while it runs, empties torch's cache, then
    lets go; a planted stage's case (no stage the plugin knows) by its own ``case`` parameter."""
    from fixtures.plugin import hooks

    case = next(c for c in matrix.large_cases() if c.shape == matrix.HUGE) if case == "matrix" else _planted_huge()
    call = hooks.pytest_runtest_call(_item(worker.config, case))  # the plugin's wrapper around the test's call
    next(call)
    (ticket,) = _tickets(worker.ledger)
    assert (ticket.state, ticket.pid, ticket.nbytes) == (large_room.HOLDING, os.getpid(), matrix.device_bytes(case))
    with pytest.raises(StopIteration):
        call.send(None)
    assert [[t.state for t in tickets] for tickets in worker.emptied] == [[large_room.HOLDING]]  # emptied, then let go
    assert not _tickets(worker.ledger)


def test_a_test_that_is_not_a_workers_gpu_test_of_a_large_case_holds_nothing(worker, monkeypatch):
    large = next(c for c in matrix.large_cases() if c.shape == matrix.HUGE)
    within = next(c for c in matrix.large_cases() if matrix.device_bytes(c) <= gpus.WORKER_RESERVE)
    for item in (_item(worker.config, within), _item(worker.config, large, marker="compile"),
                 SimpleNamespace(config=worker.config, get_closest_marker=lambda name: True)):
        with large_room.held_by(item):
            assert not _tickets(worker.ledger)
    monkeypatch.delattr(worker.config, "workerinput")  # a run without workers: one test at a time
    with large_room.held_by(_item(worker.config, large)):
        assert not _tickets(worker.ledger)
    assert worker.emptied == []


@pytest.mark.parametrize(("workers", "skipped"), [(16, True), (4, False)])
def test_a_large_case_skips_by_the_room_the_start_checked_and_the_lanes_share(workers, skipped, worker, monkeypatch):
    """One figure for a GPU's room for large cases: NVML's total less the workers' reserves, as
    ``gpus.check_free`` counts it at start and ``held_by`` shares it; the fp32 case past 2**31
    elements (54.1 GiB) skips under 16 workers on an H100 and runs under 4."""
    from fixtures.plugin.provided import _skip_without_room

    monkeypatch.setattr(worker.config, "workerinput", {"workercount": workers})
    case = next(c for c in matrix.large_cases() if c.dtype.id == "fp32" and c.shape == matrix.HUGE)
    if skipped:
        with pytest.raises(pytest.skip.Exception, match=r"this GPU has 79\.6 GiB, .* 15 other workers .*: 47\.6 GiB$"):
            _skip_without_room(case, worker.config)
    else:
        _skip_without_room(case, worker.config)
