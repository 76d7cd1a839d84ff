"""The host costs a user feels first after an upgrade, as figures in every run (issue 47;
``fixtures.dsl.host_costs``; docs/ab.md): ``import cutlass.cute`` in a fresh process, a tensor's
conversion (``from_dlpack``, the implicit call's), a cold ``cute.compile`` of each signature
family, and the resident memory a process keeps per compile. Each test records its samples as
``HostCost`` figures (results.json, summary.md). A single run reports them; two installs are
judged against each other by ``python -m reports ab``, interleaved on one machine, which is what
a timing needs. The verdicts here are the leak's: no compiled function outlives its cycle, and
the drill's, one kept each cycle shows as one a cycle.
"""

from __future__ import annotations

import dataclasses

import pytest

from fixtures.cases import limitations
from fixtures.dsl import host_costs
from fixtures.plugin.params import limitation_mark
from reports.model import HOST_COST_KEY, HostCost

pytestmark = pytest.mark.compile

GROWTH_CYCLES = 4


def record(request: pytest.FixtureRequest, *figures: HostCost) -> None:
    request.node.user_properties.append((HOST_COST_KEY, [dataclasses.asdict(f) for f in figures]))
    for f in figures:
        print(f"{f.name}: median {f.median:.4g} {f.unit} of {len(f.samples)}")


@pytest.mark.slow
def test_import_time_in_the_ab_runs_fresh_process(request, host_jit):
    """``import cutlass.cute`` in a fresh process of the A/B run's (the run's environment: its file
    cache off), which goes on to measure the conversions and every family it can compile (so it
    needs the host-side compile ``host_jit`` checks for)."""
    figures = host_costs.fresh_figures(host_costs.measurable_families())
    record(request, HostCost("import cutlass.cute", "s", figures["import_seconds"]))
    assert set(figures) == {"import_seconds", "from_dlpack", "implicit_conversion", *host_costs.measurable_families()}
    assert all(0 < value < 120 for (value,) in figures.values())


def test_conversion_per_call(request, host_jit):
    """``from_dlpack`` with the case's claim, and the implicit call's conversion, us a call (the
    framework-integration page says ``from_dlpack`` costs 2 to 3 us)."""
    calls = host_costs.conversions(host_costs.family_case(host_costs.CONVERTED))
    record(request, *(HostCost(name, "us", host_costs.per_call_us(call, calls=500, rounds=3)) for name, call in calls.items()))


def _family_param(family: str):
    stopper = limitations.compile_stopper(host_costs.family_case(family))
    return pytest.param(host_costs.family_case(family), id=family, marks=(limitation_mark(stopper),) if stopper else ())


@pytest.mark.parametrize("case", [_family_param(f) for f in host_costs.COMPILE_FAMILIES])
def test_cold_compile_time(case, request, host_jit):
    """One cold ``cute.compile`` of the family's signature for ``--arch`` (the file cache off); a
    family a known limitation keeps from compiling fails as it says (4.3: the dynamic ``predicated``)."""
    record(request, HostCost(f"compile {case.id}", "s", [host_costs.compile_seconds(case)]))


@pytest.mark.slow
def test_memory_kept_per_compile_and_the_leak_drill(request, host_jit):
    """What a process keeps per cold compile, over ``GROWTH_CYCLES`` cycles: compiled functions
    still alive (none) and resident KiB; then the drill, the same cycles keeping every compiled
    function (one kernel leaked a cycle), must show one function kept a cycle. The signature: the
    last family this install compiles (the dynamic ``predicated`` one, but on 4.3: the static one)."""
    case = host_costs.family_case(host_costs.measurable_families()[-1])
    plain = host_costs.growth_per_cycle(lambda: host_costs.compile_seconds(case), GROWTH_CYCLES, warmup=2)
    kept: list = []
    leaking = host_costs.growth_per_cycle(lambda: host_costs.compile_seconds(case, kept=kept), GROWTH_CYCLES, warmup=2)
    record(request, HostCost("resident memory per compile", "KiB/cycle", [plain["rss_kib_per_cycle"]]),
           HostCost("compiled functions kept per compile", "1/cycle", [plain["functions_kept_per_cycle"]]))
    assert plain["functions_kept_per_cycle"] == pytest.approx(0, abs=0.01), plain
    assert leaking["functions_kept_per_cycle"] == pytest.approx(1, abs=0.01), leaking
