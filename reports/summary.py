"""``summary.md``: what a CI job summary shows of a run."""

from __future__ import annotations

import statistics
from collections import Counter, defaultdict
from collections.abc import Sequence
from pathlib import Path


from reports import repro, semantics, stage_report
from reports.baseline import MIN_RUNS
from reports.gate import TRAVEL_FLOOR_PCT
from reports.model import (
    BAD_OUTCOMES as BAD,
    DEVICE_TIERS,
    INSTALL_BROKEN,
    LOST,
    NO_GPU,
    OUTCOMES,
    PLAN_SAMPLE,
    PLAN_SAMPLES,
    STORM,
    TIERS as TIER_ORDER,
    BandwidthRecord,
    CaseResult,
    RunResult,
)

# what each tier's cases check, a line each under the tier table (the README's "Tiers and picking cases")
TIER_CHECKS = {
    "host": "the install at start; layout algebra, TensorSSA, numeric types, cute.where, from_dlpack, on the CPU",
    "cache": "the DSL's file cache across processes: loaded not compiled again, its key, damaged entries, two writers",
    "compile": "every stage x dtype x alignment x layout compiled for the arch, with PTX accesses as wide as the layout "
               "allows (no GPU)",
    "api": "every DSL name the harness and the tutorials spell exists; renames as drift, deprecations as findings",
    "gpu": "every stage on the GPU: values equal torch's, every output written, inputs and the bytes around each "
           "tensor untouched",
    "bench": "bandwidth on every GPU against its board's baseline (else torch.add beside it), next to the copy ceiling",
    "harness": "the harness's own tests (tests/)",
}
MEMORY_PER_CYCLE = "KiB/cycle"  # a host cost's unit for memory kept per compile (and launch) cycle
NEGATIVE_MEMORY = ("A negative memory figure (KiB/cycle) is the slope of the process's resident memory over the cycles, "
                   "each read after a garbage collection and malloc_trim: it fell, as the allocator gave back pages "
                   "held from before the cycles. The process keeps nothing per compile; the figure is no saving, and "
                   "its size is the resident size's noise.")
PLANTED = "planted_"  # a stage wrong on purpose: the harness's proof that it catches a kind of defect
EMPTY_PARAMETERS = "got empty parameter set"  # pytest's skip reason for a test left with no parameters


def verdict(run: RunResult) -> str:
    """One line a CI reader can trust: the outcome, what ran, what did not and why, GPU or not."""
    counts = run.counts()
    bad = sum(counts[o] for o in BAD)
    stopped = [g for g in run.gpus if g.health]
    if run.status == "install broken":  # stopped before any case: the finding is the whole line
        more = f" (and {len(run.install) - 1} more: summary.md)" if len(run.install) > 1 else ""
        return f"{INSTALL_BROKEN}: " + (run.install[0].line() if run.install else "see summary.md") + more + " · nothing ran"
    if run.status in ("gpu lost", "fault storm") and stopped:
        # cases a lost or stormed GPU failed without running count as not run
        unrun = sum(1 for c in run.cases if c.outcome == "error" and (f"{LOST}: " in c.message or STORM in c.message))
        names = ", ".join(g.uuid for g in stopped)
        what = LOST if run.status == "gpu lost" else "FAULT STORM on"
        head = f"{what}: {names} after {len(run.cases) - unrun} cases, {unrun + run.not_run} not run"
    elif run.status == "internal error" and not run.cases and run.notes:  # stopped before any case: say what stopped it
        head = f"INTERNAL ERROR before any case ran: {'; '.join(run.notes)}"
    elif run.status != "complete":
        head = f"{run.status.upper()} after {len(run.cases)} of {run.collected} cases ({run.not_run} not run)"
    elif bad:
        head = f"FAILED: {bad} of {len(run.cases)} cases need a human"
    elif run.exit_status == 0:
        head = f"{_passed_head(run)}: {ran_counts(counts)}"
    elif run.exit_status == 5 and not run.cases:
        head = "NOTHING RAN: no case was selected" + (f" by {run.selection}" if run.selection else "")
    elif run.exit_status == 5:
        head = f"NOTHING RAN: all {len(run.cases)} selected cases were skipped"
    else:
        head = f"NOT PASSED (exit status {run.exit_status}): {len(run.cases)} cases"
    ran, skipped = _tiers(run.cases)
    parts = [head, "ran: " + (", ".join(f"{t} {n}" for t, n in ran) or "nothing")]
    if skipped:
        parts.append("not run: " + "; ".join(f"{t} ({n} skipped: {why})" for t, n, why in skipped))
    sampled = next((name for name in PLAN_SAMPLES if PLAN_SAMPLE + name in run.selection), "all")
    if sampled != "all":
        parts.append(f"plans sampled ({PLAN_SAMPLE}{sampled}): {PLAN_SAMPLES[sampled]}")
    if not any(t == "bench" for t, _ in ran):
        parts.append("bandwidth: not measured")
    parts.append(_gpus_in_use(run))
    return " · ".join(parts)


