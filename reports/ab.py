"""``python -m reports ab --a INSTALL --b INSTALL --out DIR``: two installs measured side by side
on one machine, interleaved, and every difference judged with its interval. No baseline: it works
on any host.

An install is a Python interpreter (a venv's, a tox env's) or an environment file to source
first (the device's ``/tmp/cute-dsl-VERSION/env.sh``). Each runs one worker process
(``python -m fixtures.bandwidth.ab_worker``, named here, never imported: reports/ knows nothing of
the harness's fixtures) that imports its DSL once and answers requests; the run asks A and B in
turn, ``ABBA`` (round r asks A first when r is even), so a drift of the machine over the run lands
on both sides alike:

- ``bandwidth``: every bench-plan case (its first launch verified), GB/s of each placement;
- ``compile``: cold ``cute.compile`` seconds of each signature family, and every family pooled
  (a process's median over the families of each compile over A's median of that family);
- ``import``: ``import cutlass.cute``; ``conversion``: ``from_dlpack`` and the implicit call's
  conversion, us a call; ``call``: host us of a compiled function's call (legacy, TVM-FFI), on a GPU.

Import, conversion, compile and call are measured in a fresh process each round
(``Plan.fresh_rounds``): one process of an install runs consistently faster or slower than another
of the same install (on an H100 host, 4.8.1 against itself: compiles 7% apart, a compiled call
15%; now and then one 60% slow throughout), so one process per install would judge that luck;
the other figures come from the worker itself;
- ``memory``: KiB of resident memory (and GPU memory) a process keeps per compile (and launch)
  cycle; ``functions kept``: the DSL's compiled functions still alive per cycle (a leaked kernel: 1).

Each worker also says, once, the meanings its DSL defines itself (the semantics family's: the sign
of ``%``, ``//`` rounding, out-of-range conversions; on the host JIT, and on the GPU where both
installs see one): each meaning both installs observed and B gives differently is one line
(``reports.semantics.changed_lines``, as ``compare`` words it), and makes the run exit 1, as a
``slower`` figure does: what programs compute changed, and a human reads it before taking B.

A metric's samples from A and from B give B's change against A (percent; KiB for memory) and a
95% interval of it (Welch's; for the figures sampled a process at a time, the distribution-free
one of the Hodges-Lehmann shift, which one process far off does not move); the verdict, as
nvbench's robust compare words it: ``same`` when the whole interval lies within the metric's
threshold, ``slower`` (B costs more: less bandwidth, more time, more memory kept) or ``faster``
when it lies wholly beyond it, else ``ambiguous``.
"""

from __future__ import annotations

import fnmatch
import json
import math
import os
import statistics
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import IO

from reports import atomic, semantics
from reports.gate import FLOOR_PCT
from reports.report_folder import AB_RESULTS
from reports.summary import NEGATIVE_MEMORY
from reports.usage import HarnessUsageError

WORKER = "fixtures.bandwidth.ab_worker"
VERDICTS = ("slower", "ambiguous", "faster", "same")  # the order summary.md ranks them in
# per kind: (unit, higher is better, threshold, absolute). Host times: half the 10% regression the
# drills must catch; memory: a fraction of the compiled function a leak keeps a cycle (MBs, docs/ab.md)
KINDS = {
    "bandwidth": ("GB/s", True, None, False),  # FLOOR_PCT of the case's size family, as the bench gate
    "compile": ("s", False, 5.0, False),
    "compile, pooled": ("x A's median", False, 5.0, False),  # a process's median of each family's compile over A's median
    "import": ("s", False, 10.0, False),
    "conversion": ("us", False, 10.0, False),
    "call": ("us", False, 10.0, False),
    "memory": ("KiB/cycle", False, 256.0, True),
    "functions kept": ("functions/cycle", False, 0.5, True),  # compiled functions alive after their cycle: a leaked kernel is 1
}


class InstallFailed(RuntimeError):
    """An install's worker exited or could not say what it measures: no run to judge (an install
    that cannot run, never "B is slower")."""


