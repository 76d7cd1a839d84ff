"""What every bench module shares: the session's timing context (stop rule, L2 flush, throttle
monitor and the device's copy ceiling), measured once, and pytest-benchmark's fixture for a case
that measures."""

import pytest

from fixtures.bandwidth import figures as bandwidth
from fixtures.bandwidth import measure as bench
from fixtures.bandwidth import timing
from fixtures.plugin import bench_plugin


@pytest.fixture(scope="session")
def bench_context() -> bench.Context:
    rule, monitor = timing.StopRule(), timing.ThrottleMonitor()
    timing.settle_graph_launches()
    ceiling = bandwidth.measure_ceiling(rule, monitor)
    return bench.Context(rule, timing.L2Flush(), monitor, ceiling, bandwidth.spec_peak_gbps())


@pytest.fixture
def bandwidth_benchmark(request, benchmark):
    """pytest-benchmark's fixture, for a case that measures bandwidth; with benchmarking disabled
    (``--benchmark-disable``) the case is skipped, or failed under ``--require-gpu``."""
    if benchmark.disabled:
        why = "pytest-benchmark is disabled (--benchmark-disable): no bandwidth is measured"
        if request.config.getoption("--require-gpu"):
            pytest.fail(f"{why}, and --require-gpu asks for the device tiers to run", pytrace=False)
        pytest.skip(why)
    yield benchmark
    if benchmark.stats is not None:  # measured: its samples go into this process's benchmark JSON
        bench_plugin.gate_of(request.config).keep(benchmark.stats)
