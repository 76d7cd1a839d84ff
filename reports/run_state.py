"""The run's state: one object on ``config.stash``, set up by ``conftest.py`` at configure time
and read by the recorder, the bench gate and the bench phase. Nothing of a run lives in module
globals, ``config`` attributes or the environment.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from reports.model import GpuRecord

if TYPE_CHECKING:
    from reports.bench_plugin import BenchGate


@dataclass
class RunState:
    arch: str = ""  # the compile target (--arch, else the GPU's)
    fingerprint: dict[str, str] = field(default_factory=dict)  # the install, as reports and baselines key it
    api_drift: list[dict] = field(default_factory=list)  # how each DSL capability resolved here
    report_dir: Path | None = None  # None under --collect-only and in the serial bench phase's process
    scratch: Path | None = None  # notes and DSL dumps of every process of the run; removed at the end
    bench_gate: BenchGate | None = None
    registered_stages: list[str] = field(default_factory=list)  # what --stage-module added, in order
    gpus: list[GpuRecord] = field(default_factory=list)  # the run's GPUs (all processes'), in pinning order
    pinned: GpuRecord | None = None  # this process's GPU; None without one
    cuda_at_start: bool = False  # the controller could use CUDA when the run started (a GPU gone later is lost)
    gpu_lost: str | None = None  # this process's GPU was there at start and is gone: what was seen of it
    outer_visible: str | None = None  # the controller's: CUDA_VISIBLE_DEVICES as the run started (what bench processes choose from)
    explore: int | None = None  # --explore: drawn cases a stage, fresh each run (None: the gate's fixed draws)
    drawn_cases: list[str] = field(default_factory=list)  # --drawn-case: ids of drawn cases to rerun exactly
    sanitize: tuple[str, ...] = ()  # --sanitize: the compute-sanitizer tools to run its sample under (none: not asked)
    sanitizer_missing: str | None = None  # why --sanitize cannot run here (the tool is missing)
    poisoned: tuple[str, str] | None = None  # (nodeid, CUDA error) of a fault that poisoned this process's context

    @property
    def notes_dir(self) -> Path:
        """Per-process notes of this run (compile tallies, recorded kernel faults)."""
        assert self.scratch is not None, "the run's scratch folder is made at configure time"
        return self.scratch / "notes"


KEY = pytest.StashKey[RunState]()


def of(config: pytest.Config) -> RunState:
    """The run's state (an empty one if ``pytest_configure`` stopped before making it)."""
    return config.stash.setdefault(KEY, RunState())