@dataclass(frozen=True)
class Install:
    """One side of the run: ``spec`` a Python interpreter or an ``env.sh`` to source; ``plants``
    the worker's drill flags (``--plant-slowdown F`` ...)."""

    label: str
    spec: str
    plants: tuple[str, ...] = ()

    def command(self) -> list[str]:
        if self.spec.endswith(".sh"):
            if not Path(self.spec).is_file():
                raise HarnessUsageError(f"--{self.label.lower()} {self.spec}: no such environment file")
            # the file defines the install: no PYTHONPATH of this process's (another release's) leaks in
            return ["bash", "-c", f'unset PYTHONPATH; source "{self.spec}" && exec python3 "$@"', "python3",
                    "-m", WORKER, *self.plants]
        if not Path(self.spec).is_file():
            raise HarnessUsageError(f"--{self.label.lower()} {self.spec}: neither a Python interpreter nor an env.sh")
        if not os.access(self.spec, os.X_OK):
            raise HarnessUsageError(f"--{self.label.lower()} {self.spec}: not executable, so not a Python interpreter "
                                    "(an env file to source ends in .sh)")
        return [self.spec, "-m", WORKER, *self.plants]


@dataclass
class Metric:
    """One figure of both installs: the samples, B's change against A and its interval, the verdict."""

    name: str
    kind: str
    size: str = ""  # a bandwidth case's size family
    a: list[float] = field(default_factory=list)
    b: list[float] = field(default_factory=list)
    delta: float | None = None  # percent (KiB for memory); positive: B costs more
    low: float | None = None
    high: float | None = None
    threshold: float | None = None
    verdict: str = ""

    @property
    def unit(self) -> str:
        return KINDS[self.kind][0]


@dataclass
class AbRun:
    a: dict  # each worker's first line: its DSL, torch, GPU
    b: dict
    installs: list[Install]
    metrics: list[Metric]
    errors: list[str] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)  # what was not measured (bench cases, compile families), and why
    meanings: dict[str, list[dict]] = field(default_factory=dict)  # per install (A, B): {subject, type, path, meaning}

    @property
    def slower(self) -> list[Metric]:
        return [m for m in self.metrics if m.verdict == "slower"]

    def meaning_table(self, label: str) -> dict[semantics.Key, str]:
        found: dict[semantics.Key, str] = {}
        for m in self.meanings.get(label, []):
            found.setdefault((m["subject"], m["type"], m["path"]), m["meaning"])
        return found

    @property
    def changed_meanings(self) -> list[str]:
        """One line per meaning both installs observed that B gives differently."""
        return semantics.changed_lines(self.meaning_table("A"), self.meaning_table("B"))

    @property
    def needs_a_human(self) -> bool:
        """Exit 1: B slower on a figure, a meaning changed, or a request failed."""
        return bool(self.slower or self.changed_meanings or self.errors)


# -- judging -----------------------------------------------------------------------------------------


# figures sampled one a fresh process: one process in six can run some 60% slow throughout (seen
# on the CPU machine and on H100 hosts, docs/ab.md), which a mean follows and a rank statistic does not
PER_PROCESS = {"import", "conversion", "compile", "compile, pooled", "call"}

# two-sided 95% quantiles of Student's t by degrees of freedom (beyond the table: the normal's)
_T975 = {1: 12.71, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262, 10: 2.228,
         12: 2.179, 15: 2.131, 20: 2.086, 30: 2.042}


def _t975(df: float) -> float:
    return next((t for d, t in sorted(_T975.items()) if df <= d), 1.96)


def _welch(a: list[float], b: list[float]) -> tuple[float, float, float]:
    """B's mean less A's, and its 95% Welch interval."""
    ma, mb = statistics.fmean(a), statistics.fmean(b)
    va = statistics.variance(a) / len(a) if len(a) > 1 else 0.0
    vb = statistics.variance(b) / len(b) if len(b) > 1 else 0.0
    df = (va + vb) ** 2 / (va ** 2 / max(len(a) - 1, 1) + vb ** 2 / max(len(b) - 1, 1)) if va + vb else 1e9
    half = _t975(df) * math.sqrt(va + vb)
    return mb - ma, mb - ma - half, mb - ma + half


