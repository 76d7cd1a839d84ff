"""The bench timing: when a measurement has sampled enough, how a figure comes of its placements, and how a planted slowdown is sized (no GPU: samples are given)."""

import random

import pytest

from fixtures.bandwidth.timing import StopRule, median_rel_error, rel_noise

pytestmark = pytest.mark.harness

RULE = StopRule(min_samples=20, min_time_s=0.05, min_time_replayed_s=0.1, max_noise=0.005, max_median_error=0.001,
                max_time_s=1.0)


def _samples(n: int, noise: float, seed: int = 0) -> list[float]:
    rng = random.Random(seed)
    return [4e-6 * (1 + rng.gauss(0, noise)) for _ in range(n)]


def test_quiet_samples_settle_once_there_are_enough_of_them_and_enough_gpu_time():
    quiet = _samples(30, 0.001)
    assert rel_noise(quiet) < RULE.max_noise
    assert RULE.settled(quiet, gpu_time_s=0.06)
    assert not RULE.settled(quiet[:10], gpu_time_s=0.06)
    assert not RULE.settled(quiet, gpu_time_s=0.01)


def test_a_launch_bound_cases_graph_replays_sample_longer():
    """Its replays of many small launches keep 20 ms where a single launch takes 10 (by default):
    at 10 ms two launch-bound cases read 9% slow for a whole measurement on an H100 gate."""
    quiet = _samples(30, 0.001)
    assert RULE.settled(quiet, gpu_time_s=0.06) and not RULE.settled(quiet, gpu_time_s=0.06, replayed=True)
    assert RULE.settled(quiet, gpu_time_s=0.1, replayed=True)
    assert not RULE.done(quiet, gpu_time_s=0.06, wall_s=0.1, replayed=True)
    assert StopRule().min_time_replayed_s == 2 * StopRule().min_time_s


def test_samples_a_little_noisier_than_max_noise_settle_once_their_median_is_known():
    """0.6% scatter never falls under 0.5% with more samples; 500 of them pin the median to 0.03%."""
    noisy = _samples(500, 0.006)
    assert rel_noise(noisy) > RULE.max_noise
    assert median_rel_error(noisy) < RULE.max_median_error
    assert RULE.settled(noisy, gpu_time_s=0.06)
    assert not RULE.settled(noisy[:25], gpu_time_s=0.06)


def test_scattered_samples_run_to_the_time_limit():
    scattered = _samples(500, 0.05)
    assert not RULE.settled(scattered, gpu_time_s=0.5)
    assert not RULE.done(scattered, gpu_time_s=0.5, wall_s=0.9)
    assert RULE.done(scattered, gpu_time_s=0.5, wall_s=1.0)


def test_a_planted_slowdown_is_more_rows_in_the_same_launch_the_fewest_past_the_fraction():
    """1% of 16,384 rows is 163.84: 164 more, or the first row count a stage's tile divides (the
    tutorial's 64-row tiles: 192), recorded as the bytes moved beyond those counted (1.17% there)."""
    from fixtures.bandwidth.figures import PlantedSlowdown
    from fixtures.bandwidth.measure import Workload

    one_pct = PlantedSlowdown(0.01)
    assert one_pct.rows((16384, 8192)) == (16548, 8192)
    assert one_pct.rows((16384, 8192), lambda m, n: m % 64 == 0) == (16576, 8192)
    assert one_pct.rows((100, 4)) == (101, 4)  # 100 x 0.01 is a hair above 1 in floats
    assert one_pct.length(1 << 30) == (1 << 30) + 10737419
    with pytest.raises(ValueError, match="inside the stage's domain"):
        one_pct.rows((256, 4096), lambda m, n: False)
    assert Workload("tv", list, 3 * 16384 * 8192, 8, moved=3 * 16576 * 8192).planted == pytest.approx(0.0117, abs=1e-4)
    assert Workload("tv", list, 3 * 16384 * 8192, 8).planted is None
    assert Workload("tv", list, 3 * 16384 * 8192, 8, moved=3 * 16384 * 8192).planted is None  # no drill


def test_the_start_up_memory_check_holds_room_for_a_drills_grown_operands():
    """A drill's operands are larger than the case's: a 50% drill of the fp64 bandwidth case
    holds 72 GiB, not 48, and a GPU without that room is refused at start, not mid-run."""
    from fixtures.bandwidth.figures import PlantedSlowdown, most_held

    gib = 1 << 30
    assert most_held(gib) == 2 * 8 * 3 * gib
    assert most_held(gib, PlantedSlowdown(0.5)) == 2 * 8 * 3 * (gib + gib // 2)


def test_a_figure_is_the_placements_trimmed_mean_one_placements_luck_moves_it_little():
    """The slowest and the fastest of more than three placements are dropped; of three, the median."""
    from fixtures.bandwidth.measure import trimmed_mean

    assert trimmed_mean([100.0, 101.0, 99.0]) == 100.0
    assert trimmed_mean([100.0, 100.2, 99.8, 100.0, 86.0, 100.1, 99.9, 100.0]) == pytest.approx(100.0, abs=0.05)
    assert trimmed_mean([100.0, 100.2, 99.8, 100.0, 114.0, 100.1, 99.9, 100.0]) == pytest.approx(100.0, abs=0.05)


def test_the_typical_placement_is_the_middle_one():
    from types import SimpleNamespace

    from fixtures.bandwidth.measure import typical

    placed = [SimpleNamespace(measurement=SimpleNamespace(median=t)) for t in (3.0, 1.0, 4.0, 2.0)]
    assert typical(placed).measurement.median == 2.0