def ran_counts(counts: Counter) -> str:
    """What ran and what did not, in the outcome words summary.md's table, results.json and
    junit.xml count them by: ``N cases ran (P passed, X xfailed: ...), S skipped``."""
    skipped, xfailed = counts["skipped"], counts["xfailed"]
    ran = sum(counts.values()) - skipped
    text = f"{ran} cases ran"
    if xfailed:
        text += f" ({ran - xfailed} passed, {xfailed} xfailed: known limitations failing as recorded)"
    return text + (f", {skipped} skipped" if skipped else "")


def _passed_head(run: RunResult) -> str:
    """``PASSED``, or ``PASSED WITHOUT A GPU`` where the tiers that need one were selected and all
    skipped for want of one: exit status 0 then says the CPU tiers conform, not the install on a GPU."""
    ran = {t for t, _ in _tiers(run.cases)[0]}
    device = {c.tier for c in run.cases if c.tier in DEVICE_TIERS}
    if run.fingerprint.gpu == NO_GPU and device and not device & ran:
        return "PASSED WITHOUT A GPU"
    return "PASSED"


def _gpus_in_use(run: RunResult) -> str:
    if len(run.gpus) <= 1:
        return f"GPU: {run.fingerprint.gpu or '?'}"
    models = Counter(g.name for g in run.gpus)
    return "GPUs: " + ", ".join(f"{n} x {model}" for model, n in models.items())


def gpu_label(run: RunResult, uuid: str) -> str:
    """How a report names a GPU: its index, with the host where the run spans several, or the
    UUID's start where indices repeat on hosts of one name (a merge of two runners' runs)."""
    gpu = run.gpu(uuid)
    if gpu is None:
        return uuid[:12] or "–"
    if len({g.host for g in run.gpus}) > 1:
        return f"{gpu.host}:{gpu.index}"
    if sum(g.index == gpu.index for g in run.gpus) > 1:
        return f"{gpu.index} ({gpu.uuid[:12]})"
    return str(gpu.index)


def _tiers(cases: list[CaseResult]) -> tuple[list[tuple[str, int]], list[tuple[str, int, str]]]:
    """Tiers that ran cases (with how many), and tiers whose every case was skipped (with the commonest reason)."""
    by_tier: dict[str, list[CaseResult]] = defaultdict(list)
    for c in cases:
        by_tier[c.tier].append(c)
    order = sorted(by_tier, key=lambda t: (TIER_ORDER.index(t) if t in TIER_ORDER else len(TIER_ORDER), t))
    ran, skipped = [], []
    for tier in order:
        active = sum(c.outcome != "skipped" for c in by_tier[tier])
        if active:
            ran.append((tier, active))
        else:
            reason = Counter(c.reason for c in by_tier[tier]).most_common(1)[0][0] or "no reason given"
            skipped.append((tier, len(by_tier[tier]), reason))
    return ran, skipped


