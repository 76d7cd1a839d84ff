"""The bandwidth verdict per case: same, faster or slower than the baseline, beyond a
threshold derived from how much the case moves between machine starts and within this run.

The reference is the median of the baseline's runs, each from its own machine start
(``reports.baseline.CaseReference``). The threshold is ``NOISE_SIGMAS`` standard deviations of
the difference: the spread between starts (the runs' sample standard deviation: with 3-5 runs
any estimator is rough, and the floor and the margin cover that) combined with both figures'
standard errors, never below its size family's floor (``FLOOR_PCT``). The numbers come from the
H100 baseline's three starts (docs/bandwidth.md gives the runs). At the bandwidth-bound size,
where a driver's or a release's cost in bandwidth is what a team upgrading wants to know, the
starts agreed within 0.32% on every case (pooled standard deviation 0.05%, the noisiest case
0.17%): the floor of 0.5% sits halfway to the 1% slowdown the gate must call, three of the
noisiest case's sigmas (hence ``NOISE_SIGMAS``; a first "slower" is measured again before it
stands). At the launch-bound size the starts moved a case by up to 1.1% (pooled 0.27%, the
noisiest 0.55%): its floor stays at 2%, where 8 earlier starts never reached.
A case whose reference has fewer than ``baseline.MIN_RUNS`` runs has no trustworthy spread: it
gets ``FEW_RUNS_FLOOR_PCT`` (above the 2.6% by which one outlying start stood off the others,
below the 4.8% a planted 5% slowdown measured at least) and the summary says "baseline from N
runs". A per-case override (``--bandwidth-threshold GLOB=PCT``) replaces the derived threshold.

All of that is a board's own baseline: boards of one model read apart by more than a 1% gate
allows (an H100 host of four GPUs ran 0-1.3% below the baseline's host at the bandwidth size,
up to 2.9% at the launch size). A board without runs of its own gets the **traveling verdict**
(``judge_traveling``): each case's GB/s over its yardstick's, the reference kernel measured on
the same GPU in the same run (``yardstick``), against that ratio over every board's runs, with
``TRAVEL_FLOOR_PCT`` from the ratio's spread across hosts (docs/bandwidth.md, "A fleet of
runners"). It is coarser, and blind by construction to whatever slows the yardstick as much as
the case (a driver, the clocks, the board): only a board's own runs see that.

Whatever the basis, a first "slower" is not the verdict yet (``remeasured``): the case is
measured again on placements of its own and judged on every placement so far, up to
``MEASUREMENTS``; only a case still "slower" then fails (``slower_failure``).
"""

from __future__ import annotations

import fnmatch
import math
from collections.abc import Callable
from dataclasses import replace

from reports.baseline import MIN_RUNS, CaseReference, Figures, RatioReference
from reports.model import COPY_CASE, BandwidthRecord, torch_add_case
from reports.usage import HarnessUsageError

NOISE_SIGMAS = 3.0
FLOOR_PCT = {"bandwidth": 0.5, "launch": 2.0}  # by size family (BandwidthRecord.size)
FEW_RUNS_FLOOR_PCT = 4.0
TRAVEL_FLOOR_PCT = {"bandwidth": 2.0, "launch": 4.0}  # the traveling verdict's, by size family
MEASUREMENTS = 2  # a case's first measurement, and the one more a "slower" verdict waits for


def threshold_pct(now: Figures, ref: CaseReference, size: str) -> float:
    noise = math.sqrt(ref.between_sigma**2 + now.median_error**2 + ref.median_error**2)
    floor = FLOOR_PCT[size] if ref.count >= MIN_RUNS else FEW_RUNS_FLOOR_PCT
    return max(floor, NOISE_SIGMAS * 100 * noise)


def parse_override(text: str) -> tuple[str, float]:
    """``GLOB=PCT`` (e.g. ``naive-*=5``) as given to ``--bandwidth-threshold``."""
    glob, sep, pct = text.rpartition("=")
    try:
        value = float(pct)
    except ValueError:
        value = -1.0
    if not sep or not glob or not 0 < value < 100:  # NaN fails too; >= 100% could never call a case slower
        raise HarnessUsageError(
            f"--bandwidth-threshold {text!r}: expected CASE_GLOB=PERCENT with a percent in (0, 100), e.g. 'naive-*=5'"
        )
    return glob, value


def override_for(case: str, overrides: list[tuple[str, float]]) -> float | None:
    """The last override whose glob matches ``case``, so later options refine earlier ones."""
    found = None
    for glob, pct in overrides:
        if fnmatch.fnmatchcase(case, glob):
            found = pct
    return found