def _mann_whitney_lower(n: int, m: int, alpha: float = 0.05) -> int:
    """The largest ``c`` with P(U <= c) <= alpha / 2 for Mann-Whitney's U of ``n`` and ``m``
    samples of one distribution (exact, by counting arrangements); -1 where there is none."""
    counts = [[[1] for _ in range(m + 1)] for _ in range(n + 1)]  # counts[i][j][u]: arrangements of i and j with U = u
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            width = i * j + 1
            counts[i][j] = [(counts[i - 1][j][u - j] if 0 <= u - j < len(counts[i - 1][j]) else 0)
                            + (counts[i][j - 1][u] if u < len(counts[i][j - 1]) else 0) for u in range(width)]
    total, below, c = math.comb(n + m, n), 0, -1
    for u, count in enumerate(counts[n][m]):
        below += count
        if below / total > alpha / 2:
            return c
        c = u
    return c


def _rank_shift(a: list[float], b: list[float]) -> tuple[float, float, float]:
    """B's shift against A, Hodges-Lehmann's (the median of every difference of a B sample and
    an A sample), and its distribution-free 95% interval from Mann-Whitney's U: one process far off
    moves neither. Fewer than four samples a side have no such interval: the differences' range."""
    diffs = sorted(y - x for x in a for y in b)
    k = max(_mann_whitney_lower(len(a), len(b)) + 1, 1)
    return statistics.median(diffs), diffs[k - 1], diffs[len(diffs) - k]


def judge(metric: Metric) -> Metric:
    """``metric`` with B's change against A, its 95% interval and the verdict. Each sample must be
    independent of the others (one a placement, a process, a cycle): with six samples a side a
    Welch interval is honest where a bootstrap's is too narrow; a figure sampled a process at a
    time (``PER_PROCESS``) takes the rank interval instead, against A's median."""
    unit, higher_is_better, threshold, absolute = KINDS[metric.kind]
    metric.threshold = FLOOR_PCT[metric.size] if threshold is None else threshold
    if not metric.a or not metric.b:
        metric.verdict = "ambiguous"
        return metric
    sign = -1.0 if higher_is_better else 1.0  # a change is counted as B costing more
    by_rank = metric.kind in PER_PROCESS
    shift, low, high = (_rank_shift if by_rank else _welch)(metric.a, metric.b)
    scale = 1.0 if absolute else 100 / (statistics.median(metric.a) if by_rank else statistics.fmean(metric.a))
    metric.delta = sign * shift * scale
    metric.low, metric.high = sorted((sign * low * scale, sign * high * scale))
    if metric.low > metric.threshold:
        metric.verdict = "slower"
    elif metric.high < -metric.threshold:
        metric.verdict = "faster"
    elif -metric.threshold <= metric.low and metric.high <= metric.threshold:
        metric.verdict = "same"
    else:
        metric.verdict = "ambiguous"
    return metric


# -- running ------------------------------------------------------------------------------------------


class _Worker:
    def __init__(self, install: Install, log: IO) -> None:
        self.install = install
        self.log = log
        try:
            self.proc = subprocess.Popen(install.command(), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log,
                                         text=True)
        except OSError as exc:  # executable, but not a program (no #! line, another machine's binary)
            raise HarnessUsageError(f"--{install.label.lower()} {install.spec}: cannot be run ({exc.strerror or exc}); "
                                    "expected a Python interpreter or an env.sh") from None
        self.ready = self._read()

    def _read(self) -> dict:
        line = self.proc.stdout.readline()
        if not line:
            status = self.proc.wait()
            raise InstallFailed(f"install {self.install.label} ({self.install.spec}): its worker exited ({status})"
                                + (f": {said}" if (said := self._last_said()) else ""))
        return json.loads(line)

    def _last_said(self) -> str:
        """The last line the worker wrote to its log (the exception that ended it)."""
        self.log.flush()
        try:
            lines = Path(self.log.name).read_text(errors="replace").splitlines()
        except OSError:
            return ""
        return next((line.strip() for line in reversed(lines) if line.strip()), "")

    def ask(self, **request) -> dict:
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()
        return self._read()

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                self.proc.stdin.write('{"op": "exit"}\n')
                self.proc.stdin.flush()
                self.proc.wait(timeout=60)
            except (OSError, subprocess.TimeoutExpired):
                self.proc.kill()


