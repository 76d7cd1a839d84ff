"""The tuned stage, and any add kernel a ``--stage-module`` registers, beside torch.add on the
very same operand buffers, in one run.

``test_bandwidth`` times each kernel on operands of its own, in a measurement of its own, and
judges it against the baseline. Here both kernels run on one allocation, in alternating
measurements, so the ratio is kernel against kernel, with whatever drifts in the session
hitting both: what the DSL's best plain add reaches of torch's own, and where a registered add
kernel (``examples/tuned_sweep.py``'s launch shapes, or yours) stands. The tuned stage must keep
up (``FLOOR``); a registered one is judged only by the floor it declares (``register(...,
torch_add_floor=)``), its ratio reported either way.
"""

import pytest
import torch

from fixtures.bandwidth import figures as bandwidth
from fixtures.bandwidth import measure as bench
from fixtures.bandwidth import timing
from fixtures.cases import matrix
from fixtures.cases.dtypes import DTYPES, HALF_DTYPES, INTEGER_DTYPES
from fixtures.dsl import runner
from fixtures.plugin import run_state
from reports.gate import FEW_RUNS_FLOOR_PCT

pytestmark = pytest.mark.bench

COMPARED_DTYPES = (*HALF_DTYPES, "fp32", *(d for d in INTEGER_DTYPES if DTYPES[d].bytes == 1))  # the 2-byte floats, fp32 and the 1-byte types
ROUNDS = 2  # measurements of each kernel, alternated (stage, torch, stage, torch): drift hits both
# how far a stage may trail torch.add: the ratio comes from one run, with no spread between machine
# starts behind it, so it gets the gate's floor for a reference of too few starts (4%); further
# behind, the install's DSL lost ground against torch on the same operands
FLOOR = 1 - FEW_RUNS_FLOOR_PCT / 100



def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """The bench plan's tuned cases and those of any add kernel the run registered."""
    metafunc.parametrize("case", [
        pytest.param(case, id=case.id)
        for case in matrix.cases("bench", run_state.of(metafunc.config).stages)
        if (case.stage.name == "tuned" or case.stage.registered and case.stage.op.name == "add")
        and case.dtype.id in COMPARED_DTYPES
    ])


def test_keeps_up_with_torch_add(case, bench_context, bandwidth_benchmark, compiler, seed, request):
    """Both kernels' figures and their ratio go to junit and, with the stage's samples, to
    pytest-benchmark (its JSON; no ``case`` key, so never into a baseline)."""
    nbytes = bandwidth.bytes_moved(case.shape, case.dtype.bytes)
    sets = [runner.prepare(case, seed + i, compiler, edges=False) for i in range(bench.operand_sets(nbytes))]
    sets[0].launch()
    torch.cuda.synchronize()
    sets[0].verify()  # a wrong result's speed means nothing

    def torch_add(s: runner.Launch) -> bench.Launch:
        a, b = (s.placed[name].view for name in "ab")
        return lambda: torch.add(a, b, out=s.output)

    kernels = {"stage": bench.timed([s.launch for s in sets]), "torch_add": bench.timed([torch_add(s) for s in sets])}
    rule, flush, monitor = bench_context.rule, bench_context.flush, bench_context.monitor
    measured = {name: [] for name in kernels}
    for _ in range(ROUNDS):
        for name, t in kernels.items():
            measured[name].append(timing.measure(t.work, t.launches_per_sample, rule, flush, monitor))
    fastest = {name: min(ms, key=lambda m: m.median) for name, ms in measured.items()}
    gbps = {name: bandwidth.gbps(nbytes, m.median) for name, m in fastest.items()}
    ratio = gbps["stage"] / gbps["torch_add"]
    figures = {"stage_gbps": round(gbps["stage"], 1), "torch_add_gbps": round(gbps["torch_add"], 1),
               "stage_over_torch_add": round(ratio, 4)}
    # junit properties, as test_bandwidth records its own (pytest's record_property warns under xunit2)
    request.node.user_properties.extend(figures.items())
    bench.feed_benchmark(bandwidth_benchmark, fastest["stage"], figures)
    floor = case.stage.torch_add_floor if case.stage.registered else FLOOR
    if floor is not None:
        assert ratio >= floor, (
            f"{case.id}: {gbps['stage']:.0f} GB/s is {ratio:.3f}x torch.add's {gbps['torch_add']:.0f} GB/s "
            f"on the same operands (floor {floor:.2f}x)"
        )