def judge(now: BandwidthRecord, ref: CaseReference | None, override: float | None = None) -> BandwidthRecord:
    """``now`` with its comparison against its board's own runs filled in: the reference and its
    runs, delta, threshold (the smallest slowdown this case can call), verdict (``new`` where
    there is no reference)."""
    now = replace(now, basis="board")
    if ref is None:
        return replace(now, verdict="new")
    delta = 100 * (now.gbps / ref.gbps - 1)
    threshold = override if override is not None else threshold_pct(_figures(now), ref, now.size)
    return replace(now, baseline_gbps=ref.gbps, baseline_runs=ref.count, baseline_spread_pct=ref.spread_pct,
                   delta_pct=delta, threshold_pct=threshold, verdict=_verdict(delta, threshold))


def yardstick(record: BandwidthRecord) -> str:
    """The case the traveling verdict reads ``record`` against, measured on the same GPU in the
    same run: torch.add of the same dtype and shape for a DSL stage, the copy for torch.add,
    none for the copy itself (it is every yardstick's yardstick)."""
    if record.case == COPY_CASE:
        return ""
    if record.stage == "torch_add":
        return COPY_CASE
    return torch_add_case(record.dtype, record.shape)


def travel_threshold_pct(now: Figures, under: Figures, ref: RatioReference, size: str) -> float:
    """``NOISE_SIGMAS`` of the ratio's spread across boards and both ratios' noise, never below
    the size family's traveling floor (nor the few-runs floor where fewer than ``MIN_RUNS``
    boards stand behind the ratio)."""
    noise = math.sqrt(ref.between_sigma**2 + now.median_error**2 + under.median_error**2 + ref.median_error**2)
    floor = TRAVEL_FLOOR_PCT[size] if ref.count >= MIN_RUNS else max(FEW_RUNS_FLOOR_PCT, TRAVEL_FLOOR_PCT[size])
    return max(floor, NOISE_SIGMAS * 100 * noise)


def judge_traveling(now: BandwidthRecord, ref: RatioReference | None, under: BandwidthRecord | None,
                    override: float | None = None) -> BandwidthRecord:
    """``now`` judged on a board without runs of its own: its GB/s against what the reference
    ratio predicts from ``under`` (its yardstick, measured beside it), as ``baseline_gbps``;
    ``new`` where there is no ratio or no yardstick figure. A yardstick that ran faster than its
    own reference predicts counts at that prediction: a lucky placement of torch.add (at the
    launch size its placements' medians sit 9% apart: 1,502 and 1,640 GB/s for fp16 on one H100
    board, two starts) or a faster torch is no evidence that a stage is slower."""
    now = replace(now, basis="traveling", yardstick=yardstick(now), yardstick_gbps=under.gbps if under else None)
    if ref is None or under is None:
        return replace(now, verdict="new")
    expected = ref.ratio * (min(under.gbps, under.baseline_gbps) if under.baseline_gbps else under.gbps)
    delta = 100 * (now.gbps / expected - 1)
    threshold = override if override is not None else travel_threshold_pct(_figures(now), _figures(under), ref, now.size)
    return replace(now, baseline_gbps=expected, baseline_runs=ref.count,
                   baseline_spread_pct=ref.spread_pct, delta_pct=delta, threshold_pct=threshold,
                   verdict=_verdict(delta, threshold))


def _figures(record: BandwidthRecord) -> Figures:
    return Figures(record.gbps, record.median_s, record.spread_s, record.samples)


def _verdict(delta: float, threshold: float) -> str:
    return "slower" if delta < -threshold else "faster" if delta > threshold else "same"


def remeasured(measure: Callable[[int], BandwidthRecord], judge: Callable[[BandwidthRecord], BandwidthRecord]
               ) -> BandwidthRecord:
    """A case's verdict under the re-measure policy: ``measure(1)`` judged, and while the verdict
    is "slower", ``measure(n)`` (the figures over the placements of measurements 1 to n, the new
    ones placed apart from those held) judged again, up to ``MEASUREMENTS``. A real regression is
    slow wherever the operands sit; one placement set's luck is averaged away. Returns the last
    judged record: "slower" only where every measurement was."""
    for measurement in range(1, MEASUREMENTS + 1):
        record = judge(measure(measurement))
        if record.verdict != "slower":
            break
    return record


def slower_failure(record: BandwidthRecord, placements: int) -> str | None:
    """Why a case judged (``remeasured``) over ``placements`` fails, in one line; None unless it
    is "slower"."""
    if record.verdict != "slower":
        return None
    planted = f", {100 * record.planted_slowdown:.2f}% planted" if record.planted_slowdown else ""
    against = (f"the {record.baseline_gbps:.1f} GB/s its yardstick {record.yardstick} "
               f"({record.yardstick_gbps:.1f} GB/s on this GPU, at most what its own reference predicts) "
               f"predicts (traveling verdict)"
               if record.basis == "traveling" else f"its board's baseline of {record.baseline_gbps:.1f} GB/s")
    return (f"{record.case}: {record.gbps:.1f} GB/s is {-record.delta_pct:.2f}% below {against} "
            f"(threshold {record.threshold_pct:.2f}%, over {placements} placements in "
            f"{record.measurements} measurements{planted})")
