"""Bandwidth of every stage x dtype at a bandwidth-bound and a launch-bound size, next to
torch.add and the device's own copy ceiling, judged against this install's baseline.

Each stage's first launch is verified like a gpu-tier case before it is timed: the bandwidth
of a kernel that computes the wrong thing means nothing.
"""

import pytest
import torch

from fixtures.bandwidth import figures as bandwidth
from fixtures.bandwidth import measure as bench
from fixtures.bandwidth import workloads
from fixtures.cases.dtypes import DTYPES
from fixtures.cases.matrix import ARITHMETIC_DTYPES, BENCH_SIZES
from fixtures.dsl import fill
from fixtures.plugin import bench_plugin
from reports.gate import remeasured, slower_failure
from reports.model import BANDWIDTH_KEY, COPY_CASE, BandwidthRecord, torch_add_case

pytestmark = pytest.mark.bench

REFERENCES = [
    pytest.param(dtype, family, shape, id=torch_add_case(dtype, shape))
    for family, shapes in BENCH_SIZES.items()
    for shape in shapes
    for dtype in ARITHMETIC_DTYPES
]


@pytest.fixture(scope="session")
def planted(request) -> bandwidth.PlantedSlowdown | None:
    """The drill's planted slowdown (``--bandwidth-plant-slowdown``), None in an ordinary run."""
    fraction = bench_plugin.gate_of(request.config).plant_fraction
    return bandwidth.PlantedSlowdown(fraction) if fraction else None


@pytest.fixture(scope="session")
def planted_reference(request, planted) -> bandwidth.PlantedSlowdown | None:
    """The drill's slowdown for the reference kernels (torch.add, the copy): none where they are
    the traveling verdict's yardsticks (``BenchGate.plants_references``)."""
    return planted if bench_plugin.gate_of(request.config).plants_references else None


@pytest.fixture
def measure_and_judge(request, bandwidth_benchmark, bench_context):
    """Time a workload, hand it to pytest-benchmark, record its figures, fail if it is slower
    than the baseline, by the gate's re-measure policy (``reports.gate.remeasured``): each
    measurement's placements are held, so the next one's land elsewhere."""
    benchmark = bandwidth_benchmark
    gate = bench_plugin.gate_of(request.config)

    def run(workload: bench.Workload, **labels) -> BandwidthRecord:
        held: list[bench.Placed] = []

        def measure(measurement: int) -> BandwidthRecord:
            held.extend(bench.measure(workload, bench_context, first=len(held)))
            return bench.figures(workload, held, bench_context, case=workload.name, measurements=measurement, **labels)

        try:
            record = remeasured(measure, gate.judge)
            placements, typical = len(held), bench.typical(held).measurement
        finally:
            # a failed case's traceback keeps this frame: its placements (up to 48 GiB) must not
            # stay with it, or every later case runs out of device memory
            held.clear()
        # as plain data: pytest-benchmark's extra_info and xdist's report serialisation take no objects
        bench.feed_benchmark(benchmark, typical, record.to_dict())
        request.node.user_properties.append((BANDWIDTH_KEY, record.to_dict()))
        failure = slower_failure(record, placements)
        if failure:
            pytest.fail(failure, pytrace=False)
        return record

    return run


def test_device_ceiling(measure_and_judge, planted_reference):
    """The copy every other figure is a percentage of (measured once more here, as a case of
    its own, so a driver that slows copies shows up against the baseline)."""
    planted = planted_reference
    length = planted.length(bandwidth.CEILING_BYTES) if planted else bandwidth.CEILING_BYTES

    def operands(placement: int) -> list[bench.Launch]:
        src = torch.empty(length, dtype=torch.uint8, device="cuda").random_()
        dst = torch.empty_like(src)
        return [lambda: dst.copy_(src)]

    workload = bench.Workload(COPY_CASE, operands, 2 * bandwidth.CEILING_BYTES, bandwidth.PLACEMENTS["bandwidth"], 2 * length)
    measure_and_judge(workload, stage="d2d_copy", dtype="u8", size="bandwidth", shape=[1, bandwidth.CEILING_BYTES])


@pytest.mark.parametrize(("dtype", "family", "shape"), REFERENCES)
def test_torch_add_bandwidth(dtype, family, shape, measure_and_judge, planted_reference, seed, request):
    """torch.add on the same operand sets a stage gets: the reference the stages are read against."""
    planted = planted_reference
    dt = DTYPES[dtype]
    nbytes = bandwidth.bytes_moved(shape, dt.bytes)
    gen = torch.Generator(device="cuda").manual_seed(seed)
    moved = planted.rows(shape) if planted else shape

    def operands(placement: int) -> list[bench.Launch]:
        launches = []
        for _ in range(bench.operand_sets(nbytes)):
            a, b = (torch.empty(moved, dtype=dt.torch, device="cuda") for _ in "ab")
            fill.fill_random(a, dt, gen)
            fill.fill_random(b, dt, gen)
            c = torch.empty_like(a)
            launches.append(lambda a=a, b=b, c=c: torch.add(a, b, out=c))
        return launches

    name = request.node.callspec.id
    workload = bench.Workload(name, operands, nbytes, bandwidth.PLACEMENTS[family], bandwidth.bytes_moved(moved, dt.bytes))
    measure_and_judge(workload, stage="torch_add", dtype=dtype, size=family, shape=list(shape))


@pytest.mark.plan("bench")
def test_stage_bandwidth(case, measure_and_judge, planted, seed, compiler):
    workload = workloads.stage_workload(case, seed, compiler, planted)
    measure_and_judge(workload, stage=case.stage.name, dtype=case.dtype.id, size=case.family, shape=list(case.shape))