def render(run: RunResult, images: Sequence[Path] = (), folder: Path | None = None) -> str:
    """The summary; ``images`` (plots.write's files, in the report folder) are linked by name;
    ``folder`` (the report folder) is what its reproducer commands name."""
    counts = run.counts()
    lines = ["# CuTe DSL conformance run", "", f"**{verdict(run)}**", ""]
    lines += [f"- {k}: `{v}`" for k, v in run.fingerprint.to_json().items()]
    lines += [f"- arch: `{run.arch}`", f"- exit status: `{run.exit_status}`"]
    lines.append("- CUTE_DSL_* set by the user: " + (", ".join(f"`{k}={v}`" for k, v in run.environment.items()) or "none"))
    if run.compiles:
        lines.append(
            f"- kernel compiles: `{run.compiles.compiles}` for `{len(run.cases)}` cases, "
            f"`{run.compiles.distinct_signatures}` distinct signatures (cases of one signature share a process's "
            "compile; each xdist worker compiles the signatures it meets, so compiles can exceed signatures)"
        )
    lines.append("")
    lines += ["| tier | " + " | ".join(OUTCOMES) + " |", "|---" * (len(OUTCOMES) + 1) + "|"]
    by_tier: dict[str, Counter] = defaultdict(Counter)
    for case in run.cases:
        by_tier[case.tier][case.outcome] += 1
    for tier in sorted(by_tier):
        lines.append(f"| {tier} | " + " | ".join(str(by_tier[tier][o]) for o in OUTCOMES) + " |")
    lines.append("| **all** | " + " | ".join(str(counts[o]) for o in OUTCOMES) + " |")
    lines += [""] + [f"- {tier}: {TIER_CHECKS[tier]}" for tier in TIER_ORDER if tier in by_tier and tier in TIER_CHECKS]
    if run.install:
        lines += ["", "## The install", "", "What stopped the run before any case (docs/install-integrity.md):", ""]
        lines += [f"- {f.cause}: `{f.subject}`: {f.detail}; repair: {f.repair}" for f in run.install]
    if run.notes:
        lines += ["", "## Harness notes", ""] + [f"- {note}" for note in run.notes]
    lines += _merged_from(run)
    lines += _per_install(run)
    lines += _gpus(run)
    lines += _host_costs(run)
    lines += _matrices(run.cases)
    failures = [c for c in run.cases if c.outcome in BAD]
    if failures:
        lines += ["", "## Failures", ""]
        lines += [f"- `{c.nodeid}`: {c.message.splitlines()[0] if c.message else c.outcome}" for c in failures]
    reproducible = repro.reproducible(run)
    if reproducible:
        lines += ["", "## Reproducers", "", "A standalone script per failing gpu case (torch and the DSL only; "
                  "docs/reproducers.md):", ""]
        lines += [f"- `{c.repro.case}`: `{repro.command(folder or 'RUN_DIR', c)}`" for c in reproducible]
    reasons = Counter((c.outcome, c.reason) for c in run.cases if c.outcome in ("skipped", "xfailed"))
    if reasons:
        lines += ["", "## Skips and expected failures", "", "| outcome | count | reason |", "|---|---|---|"]
        lines += [f"| {o} | {n} | {_reason_words(r)} |" for (o, r), n in reasons.most_common()]
    drift = [d for d in run.api_drift if d.used != d.preferred]
    if drift:
        lines += ["", "## API drift", ""]
        lines += [f"- `{d.capability}`: " + (f"uses `{d.used}`" if d.used else "absent in this release")
                  + f" (current spelling `{d.preferred}`)" + (f": {d.note}" if d.note else "") for d in drift]
    if run.deprecations:
        lines += ["", "## Deprecations (what breaks in a later release)", ""]
        lines += [f"- {d.category}: {d.message} (first in `{d.first_case or 'collection'}`)" for d in run.deprecations]
    lines += semantics.section(run)
    lines += stage_report.sections(run, cell)
    lines += _bandwidth(run, images)
    return "\n".join(lines) + "\n"


def _merged_from(run: RunResult) -> list[str]:
    if not run.merged_from:
        return []
    lines = ["", "## Merged from", "", "| run | host | GPU | dsl | torch | started | status | exit | cases |",
             "|---|---|---|---|---|---|---|---|---|"]
    for m in run.merged_from:
        fp = m.fingerprint
        lines.append(f"| `{m.path}` | {m.host or '–'} | {fp.gpu or '?'} | {fp.dsl or '?'} | {fp.torch or '?'} "
                     f"| {m.started} | {m.status} | {m.exit_status} | {m.cases} |")
    return lines