@dataclass(frozen=True)
class Plan:
    """What an A/B run measures: the bench plan's cases matching ``cases`` (fnmatch globs) of the
    ``sizes`` families, none when ``host_only``; the worker names the plan's cases and the
    compile families."""

    cases: tuple[str, ...] = ("*",)
    sizes: tuple[str, ...] = ("bandwidth", "launch")
    host_only: bool = False
    rounds: int = 2  # each install asked this many times for each bench case and the in-process figures
    # ... for the figures measured in a fresh process: import, conversion, compile and call. Sixteen
    # a side: on an H100 host eight left a planted 10% compile delay ambiguous (+8.5% [2.9, 15.0],
    # +14.5% [4.1, 24.5]) and sixteen caught it (pooled from those two, +11.1% [5.3, 17.6]; one run,
    # +10.3% [5.4, 14.6], where the A/A called nothing slower: docs/ab.md); from eight on, the
    # rank interval reaches past every difference of one process far off
    fresh_rounds: int = 16
    growth_cycles: int = 12

    def bench_cases(self, offered: list[str]) -> list[str]:
        if self.host_only:
            return []
        return [c for c in offered if any(fnmatch.fnmatchcase(c, g) for g in self.cases)
                and _size(c) in self.sizes]


def _size(case: str) -> str:
    return "bandwidth" if case.endswith("-16384x8192") else "launch"  # matrix.BENCH_SIZES's two shapes


def run(a: Install, b: Install, plan: Plan, logs: Path, progress: IO = sys.stderr) -> AbRun:
    """Both workers started, every metric of ``plan`` measured ABBA, judged."""
    logs.mkdir(parents=True, exist_ok=True)
    with open(logs / "worker-a.log", "w") as log_a, open(logs / "worker-b.log", "w") as log_b:
        workers = {}
        try:
            workers["A"] = _Worker(a, log_a)
            workers["B"] = _Worker(b, log_b)
            return _measure(workers, a, b, plan, progress)
        finally:
            for worker in workers.values():
                worker.close()


