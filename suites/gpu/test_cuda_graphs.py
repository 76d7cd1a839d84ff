"""Stages inside CUDA graphs, the notebook's way: compile before capture, capture launches on
torch's stream, replay; every replay is verified like a plain launch (guard bands, poison,
values), including replays after the same input buffers were refilled with new data."""

import pytest
import torch

from fixtures.cases import matrix
from fixtures.cases.dtypes import DTYPES
from fixtures.cases.matrix import Case
from fixtures.dsl import checks, runner
from fixtures.plugin import run_state
from fixtures.plugin.params import case_param

pytestmark = pytest.mark.gpu

CAPTURED_LAUNCHES = 3
REPLAYS = 4
SHAPE = (256, 2048)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Each of the run's stages, static and dynamic, where its domain admits the shape."""
    stages = run_state.of(metafunc.config).stages.values()
    metafunc.parametrize("case", [
        case_param(case, "gpu")
        for layout in ("static", "dynamic")
        for case in (Case(stage, DTYPES["fp16"], "align16", layout, SHAPE, "graph") for stage in stages)
        if matrix.outside_domain(case) is None
    ])


def _capture(fn) -> torch.cuda.CUDAGraph:
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        fn()
    return graph


def test_replays_compute_every_captured_launch(case, seed, compiler):
    launches = [runner.prepare(case, seed + i, compiler) for i in range(CAPTURED_LAUNCHES)]  # compiled before capture
    runner.replay_captured(launches, seed, REPLAYS)


def test_graph_mixing_a_stage_with_torch_ops(case, seed, compiler):
    """torch op -> stage -> torch op on one stream: the stage sees the first op's output and
    the last op sees the stage's."""
    launch = runner.prepare(case, seed, compiler)
    a = launch.placed["a"].distinct()
    original = a.clone()
    result = torch.empty_like(launch.output)

    def mixed():
        a.copy_(original * 2)
        launch.launch()
        torch.add(launch.output, 1, out=result)

    graph = _capture(mixed)
    launch.poison_output()
    graph.replay()
    torch.cuda.synchronize()
    launch.inputs = (launch.placed["a"].view.clone(), launch.inputs[1])
    launch.verify()
    doubled = checks.bits(launch.placed["a"].distinct()) == checks.bits(original * 2)  # NaN inputs: compare bits
    assert bool(doubled.all()), f"{case.id}: the torch op before the stage did not run"
    torch.testing.assert_close(result, launch.expected() + 1, rtol=0, atol=0, equal_nan=True)