def _per_install(run: RunResult) -> list[str]:
    """Outcome counts per install, for a report merged across installs (``merge --mixed-installs``)."""
    if len({m.fingerprint.install_key() for m in run.merged_from}) < 2:
        return []
    counts: dict[str, Counter] = {}
    for case in run.cases:
        fp = run.merged_from[case.source].fingerprint if case.source is not None else run.fingerprint
        counts.setdefault(fp.install_name(), Counter())[case.outcome] += 1
    lines = ["", "## Outcomes per install", "", "| install | " + " | ".join(OUTCOMES) + " |",
             "|---" * (len(OUTCOMES) + 1) + "|"]
    return lines + [f"| {name} | " + " | ".join(str(c[o]) for o in OUTCOMES) + " |" for name, c in counts.items()]


def _host_costs(run: RunResult) -> list[str]:
    """Every host-cost figure the run measured (import, conversion, compile, call, memory kept):
    reported, not judged; ``python -m reports ab`` judges two installs against each other."""
    figures = [(c, f) for c in run.cases for f in c.host_costs]
    if not figures:
        return []
    lines = ["", "## Host costs", "", "Measured in this run, not judged (two installs are judged side by side by "
             "`python -m reports ab`, docs/ab.md):", "", "| figure | median | samples | case |", "|---|---|---|---|"]
    lines += [f"| {f.name} | {f.median:.4g} {f.unit} | {len(f.samples)} | `{c.nodeid.split('::')[-1]}` |"
              for c, f in figures]
    if any(f.unit == MEMORY_PER_CYCLE and f.median < 0 for _, f in figures):
        lines += ["", NEGATIVE_MEMORY]
    return lines


def _gpus(run: RunResult) -> list[str]:
    """Each GPU's share of the device tiers, its failures and its copy ceiling: one bad GPU
    among several stands out as a GPU, not as a DSL defect; GPUs of one model show their spread."""
    device = [c for c in run.cases if c.gpu]
    if not run.gpus or not device:
        return []
    by_gpu: dict[str, list[CaseResult]] = defaultdict(list)
    for c in device:
        by_gpu[c.gpu].append(c)
    ceilings = {uuid: statistics.median(c.bandwidth.ceiling_gbps for c in cases if c.bandwidth)
                for uuid, cases in by_gpu.items() if any(c.bandwidth for c in cases)}
    lines = ["", "## GPUs", "", "| gpu | model | UUID | board | memory clock MHz | gpu/bench cases | " + " | ".join(OUTCOMES)
             + " | copy ceiling GB/s | bandwidth judged by | same / faster / slower / new | health |",
             "|---" * (10 + len(OUTCOMES)) + "|"]
    for gpu in run.gpus:
        counts = Counter(c.outcome for c in by_gpu.get(gpu.uuid, []))
        ceiling = f"{ceilings[gpu.uuid]:.0f}" if gpu.uuid in ceilings else "–"
        records = [c.bandwidth for c in by_gpu.get(gpu.uuid, []) if c.bandwidth]
        verdicts = Counter(b.verdict for b in records)
        board = f"{gpu.serial or '?'} (VBIOS {gpu.vbios or '?'}, {_number(gpu.power_limit_w, '.0f')} W)"
        lines.append(f"| {gpu_label(run, gpu.uuid)} | {gpu.name} | `{gpu.uuid}` | {board} | {gpu.memory_clock_mhz or '?'} | "
                     f"{sum(counts.values())} | " + " | ".join(str(counts[o]) for o in OUTCOMES)
                     + f" | {ceiling} | {_basis(records)} | "
                     + (" / ".join(str(verdicts[v]) for v in ("same", "faster", "slower", "new")) if records else "–")
                     + f" | {gpu.health or 'ok'} |")
    bad = {uuid for uuid, cases in by_gpu.items() if any(c.outcome in BAD for c in cases)}
    if len(bad) == 1 and len(by_gpu) > 1:
        uuid = next(iter(bad))
        n = sum(c.outcome in BAD for c in by_gpu[uuid])
        lines += ["", f"**Every gpu/bench failure ({n}) ran on gpu {gpu_label(run, uuid)}**; the other {len(by_gpu) - 1} "
                      "GPUs ran their cases cleanly: suspect that GPU before the DSL (re-run its failures elsewhere "
                      "with `--gpus`)."]
    for model in dict.fromkeys(g.name for g in run.gpus):
        rates = [ceilings[g.uuid] for g in run.gpus if g.name == model and g.uuid in ceilings]
        if len(rates) > 1:
            spread = 100 * (max(rates) - min(rates)) / statistics.median(rates)
            lines += ["", f"Copy ceiling across the {len(rates)} {model} GPUs: {min(rates):.0f}-{max(rates):.0f} GB/s "
                          f"(spread {spread:.1f}%)."]
    return lines


