"""Bandwidth baselines: pytest-benchmark JSON files under ``reports/baselines/``, one per install.

A baseline is what pytest-benchmark writes for a run (machine_info, benchmarks with stats and
extra_info), with the harness's fingerprint added to machine_info so it can be matched to an
install. Each benchmark's extra_info is the case's bandwidth record (``fixtures.bench.figures``).
Loading refuses, in one line, a file that is not such a baseline and one recorded on another
GPU model; saving is atomic and merges by case, so a partial run refreshes only what it measured.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from pathlib import Path

from reports import atomic

FOLDER = Path(__file__).parent / "baselines"
FINGERPRINT_KEY = "cute_harness_fingerprint"
# what the gate reads of each case, and what a usable value of it is
_REQUIRED = {
    "case": ("a case id", lambda v: isinstance(v, str) and bool(v)),
    "gbps": ("a positive number", lambda v: _number(v) and v > 0),
    "median_s": ("a positive number", lambda v: _number(v) and v > 0),
    "spread_s": ("a number >= 0", lambda v: _number(v) and v >= 0),
    "samples": ("a positive integer", lambda v: isinstance(v, int) and not isinstance(v, bool) and v > 0),
}


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


class BaselineError(ValueError):
    """A baseline that cannot be used, with the one-line reason."""


@dataclass
class Baseline:
    path: Path
    fingerprint: dict
    document: dict  # the pytest-benchmark JSON

    @property
    def entries(self) -> dict[str, dict]:
        return {b["extra_info"]["case"]: b["extra_info"] for b in self.document["benchmarks"]}


def slug(fp: dict) -> str:
    """A file name naming the install: GPU, driver, CUDA, DSL and torch."""
    text = f"{fp['gpu']}-driver{fp['driver']}-cuda{fp['driver_cuda']}-dsl{fp['dsl']}-torch{fp['torch']}"
    return re.sub(r"[^A-Za-z0-9.]+", "_", text).strip("_")


def default_path(fp: dict, folder: Path = FOLDER) -> Path:
    return folder / f"{slug(fp)}.json"


def load(path: Path) -> Baseline:
    try:
        document = json.loads(Path(path).read_text())
    except OSError as exc:
        raise BaselineError(f"baseline {path}: cannot read it ({exc.strerror or exc})") from None
    except json.JSONDecodeError as exc:
        raise BaselineError(f"baseline {path}: not JSON ({exc.msg} at line {exc.lineno})") from None
    fp = document.get("machine_info", {}).get(FINGERPRINT_KEY) if isinstance(document, dict) else None
    if not isinstance(fp, dict) or "gpu" not in fp:
        raise BaselineError(f"baseline {path}: no machine_info.{FINGERPRINT_KEY}; not a baseline this harness saved")
    benchmarks = document.get("benchmarks")
    if not isinstance(benchmarks, list):
        raise BaselineError(f"baseline {path}: no benchmarks list")
    for i, bench in enumerate(benchmarks):
        info = bench.get("extra_info") if isinstance(bench, dict) else None
        missing = [k for k in _REQUIRED if not isinstance(info, dict) or k not in info]
        if missing:
            raise BaselineError(f"baseline {path}: benchmark {i} lacks extra_info {', '.join(missing)}")
        for key, (wanted, valid) in _REQUIRED.items():
            if not valid(info[key]):
                raise BaselineError(f"baseline {path}: benchmark {i} extra_info.{key} is {info[key]!r}, expected {wanted}")
    return Baseline(Path(path), fp, document)


def check_comparable(baseline: Baseline, fp: dict) -> None:
    if baseline.fingerprint["gpu"] != fp["gpu"]:
        raise BaselineError(
            f"baseline {baseline.path.name} was recorded on {baseline.fingerprint['gpu']}, this run is on {fp['gpu']}: "
            "bandwidth is not comparable across GPU models"
        )


def select(choice: str, fp: dict, folder: Path = FOLDER) -> tuple[Baseline | None, str]:
    """The baseline ``--bandwidth-baseline`` names (``auto``: the one for this install, if any;
    ``none``: no comparison) and a line saying what was chosen."""
    if choice == "none":
        return None, "no comparison (--bandwidth-baseline none)"
    if choice == "auto":
        path = default_path(fp, folder)
        if not path.exists():
            return None, f"no baseline for this install ({path.name}); record one with --bandwidth-save"
    else:
        path = Path(choice)
    baseline = load(path)
    check_comparable(baseline, fp)
    return baseline, f"compared with {path}"


def merge(document: dict, fp: dict, previous: Baseline | None) -> dict:
    """``document`` (this run's pytest-benchmark JSON) plus the cases of ``previous`` it did not
    measure, when ``previous`` is the same install's baseline."""
    document = {**document, "machine_info": {**document.get("machine_info", {}), FINGERPRINT_KEY: fp}}
    if previous is None or slug(previous.fingerprint) != slug(fp):
        return document
    measured = {b["extra_info"]["case"] for b in document["benchmarks"]}
    kept = [b for b in previous.document["benchmarks"] if b["extra_info"]["case"] not in measured]
    return {**document, "benchmarks": kept + document["benchmarks"]}


def save(path: Path, document: dict) -> None:
    atomic.write_json(Path(path), document)