def _measure(workers: dict[str, _Worker], a: Install, b: Install, plan: Plan, progress: IO) -> AbRun:
    result = AbRun(workers["A"].ready, workers["B"].ready, [a, b], [])
    on_gpu = bool(result.a.get("gpu") and result.b.get("gpu"))
    offers = {label: worker.ask(op="plan") for label, worker in workers.items()}
    for label, offer in offers.items():
        if "error" in offer:
            raise InstallFailed(f"install {label} ({workers[label].install.spec}): its plan failed: {offer['error']}")
    # what both installs measure: the bench cases (on a GPU) and the compile families (the calls and
    # the growth cycles use the last of these); what either leaves out is listed, with why
    cases = [c for c in offers["A"]["cases"] if c in offers["B"]["cases"]] if on_gpu else []
    known = [*offers["A"]["cases"], *offers["A"]["skipped"]]
    if on_gpu and plan.cases != ("*",) and not plan.bench_cases(known):
        raise HarnessUsageError(f"--cases {' '.join(plan.cases)}: no bench case matches (they are named like "
                                f"{', '.join(known[:3])}, ...)")
    families = [f for f in offers["A"]["families"] if f in offers["B"]["families"]]
    for label, offer in offers.items():
        skipped = offer["skipped"] if on_gpu else {}
        for case in plan.bench_cases(list(skipped)):
            result.skipped.setdefault(case, f"install {label}: {skipped[case]}")
        for family, why in offer["left_out"].items():
            result.skipped.setdefault(family, f"compile: install {label} cannot compile it here: {why}")
    metrics: dict[tuple[str, str], Metric] = {}

    def ask_both(rnd: int, request: dict, names: dict[str, tuple[str, str]]) -> None:
        """One request to each install, A first in even rounds; each reply key in ``names``
        (reply key -> (kind, metric name)) adds its samples to that metric."""
        for label in ("A", "B") if rnd % 2 == 0 else ("B", "A"):
            reply = workers[label].ask(**request)
            if "error" in reply:
                result.errors.append(f"{label} {json.dumps(request)}: {reply['error']}")
                continue
            for key, (kind, name) in names.items():
                if key in reply:
                    metric = metrics.setdefault((kind, name), Metric(name, kind, _size(name) if kind == "bandwidth" else ""))
                    getattr(metric, label.lower()).extend(reply[key])

    fresh = plan.fresh_rounds
    fresh_names = {"import_seconds": ("import", "import cutlass.cute"), "from_dlpack": ("conversion", "from_dlpack"),
                   "implicit_conversion": ("conversion", "implicit conversion"), **{f: ("compile", f) for f in families}}
    if on_gpu:
        fresh_names |= {"compiled": ("call", "compiled call"), "tvm_ffi": ("call", "TVM-FFI call")}
    steps = [({"op": "fresh", "families": families}, fresh_names, fresh)]
    if families:
        steps.append(({"op": "growth", "cycles": plan.growth_cycles, "case": families[-1]},
                      {"rss_kib_per_cycle": ("memory", "resident memory per compile"),
                       "gpu_kib_per_cycle": ("memory", "GPU memory per compile and launch"),
                       "functions_kept_per_cycle": ("functions kept", "compiled functions kept per compile")}, plan.rounds))
    else:  # the calls (on a GPU) call a function compiled for that family too
        result.skipped[("calls, " if on_gpu else "") + "memory and compiled functions kept per compile"] = \
            "no compile family both installs compile here"
    if not on_gpu:
        without = [label for label, ready in (("A", result.a), ("B", result.b)) if not ready.get("gpu")]
        why = "neither install sees one here" if len(without) == 2 else f"install {without[0]} sees none here"
        result.skipped["calls (compiled call, TVM-FFI call)"] = f"need a GPU: {why}"
        if not plan.host_only:
            result.skipped["bench plan (bandwidth)"] = f"needs a GPU: {why}"
    if on_gpu:
        steps += [({"op": "bench", "case": c}, {"gbps": ("bandwidth", c)}, plan.rounds) for c in plan.bench_cases(cases)]
    started = time.monotonic()
    for i, (request, names, rounds) in enumerate(steps, 1):
        for rnd in range(rounds):
            ask_both(rnd, request, names)
        print(f"[{i}/{len(steps)}] {request['op']} {request.get('case', '')} ({time.monotonic() - started:.0f} s)",
              file=progress, flush=True)
    _ask_meanings(workers, result, ["host", "gpu"] if on_gpu else ["host"])
    print(f"meanings ({time.monotonic() - started:.0f} s)", file=progress, flush=True)
    result.metrics = [judge(m) for m in [*metrics.values(), *_pooled(metrics.values())]]
    return result


