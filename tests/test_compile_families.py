"""``fixtures.dsl.host_costs``: which compile families an install measures here, and why it
leaves out the others (the A/B run measures only the families both installs compile), the
drill's planted compile delay, and the rounds a fresh process spreads over its life."""

import time

import pytest
from packaging.version import Version

from fixtures.cases import limitations, releases
from fixtures.dsl import compat, host_costs

pytestmark = pytest.mark.harness


def test_without_host_jit_every_family_is_left_out_with_why(monkeypatch):
    monkeypatch.setattr(compat, "host_jit_unavailable", lambda: "host JIT needs the CUDA driver here")
    assert host_costs.left_out_families() == dict.fromkeys(host_costs.COMPILE_FAMILIES, "host JIT needs the CUDA driver here")
    assert host_costs.measurable_families() == ()


@pytest.mark.parametrize(("release", "left_out"), [
    ("4.8.1", set()),
    ("4.5.3", set()),  # 4.3-4.5's unproven alignment shows in the PTX: the compile goes through
    ("4.4.2", set()),
    ("4.3.5", {"predicated-fp16-align16-dynamic-128x2048"}),
])
def test_a_family_a_known_limitation_covers_is_left_out_on_its_releases(monkeypatch, release, left_out):
    monkeypatch.setattr(compat, "host_jit_unavailable", lambda: None)
    monkeypatch.setattr(releases, "installed", lambda: Version(release))
    reasons = host_costs.left_out_families()
    assert set(reasons) == left_out
    assert all(why.startswith("known limitation: DSL 4.3 cannot compose the block remap") for why in reasons.values())
    assert host_costs.measurable_families() == tuple(f for f in host_costs.COMPILE_FAMILIES if f not in left_out)
    assert host_costs.measurable_families()[-1].startswith("predicated-")  # the signature of the calls and growth


def test_no_family_means_no_compile():
    assert host_costs._compile_all([], plant_delay=0.0) == {}


def test_the_compile_tiers_mark_for_a_family_4_3_cannot_compile_is_a_strict_xfail_on_its_type_error(monkeypatch):
    from fixtures.plugin.params import limitation_mark

    monkeypatch.setattr(releases, "installed", lambda: Version("4.3.5"))
    stopper = limitations.compile_stopper(host_costs.family_case("predicated-fp16-align16-dynamic-128x2048"))
    mark = limitation_mark(stopper)
    assert mark.name == "xfail" and mark.kwargs["strict"] and mark.kwargs["raises"] is TypeError
    assert limitations.compile_stopper(host_costs.family_case("tv-fp16-align16-dynamic-128x2048")) is None


def test_the_planted_compile_delay_keeps_the_core_busy_for_the_fraction(monkeypatch):
    def idle(seconds):
        raise AssertionError("a sleep lets the core idle; a slower compiler keeps it busy")

    monkeypatch.setattr(host_costs.time, "sleep", idle)
    start = time.perf_counter()
    assert host_costs.planted_compile_seconds(0.2, 0.5) == pytest.approx(0.3)
    assert time.perf_counter() - start >= 0.1


def test_spread_rounds_keep_each_figures_fastest_and_pause_between_rounds(monkeypatch):
    pauses = []
    monkeypatch.setattr(host_costs.time, "sleep", pauses.append)
    rounds = iter([{"call": 30.0, "other": 5.0}, {"call": 16.0, "other": 9.0}] + [{"call": 22.0, "other": 7.0}] * 10)
    assert host_costs.fastest_of_spread_rounds(lambda: next(rounds)) == {"call": 16.0, "other": 5.0}
    assert pauses == [host_costs.SPELL_GAP_S] * host_costs.SPREAD_ROUNDS  # one stretch would sit in one spell