def _basis(records: list[BandwidthRecord]) -> str:
    """What a GPU's bandwidth verdicts rest on, in words."""
    bases = {b.basis for b in records if b.verdict}
    if not bases:
        return "–"
    if bases == {"board"}:
        runs = max((b.baseline_runs or 0) for b in records)
        return f"its board's own runs ({runs})"
    if bases == {"traveling"}:
        return "traveling verdict (no runs of its own)"
    return "no baseline" if bases == {""} else " + ".join(sorted(bases))


def _traveling_note(run: RunResult, cases: list[CaseResult]) -> list[str]:
    """The words a board judged by the traveling verdict gets: what it means and what to do."""
    uuids = list(dict.fromkeys(c.gpu for c in cases if c.bandwidth and c.bandwidth.basis == "traveling"))
    if not uuids:
        return []
    named = ", ".join(f"gpu {gpu_label(run, u)}" + (f" (board {run.gpu(u).serial})" if run.gpu(u) and run.gpu(u).serial else "")
                      for u in uuids)
    floors = " and ".join(f"{pct:g}% at the {size} size" for size, pct in TRAVEL_FLOOR_PCT.items())
    return ["", f"**{named}: no baseline runs of {'its' if len(uuids) == 1 else 'their'} own board, so never judged on "
            "another board's figures.** Each case was read against a reference kernel measured beside it on the same "
            f"GPU in this run (a stage against `torch.add` of its dtype and shape, `torch.add` against the copy): the "
            f"traveling verdict, with thresholds of at least {floors}. It cannot see what slows the reference as much as "
            "the stage (a driver, the clocks, the board itself). To judge a board at the 1% the bench tier can: run "
            "`python3 -m pytest suites/bench -m bench --require-gpu --bandwidth-save --same-start` three times on it "
            "(docs/bandwidth.md, "
            "\"A fleet of runners\") and keep `reports/baselines/` between CI jobs."]


def _reason_words(reason: str) -> str:
    """A skip or xfail reason as the table shows it: pytest's own words for an empty parameter list explained."""
    if reason.startswith(EMPTY_PARAMETERS):
        return (f"{reason}: pytest's words for a test left with no parameters in this run (no case of its plan for the "
                "run's stages and options), so it had nothing to check")
    return reason


def _matrices(cases: list[CaseResult]) -> list[str]:
    """Stage x dtype per tier that ran matrix cases: where a release breaks, at a glance, and
    never a compile-tier pass read as device conformance (a tier that only skipped has no table;
    the verdict line says why it did not run). Planted stages' rows are explained once."""
    lines = []
    ran = {tier for tier, _ in _tiers(cases)[0]}
    for tier in TIER_ORDER:
        if tier in ran and tier != "bench":  # the bandwidth table is the bench tier's matrix
            lines += _matrix([c for c in cases if c.tier == tier], tier)
    if any(line.startswith(f"| {PLANTED}") for line in lines):
        lines += ["", f"Stages named `{PLANTED}*` are wrong on purpose, neither the DSL's nor yours: the harness's proof "
                      "that it catches each kind of defect. A ✅ on their row means the check meant to catch it passed: "
                      "the defect was caught (gpu, harness), or the planted kernel builds for the arch so the gpu "
                      "tier can catch it (compile)."]
    return lines


def _matrix(cases: list[CaseResult], tier: str) -> list[str]:
    cells: dict[tuple[str, str], Counter] = defaultdict(Counter)
    for c in cases:
        if c.case:
            cells[c.case.stage, c.case.dtype][c.outcome] += 1
    if not cells:
        return []
    stages = list(dict.fromkeys(stage for stage, _ in cells))
    dtypes = list(dict.fromkeys(dtype for _, dtype in cells))
    lines = ["", f"## Matrix: {tier} tier (stage x dtype)", "", "| stage | " + " | ".join(dtypes) + " |",
             "|---" * (len(dtypes) + 1) + "|"]
    for stage in stages:
        lines.append(f"| {stage} | " + " | ".join(cell(cells.get((stage, d))) for d in dtypes) + " |")
    return lines


