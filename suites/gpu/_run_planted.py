"""``python -m suites.gpu._run_planted CASE_ID``: run one planted stage's case in a process of its
own, as ``fixtures.dsl.run_one`` runs a matrix case: a fault poisons only this process's CUDA context."""

import sys

from fixtures.dsl import runner
from fixtures.dsl.compiler import Compiler
from suites.gpu._planted_classes import planted_case


def main(case_id: str) -> None:
    runner.run_case(planted_case(case_id), runner.seed_for(case_id), Compiler())
    print(f"{case_id}: conforms")


if __name__ == "__main__":
    main(*sys.argv[1:])
