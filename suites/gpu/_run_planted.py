"""``python -m suites.gpu._run_planted CASE_ID``: run one planted stage's case in a process of its
own, as ``fixtures.dsl.run_one`` runs a matrix case: a fault poisons only this process's CUDA
context, and it launches in the machine's fault turn (``fault_turn``)."""

import subprocess
import sys

from fixtures.dsl import fault_turn, runner
from fixtures.dsl.compiler import Compiler
from fixtures.plugin import canary
from suites.gpu._planted_classes import planted_case


def main(case_id: str) -> None:
    runner.run_case(planted_case(case_id), runner.seed_for(case_id), Compiler(), before_launch=fault_turn.take)
    print(f"{case_id}: conforms")


def run_alone(case_id: str) -> str:
    """Run ``case_id`` in a process of its own from the test run; its output, once it has failed
    (a planted case that conforms fails the caller)."""
    proc = subprocess.run([sys.executable, "-m", "suites.gpu._run_planted", case_id], cwd=canary.ROOT,
                          capture_output=True, text=True, timeout=canary.TIMEOUT_S)
    assert proc.returncode != 0, f"{case_id} conforms: its planted defect was not caught"
    return proc.stdout + proc.stderr


if __name__ == "__main__":
    main(*sys.argv[1:])
