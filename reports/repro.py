"""A failing gpu case's standalone reproducer: one Python file rendered from the case's
``ReproSpec`` (results.json) and ``repro_template.py``, needing only torch and the DSL."""

from __future__ import annotations

import pprint
import re
import shlex
from dataclasses import asdict
from pathlib import Path

from reports.model import BAD_OUTCOMES, CaseResult, RunResult
from reports.usage import HarnessUsageError

TEMPLATE = Path(__file__).with_name("repro_template.py")


def command(run_dir: Path | str, case: CaseResult) -> str:
    """The command that writes ``case``'s reproducer."""
    return f"python -m reports repro {shlex.quote(str(run_dir))} {case.repro.case} --out {file_name(case)}"


FILE_GLOB = "repro_*.py"  # every reproducer's file name (``file_name``)


def file_name(case: CaseResult) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", f"repro_{case.repro.case}") + ".py"


def reproducible(run: RunResult) -> list[CaseResult]:
    """The run's failing cases that have a reproducer record, in the run's order."""
    return [c for c in run.cases if c.outcome in BAD_OUTCOMES and c.repro is not None]


def find(run: RunResult, case_id: str) -> CaseResult:
    """The failing case ``case_id`` names (a case id or a node id); ``HarnessUsageError`` in one line if none."""
    named = [c for c in run.cases if case_id in (c.nodeid, c.case.id if c.case else None, c.repro.case if c.repro else None)]
    if not named:
        raise HarnessUsageError(f"{case_id}: no case of this run has that id")
    failing = [c for c in named if c in reproducible(run)]
    if not failing:
        outcomes = ", ".join(sorted({c.outcome for c in named}))
        raise HarnessUsageError(f"{case_id}: no gpu failure of this run to reproduce (it {outcomes})")
    return failing[0]


def _literal(text: str) -> str:
    """``text`` as a Python literal that reads as the source it is, where a raw string can hold it."""
    if "'''" in text or text.endswith("\\"):
        return repr(text)
    return f"r'''{text}'''"


def render(run: RunResult, case: CaseResult) -> str:
    """The reproducer script of ``case``, a failing case of ``run`` with a ``ReproSpec``."""
    spec = case.repro
    sources = {m.path: run.repro_sources[m.digest] for m in spec.modules}
    header = [
        "#!/usr/bin/env python3",
        f"# Reproducer of {spec.case} ({spec.shrunk}), from the CuTe DSL conformance harness",
        f"# test: {case.nodeid}",
        f"# the harness saw: {(case.message.splitlines() or [spec.failure])[0]}",
        f"# kernel: {spec.launch_module}.{spec.launch_function}",
        "# install it failed on:",
        *[f"#   {key}: {value}" for key, value in sorted(run.fingerprint.to_json().items())],
    ]
    footer = [
        "",
        "",
        f"SPEC = {pprint.pformat(asdict(spec), width=120, sort_dicts=False, compact=True)}",
        "",
        "SOURCES = {}  # the kernel's modules, by the path each is imported from",
        *[f"SOURCES[{path!r}] = {_literal(text)}" for path, text in sources.items()],
        "",
        'if __name__ == "__main__":',
        "    sys.exit(main(SPEC, SOURCES))",
        "",
    ]
    return "\n".join(header) + "\n" + TEMPLATE.read_text().rstrip("\n") + "\n".join(footer)
