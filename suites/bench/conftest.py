"""What every bench module shares: the session's timing context (stop rule, L2 flush, throttle
monitor and the device's copy ceiling), measured once."""

import pytest

from fixtures.bandwidth import figures as bandwidth
from fixtures.bandwidth import measure as bench
from fixtures.bandwidth import timing


@pytest.fixture(scope="session")
def bench_context() -> bench.Context:
    rule, monitor = timing.StopRule(), timing.ThrottleMonitor()
    ceiling = bandwidth.measure_ceiling(rule, monitor)
    return bench.Context(rule, timing.L2Flush(), monitor, ceiling, bandwidth.spec_peak_gbps())