def _ask_meanings(workers: dict[str, _Worker], result: AbRun, paths: list[str]) -> None:
    """Each install's meanings on ``paths``, once (they are results, not timings); a path an install
    cannot run and a meaning only one install observed are listed as not measured, with why."""
    for label, worker in workers.items():
        reply = worker.ask(op="meanings", paths=paths)
        if "error" in reply:
            result.errors.append(f"{label} meanings: {reply['error']}")
            continue
        result.meanings[label] = reply["meanings"]
        for path in paths:
            if path in reply["left_out"]:
                result.skipped[f"meanings ({path})"] = f"install {label}: {reply['left_out'][path]}"
        result.errors += [f"{label} meanings, {case}: {error}" for case, error in reply["errors"].items()]
    if len(result.meanings) < 2:
        return
    tables = {label: result.meaning_table(label) for label in ("A", "B")}
    for label, other in (("A", "B"), ("B", "A")):
        only = [k for k in tables[label] if k not in tables[other] and f"meanings ({k[2]})" not in result.skipped]
        if only:
            result.skipped[f"meanings only install {label} observed ({len(only)})"] = (
                f"install {other} left them out (a known limitation stops the case there): "
                + "; ".join(f"{subject}, {type_} ({path})" for subject, type_, path in sorted(only)))


def _pooled(metrics) -> list[Metric]:
    """Every compile family at once: per process (a round's reply), the median over the families
    of each compile over A's median of that family, one sample a process. A change common to every
    signature (a slower compiler) shows through one family's noise; a process's own speed, which
    moves all its compiles alike, stays one sample."""
    families = [m for m in metrics if m.kind == "compile" and m.a and m.b]
    if len(families) < 2 or len({(len(m.a), len(m.b)) for m in families}) != 1:
        return []
    base = [statistics.median(m.a) for m in families]
    pooled = Metric("every family", "compile, pooled")
    for side in ("a", "b"):
        for rnd in range(len(getattr(families[0], side))):
            getattr(pooled, side).append(statistics.median(getattr(m, side)[rnd] / b for m, b in zip(families, base)))
    return [pooled]


# -- writing ------------------------------------------------------------------------------------------


def ranked(metrics: list[Metric]) -> list[Metric]:
    """Slower first, then ambiguous, faster and same; within each, the largest change first."""
    return sorted(metrics, key=lambda m: (VERDICTS.index(m.verdict), -abs(m.delta or 0.0)))


def render(result: AbRun) -> str:
    """summary.md: the installs, the verdict counts, then every metric ranked by what changed."""
    def side(label: str, ready: dict, install: Install) -> str:
        plants = f", planted: {' '.join(install.plants)}" if install.plants else ""
        return f"- {label}: `{install.spec}`: DSL {ready.get('dsl')}, torch {ready.get('torch')}, GPU {ready.get('gpu') or 'none'}{plants}"

    counts = {v: sum(m.verdict == v for m in result.metrics) for v in VERDICTS}
    lines = ["# A/B run", "", side("A", result.a, result.installs[0]), side("B", result.b, result.installs[1]), "",
             verdict(result), "", "Verdicts: " + ", ".join(f"{n} {v}" for v, n in counts.items()),
             "", *_meanings_section(result), "B against A: a positive change is B costing more (less bandwidth, more time, more memory kept); "
             f"A and B are each side's mean, and the interval a 95% Welch interval, but for the figures sampled "
             f"a process at a time ({', '.join(sorted(PER_PROCESS))}): each side's median, the Hodges-Lehmann "
             "shift against A's median and its distribution-free 95% interval; `same` lies wholly within the "
             "threshold, `slower` / `faster` wholly beyond it.", "", "## What changed, ranked", "",
             "| verdict | kind | metric | A | B | change | interval | threshold |", "|---|---|---|---|---|---|---|---|"]
    for m in ranked(result.metrics):
        suffix = f" {m.unit}" if KINDS[m.kind][3] else "%"  # an absolute change in the metric's own unit
        centre = statistics.median if m.kind in PER_PROCESS else statistics.fmean
        lines.append(f"| {m.verdict} | {m.kind} | `{m.name}` | {_centre(m.a, centre)} {m.unit} | {_centre(m.b, centre)} {m.unit} "
                     f"| {_num(m.delta)}{suffix} | {_num(m.low)} .. {_num(m.high)}{suffix} | {_num(m.threshold)}{suffix} |")
    if any(m.kind == "memory" and min(m.a + m.b, default=0.0) < 0 for m in result.metrics):
        lines += ["", NEGATIVE_MEMORY]
    if result.skipped:
        lines += ["", "## Not measured", ""] + [f"- `{c}`: {why}" for c, why in result.skipped.items()]
    if result.errors:
        lines += ["", "## Requests that failed", ""] + [f"- {e}" for e in result.errors]
    return "\n".join(lines) + "\n"


