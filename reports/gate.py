"""The bandwidth verdict per case: same, faster or slower than the baseline, beyond a
threshold derived from both measurements' noise.

The noise term is the standard error of each median (1.2533 x sigma / sqrt(samples), sigma
estimated robustly from the interquartile range, so a few outlier samples do not widen it),
combined and scaled by ``NOISE_SIGMAS``; ``FLOOR_PCT`` covers what within-run noise cannot
see (run-to-run drift of clocks and memory placement). On an H100, 10 back-to-back A/A runs of
19 cases stayed within -0.6% .. +0.3% of their baseline, and a planted 5% slowdown measured
-4.8% at least: the floor sits between. A per-case override (``--bandwidth-threshold
GLOB=PCT``) replaces the derived threshold.
"""

from __future__ import annotations

import fnmatch
import math

NOISE_SIGMAS = 4.0
FLOOR_PCT = 2.0
_MEDIAN_EFFICIENCY = 1.2533  # the median's standard error over the mean's, for normal noise
_IQR_PER_SIGMA = 1.349


def median_error(figures: dict) -> float:
    """Relative standard error of a record's median."""
    sigma = figures["spread_s"] / _IQR_PER_SIGMA / figures["median_s"]
    return _MEDIAN_EFFICIENCY * sigma / math.sqrt(max(1, figures["samples"]))


def threshold_pct(now: dict, base: dict) -> float:
    return max(FLOOR_PCT, NOISE_SIGMAS * 100 * math.hypot(median_error(now), median_error(base)))


def parse_override(text: str) -> tuple[str, float]:
    """``GLOB=PCT`` (e.g. ``naive-*=5``) as given to ``--bandwidth-threshold``."""
    glob, sep, pct = text.rpartition("=")
    try:
        value = float(pct)
    except ValueError:
        value = -1.0
    if not sep or not glob or not 0 < value < 100:  # NaN fails too; >= 100% could never call a case slower
        raise ValueError(
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


def judge(now: dict, base: dict | None, override: float | None = None) -> dict:
    """The comparison fields a case's record gains: baseline figure, delta, threshold, verdict."""
    if base is None:
        return {"verdict": "new"}
    delta = 100 * (now["gbps"] / base["gbps"] - 1)
    threshold = override if override is not None else threshold_pct(now, base)
    verdict = "slower" if delta < -threshold else "faster" if delta > threshold else "same"
    return {"baseline_gbps": base["gbps"], "delta_pct": delta, "threshold_pct": threshold, "verdict": verdict}