def cell(counts: Counter | None) -> str:
    """``❌ bad/total`` if anything needs a human, else what passed, xfailed and skipped."""
    if not counts:
        return ""
    bad = sum(counts[o] for o in BAD)
    if bad:
        return f"❌ {bad}/{sum(counts.values())}"
    parts = [("✅", "passed"), ("xfail", "xfailed"), ("skip", "skipped")]
    return " · ".join(f"{label} {counts[o]}" for label, o in parts if counts[o])


def _bandwidth(run: RunResult, images: Sequence[Path]) -> list[str]:
    bench = run.bench_cases()
    if not bench:
        return []
    rows = [c.bandwidth for c in bench]
    compared = any(b.verdict for b in rows)
    several = len({c.gpu for c in bench}) > 1
    lines = ["", "## Bandwidth", "", _bandwidth_context(run, rows)] + _traveling_note(run, bench) + [""]
    header = ["gpu"] * several + ["stage", "dtype", "size", "shape", "GB/s", "% ceiling", "% spec peak", "noise %", "placement spread %", "samples"]
    if compared:
        header += ["baseline GB/s", "baseline runs", "start spread %", "delta %", "threshold % (smallest slowdown caught)",
                   "verdict", "judged by"]
    lines += ["| " + " | ".join(header) + " |", "|---" * len(header) + "|"]
    for case, b in zip(bench, rows):
        samples = f"{b.samples} ({b.throttled} throttled)" if b.throttled else str(b.samples)
        cells = [gpu_label(run, case.gpu)] * several + [b.stage, b.dtype, b.size, "x".join(map(str, b.shape)), f"{b.gbps:.0f}",
                 _number(b.pct_ceiling), _number(b.pct_peak), f"{100 * b.rel_noise:.1f}",
                 _number(b.placement_spread_pct), samples]
        if compared:
            verdict = b.verdict
            runs = b.baseline_runs
            shown = f"**{verdict}**" if verdict == "slower" else verdict
            if runs is not None and runs < MIN_RUNS:
                shown += f" (baseline from {runs} run{'s' if runs > 1 else ''})"
            cells += [_number(b.baseline_gbps, ".0f"), "–" if runs is None else str(runs),
                      _number(b.baseline_spread_pct), _number(b.delta_pct, "+.1f"),
                      _number(b.threshold_pct), shown, _judged_by(b)]
        lines.append("| " + " | ".join(cells) + " |")
    if images:
        lines += [""] + [f"![{Path(image).stem}]({Path(image).name})" for image in images]
    return lines


def _judged_by(b: BandwidthRecord) -> str:
    """What a case's verdict rests on; for a traveling ``new``, why it was not judged."""
    if b.basis != "traveling":
        return "its board's runs" if b.basis == "board" else "–"
    if not b.yardstick:
        return "not judged (every yardstick's yardstick)"
    if b.yardstick_gbps is None:
        return f"not judged: `{b.yardstick}` was not measured in this run (select it too)"
    if b.verdict == "new":
        return f"not judged: no baseline run measured it beside `{b.yardstick}`"
    return f"`{b.yardstick}` on this GPU"


def _bandwidth_context(run: RunResult, rows: list[BandwidthRecord]) -> str:
    """What the numbers are relative to: this session's copy ceiling, the spec sheet, the baseline."""
    ceilings = sorted({b.ceiling_gbps for b in rows})
    ceiling = f"{ceilings[0]:.0f}" if len(ceilings) == 1 else f"{ceilings[0]:.0f}-{ceilings[-1]:.0f}"
    peaks = {b.spec_peak_gbps for b in rows} - {None}
    peak = " / ".join(f"{p:.0f} GB/s" for p in sorted(peaks)) if peaks else "unknown"
    if run.baseline.path:
        base = f"baseline `{run.baseline.path}`"
        dsl = run.baseline.fingerprint.dsl
        runs = run.baseline.runs
        base += " (" + ", ".join(filter(None, [f"dsl {dsl}" if dsl else "", f"{runs} runs" if runs else ""])) + ")"
    else:
        base = f"baseline: none ({run.baseline.note or 'not recorded'})"
    return f"Ceiling (D2D copy, this session): **{ceiling} GB/s** · spec peak: {peak} · {base}"


def _number(value: float | None, spec: str = ".1f") -> str:
    return "–" if value is None else format(value, spec)