def verdict(result: AbRun) -> str:
    """The run's first line, then one line per changed meaning."""
    slower, changed = result.slower, result.changed_meanings
    if result.errors:
        first = f"A/B: {len(result.errors)} requests failed (summary.md lists them)"
    elif slower:
        first = f"A/B: B is slower on {len(slower)} of {len(result.metrics)} metrics: " + ", ".join(m.name for m in slower[:5])
    else:
        first = f"A/B: B is not slower than A on any of {len(result.metrics)} metrics"
    if changed:
        first += f"; {len(changed)} meaning{'s' if len(changed) > 1 else ''} changed"
    return "\n".join([first, *(f"- meaning changed: {line}" for line in changed)])


def _meanings_section(result: AbRun) -> list[str]:
    """summary.md's word on the meanings: how many both installs observed, and each changed one."""
    compared = result.meaning_table("A").keys() & result.meaning_table("B").keys()
    if not compared:
        return ["Meanings: none compared (\"Not measured\" says why).", ""]
    paths = ", ".join(sorted({path for _, _, path in compared}))
    changed = result.changed_meanings
    head = f"Meanings the DSL defines itself: {len(compared)} observed by both ({paths}), "
    if not changed:
        return [head + "none changed.", ""]
    return [head + f"{len(changed)} changed (ab.json's `meanings` keeps both tables):", "",
            *(f"- {line}" for line in changed), ""]


def _centre(values: list[float], centre) -> str:
    return _num(centre(values)) if values else "–"


def _num(x: float | None) -> str:
    return "–" if x is None else f"{x:.4g}"


def plot(result: AbRun):
    """The change of every metric with its interval and threshold band, one row each (a
    matplotlib Figure), or None when there is nothing to plot."""
    rows = [m for m in ranked(result.metrics) if m.delta is not None and not KINDS[m.kind][3]]
    if not rows:
        return None
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    fig = Figure(figsize=(9, 0.22 * len(rows) + 1.5))
    ax = fig.subplots()
    ys = range(len(rows))
    colours = {"slower": "tab:red", "faster": "tab:green", "same": "tab:grey", "ambiguous": "tab:orange"}
    for y, m in zip(ys, rows):
        ax.errorbar(m.delta, y, xerr=[[m.delta - m.low], [m.high - m.delta]], fmt="o", ms=3, color=colours[m.verdict])
        ax.plot([-m.threshold, m.threshold], [y, y], color="tab:blue", alpha=0.15, lw=6)
    ax.axvline(0, color="black", lw=0.5)
    ax.set_yticks(list(ys), [f"{m.kind}: {m.name}" for m in rows], fontsize=6)
    ax.invert_yaxis()
    ax.set_xlabel("B against A, % (positive: B costs more); band: threshold")
    fig.tight_layout()
    return fig


def write(result: AbRun, folder: Path) -> None:
    """``ab.json`` (every sample), ``summary.md`` and ``ab-deltas.png`` into ``folder``."""
    document = {"a": result.a, "b": result.b, "installs": [asdict(i) for i in result.installs],
                "metrics": [asdict(m) for m in result.metrics], "errors": result.errors, "skipped": result.skipped,
                "meanings": {label.lower(): table for label, table in result.meanings.items()}}
    atomic.write_text(folder / AB_RESULTS, json.dumps(document, indent=1))
    atomic.write_text(folder / "summary.md", render(result))
    fig = plot(result)
    if fig is not None:
        import io

        buffer = io.BytesIO()
        fig.savefig(buffer, format="png", dpi=110)
        atomic.write_bytes(folder / "ab-deltas.png", buffer.getvalue())
