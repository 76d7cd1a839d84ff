"""``summary.md``'s page per registered stage: what a kernel author reads after a run.

Is it right (the gpu tier by shape family and layout), is it as wide as the layout allows (the
compile tier's PTX facts), and is it fast (the bench tier against ``torch.add`` on the same
operands and the copy ceiling)? Each part appears only if its tier ran the stage.
"""

from __future__ import annotations

from collections import Counter, defaultdict

from reports.model import CaseResult, RunResult


def sections(run: RunResult, cell) -> list[str]:
    """One section per registered stage; ``cell`` renders an outcome count (summary's)."""
    lines: list[str] = []
    for stage in run.registered_stages:
        mine = [c for c in run.cases if c.case and c.case.stage == stage]
        lines += ["", f"## Your kernel `{stage}`", ""]
        lines += _correctness(mine, cell) + _widths(mine) + _bandwidth(run, stage)
        if not mine:
            lines.append("No case of this stage ran (check `-m` and `-k`).")
    return lines


def _correctness(cases: list[CaseResult], cell) -> list[str]:
    gpu = [c for c in cases if c.tier == "gpu"]
    if not gpu:
        return []
    families = list(dict.fromkeys((c.case.family or "?") for c in gpu))
    layouts = list(dict.fromkeys((c.case.layout or "?") for c in gpu))
    table: dict[tuple[str, str], Counter] = defaultdict(Counter)
    for c in gpu:
        table[(c.case.family or "?"), (c.case.layout or "?")][c.outcome] += 1
    lines = ["Correctness on the GPU, by shape family and layout:", "",
             "| family | " + " | ".join(layouts) + " |", "|---" * (len(layouts) + 1) + "|"]
    for family in families:
        lines.append(f"| {family} | " + " | ".join(cell(table.get((family, lay))) for lay in layouts) + " |")
    return lines + [""]


def _widths(cases: list[CaseResult]) -> list[str]:
    compiled = [c for c in cases if c.ptx is not None]
    if not compiled:
        return []
    judged = compiled[0].ptx.judged
    narrow = [c for c in compiled if max(c.ptx.widest_load, c.ptx.widest_store) < c.ptx.layout_allows]
    head = ("asserted against the stage's declared `vector_bytes`" if judged
            else "reported, not judged: the stage declares no `vector_bytes`")
    lines = [f"Global access widths in the PTX ({len(compiled)} cases, {head}):", "",
             "| alignment | layout | dtype | layout allows | widest load | widest store | guarded | accesses |",
             "|---|---|---|---|---|---|---|---|"]
    for c in compiled:
        p = c.ptx
        lines.append(f"| {c.case.align or '?'} | {c.case.layout or '?'} | {c.case.dtype or '?'} | "
                     f"{p.layout_allows} B | {p.widest_load} B | {p.widest_store} B | {'yes' if p.guarded else 'no'} | "
                     f"{p.accesses} |")
    if narrow:
        lines += ["", f"**{len(narrow)} of {len(compiled)} cases access narrower than the layout allows** "
                  f"(e.g. `{narrow[0].case.id}`: {narrow[0].ptx.widest_store} B stores where "
                  f"{narrow[0].ptx.layout_allows} B are proven aligned)."]
    return lines + [""]


def _bandwidth(run: RunResult, stage: str) -> list[str]:
    bench = run.bench_cases()
    mine = [c for c in bench if c.bandwidth.stage == stage]
    if not mine:
        return []
    torch_add = {(b.dtype, b.size): b.gbps for c in bench if (b := c.bandwidth).stage == "torch_add"}
    lines = ["Bandwidth (same operands, same session):", "",
             "| dtype | layout | size | shape | GB/s | torch.add GB/s | vs torch.add | % ceiling | verdict |",
             "|---|---|---|---|---|---|---|---|---|"]
    for c in mine:
        b, layout = c.bandwidth, (c.case.layout if c.case else "") or "?"
        reference = torch_add.get((b.dtype, b.size))
        ratio = f"{b.gbps / reference:.2f}x" if reference else "–"
        ceiling = b.pct_ceiling
        lines.append(f"| {b.dtype} | {layout} | {b.size} | {'x'.join(map(str, b.shape))} | {b.gbps:.0f} | "
                     f"{'–' if reference is None else f'{reference:.0f}'} | {ratio} | "
                     f"{'–' if ceiling is None else f'{ceiling:.1f}'} | {b.verdict or 'no baseline'} |")
    return lines + [""]
