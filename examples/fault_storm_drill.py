"""A fault-storm drill for a GPU runner: a kernel that writes far outside its output faults on
every launch. The harness must stop launching on the GPU after ``fixtures.plugin.health.STORM_FAULTS``
faults, fail the rest as not run, and end the run as a fault storm, with the GPU still healthy:

    nvidia-smi; python3 -m pytest examples/fault_storm_drill.py -n 1 --max-worker-restart 10 --require-gpu; nvidia-smi

One worker, so the faults come one at a time (each costs a worker, which xdist replaces).
"""

import pytest

from fixtures.cases import matrix
from fixtures.cases.dtypes import DTYPES
from fixtures.cases.ops import ADD
from fixtures.cases.stages import Stage
from fixtures.dsl.kernels import bind
from suites.gpu import _faulting_stage

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("launch", range(8))
def test_every_launch_faults(launch, run_case):
    stage = bind(Stage("wild_write", ADD), _faulting_stage.wild_write)
    run_case(matrix.Case(stage, DTYPES["fp16"], "align16", "static", (128, 2048), "drill"))
