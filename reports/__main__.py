"""``python -m reports compare RUN_A RUN_B``, ``releases RUN...``, ``merge RUN... --out DIR``,
``forget BASELINE CASE_GLOB...``, ``repro RUN CASE_ID [--out FILE]``, ``timeline RUN``, ``drill RUN [--against RUN]``
and ``ab --a INSTALL --b INSTALL --out DIR``: the reports' command line.

Every command exits as a run does (the README's table): 0 done, 1 what it judged needs a human
(``merge``: a case of the merged run; ``drill``: not proved; ``ab``: B slower, a meaning changed, or a request failed), 3 a file it writes could not be
written (a full disk), 4 bad input (the command line itself, a path that holds no run, a run
that is no drill, a baseline, an ``--out`` that holds files, an ``ab`` install that is no program), 6 (``ab``) an
install whose worker cannot run (INSTALL BROKEN: no DSL, an import that fails); each failure is
one line on stderr.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path
from typing import NoReturn

from reports import (
    ab,
    atomic,
    baseline,
    compare,
    drill,
    merge,
    model,
    release_table,
    report_folder,
    repro,
    semantics,
    summary,
    timeline,
)
from reports.usage import HarnessUsageError

NOT_WRITTEN = 3  # a run's internal error: retry (a full disk)
USAGE_ERROR = 4  # pytest's status for a usage error, which the harness's bad input shares


class _BadCommandLine(HarnessUsageError):
    """A command line argparse refused, as the one line that says so."""


class _Parser(argparse.ArgumentParser):
    """argparse answering a bad command line as every command answers bad input: one line, exit
    4 (argparse's own status, 2, reads as "interrupted: retry" in the README's table)."""

    def error(self, message: str) -> NoReturn:
        raise _BadCommandLine(f"{self.prog.removeprefix('python -m ')}: {message} (see {self.prog} --help)")


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="python -m reports", description="Read the harness's run reports.")
    commands = parser.add_subparsers(dest="command", required=True)
    diff = commands.add_parser("compare", help="what changed between two runs (markdown on stdout)",
                               description="What changed between two installs' runs, as markdown; exit 1 where a meaning "
                                           "the DSL defines itself changed.")
    diff.add_argument("run_a", type=Path, help="report folder (holding results.json) or a results.json")
    diff.add_argument("run_b", type=Path, help="report folder (holding results.json) or a results.json")
    diff.add_argument("--threshold", type=float, default=5.0, metavar="PCT",
                      help="flag bandwidth changes larger than this many percent (default 5)")
    table = commands.add_parser("releases", help="which DSL release passes what (markdown table on stdout)",
                                description="One table from several runs: a row per DSL release, a column per tier.")
    table.add_argument("runs", type=Path, nargs="+", help="report folders (holding results.json) or results.json files")
    table.add_argument("--update", type=Path, metavar="FILE",
                       help="also rewrite the table between the release-table markers in FILE (e.g. docs/release-matrix.md)")
    join = commands.add_parser("merge", help="several runs as one report (results.json, summary.md, junit.xml)",
                               description="Several runs (runners, GPU models, a re-run of failures) as one report; a "
                                           "later run's result for the same case on the same GPU model replaces an "
                                           "earlier one's.")
    join.add_argument("runs", type=Path, nargs="+", help="report folders (holding results.json) or results.json files")
    join.add_argument("--out", required=True, metavar="DIR",
                      help="the merged report's folder: new or empty (a report or any other file there is refused)")
    join.add_argument("--mixed-installs", action="store_true",
                      help="merge runs of different installs (DSL, torch) too, counting outcomes per install")
    drop = commands.add_parser("forget", help="drop cases from a bandwidth baseline (judged new until re-measured)",
                               description="Drop the cases matching any glob from every run of a baseline, atomically: "
                                           "for figures that no longer mean what a run would measure (a stage's kernel "
                                           "or its timing changed). They are judged new until starts re-measure them.")
    drop.add_argument("baseline", type=Path, help="a baseline file (reports/baselines/*.json)")
    drop.add_argument("cases", nargs="+", metavar="CASE_GLOB", help="case ids or fnmatch globs, e.g. 'tuned-*'")
    script = commands.add_parser("repro", help="a standalone Python script reproducing a failing gpu case",
                                 description="One Python file that needs only torch and the DSL: the case's kernel, "
                                             "operands, launch and checks, exiting 1 with the failure or 0 if it conforms.")
    script.add_argument("run", type=Path, help="report folder (holding results.json) or a results.json")
    script.add_argument("case_id", help="the failing case's id (or its test's node id)")
    script.add_argument("--out", type=Path, metavar="FILE", help="write the script there (default: stdout)")
    when = commands.add_parser("timeline", help="where a run's wall time went (markdown on stdout)",
                               description="Each process's start-up, collection, cases and idle time, worker time by "
                                           "tier and test, the longest cases and the parallel part's tail, from a run's "
                                           "results.json (docs/gpu-runner.md).")
    when.add_argument("run", type=Path, help="report folder (holding results.json) or a results.json")
    proof = commands.add_parser("drill", help="whether a planted-slowdown drill proved the gate (exit 0) or not (1); "
                                "a run that planted nothing is no drill (4)",
                                description="A --bandwidth-plant-slowdown run fails its cases when the gate works: exit 0 "
                                            "where every planted bandwidth-size case was called slower, 1 where one was not.")
    proof.add_argument("run", type=Path, help="the drill's report folder (holding results.json) or its results.json")
    proof.add_argument("--against", type=Path, metavar="RUN",
                       help="the A/A run of the same machine start: how much slower each case really measured")
    side = commands.add_parser("ab", help="two installs measured side by side on this machine, interleaved",
                               description="The bench plan and the host costs (import, conversion, compile, call, memory "
                                           "kept per compile) under two installs, A and B asked in turn, each difference "
                                           "judged with its interval: same, faster, slower or ambiguous (docs/ab.md).")
    for label in "ab":
        side.add_argument(f"--{label}", required=True, metavar="INSTALL",
                          help="a Python interpreter (a venv's bin/python), or an env file to source first "
                               "(/tmp/cute-dsl-4.7.1/env.sh on the GPU machine)")
    side.add_argument("--out", required=True, metavar="DIR", help="the A/B report's folder: new or empty")
    side.add_argument("--cases", nargs="+", default=["*"], metavar="GLOB", help="bench cases to run (fnmatch globs; default all)")
    side.add_argument("--sizes", nargs="+", choices=("bandwidth", "launch"), default=["bandwidth", "launch"],
                      help="bench size families to run (default both)")
    side.add_argument("--host-only", action="store_true", help="host costs only (what a machine without a GPU can measure)")
    side.add_argument("--rounds", type=int, default=2, help="times each install is asked for each figure (default 2: ABBA)")
    side.add_argument("--fresh-rounds", type=int, default=ab.Plan.fresh_rounds, metavar="N",
                      help=f"fresh processes a side for import, conversion, compile and call (default "
                           f"{ab.Plan.fresh_rounds}; more narrow their intervals, docs/ab.md)")
    side.add_argument("--plant-b-slowdown", type=float, metavar="F", help="drill: B's bench cases move F more bytes")
    side.add_argument("--plant-b-compile-delay", type=float, metavar="F", help="drill: B's compiles take F longer")
    side.add_argument("--plant-b-leak", action="store_true", help="drill: B keeps every function it compiles")
    side.add_argument("--plant-b-meaning", action="store_true",
                      help="drill: B's Int32 %% follows Python's rule (the sign of the divisor), a changed meaning")
    return parser


def main(argv: list[str] | None = None) -> int:
    try:
        args = _parser().parse_args(argv)
    except _BadCommandLine as error:
        print(error, file=sys.stderr)
        return USAGE_ERROR
    try:
        return _COMMANDS[args.command](args)
    except ValueError as error:  # HarnessUsageError, and the result model's refusals: bad input
        print(f"reports {args.command}: {error}", file=sys.stderr)
        return USAGE_ERROR
    except OSError as error:  # what a command reads is refused as a ValueError: this is a file it writes
        print(f"reports {args.command}: not written: {atomic.failure(error)}", file=sys.stderr)
        return NOT_WRITTEN


def _compare(args: argparse.Namespace) -> int:
    if not 0 <= args.threshold < float("inf"):
        raise HarnessUsageError(f"--threshold {args.threshold:g}: a percentage, 0 or more (default 5)")
    a, b = compare.load(args.run_a), compare.load(args.run_b)
    sys.stdout.write(compare.render(a, b, str(args.run_a), str(args.run_b), args.threshold))
    return 1 if semantics.changes(a, b) else 0  # a changed meaning needs a human


def _releases(args: argparse.Namespace) -> int:
    table = release_table.render([compare.load(path) for path in args.runs])
    if args.update:
        release_table.update(args.update, table)
    sys.stdout.write(table)
    return 0


def _merge(args: argparse.Namespace) -> int:
    """The merged report into ``--out``, claimed first: an existing report or anything else there is refused."""
    held = report_folder.claim("--out", args.out)
    try:
        merged = merge.merge([(str(path), compare.load(path)) for path in args.runs], args.mixed_installs)
        merge.write(merged, held.folder)
    finally:
        held.release()
    print(f"{summary.verdict(merged)}\nmerged {len(args.runs)} runs into {held.folder}")
    return 0 if merged.passed else 1


def _forget(args: argparse.Namespace) -> int:
    dropped = baseline.forget(args.baseline, args.cases)
    print(f"dropped {len(dropped)} cases from {args.baseline}: {' '.join(dropped)}")
    return 0


def _drill(args: argparse.Namespace) -> int:
    """The drill's verdict; a run with no planted case measured is no drill to judge: bad input."""
    against = compare.load(args.against) if args.against else None
    run = compare.load(args.run)
    result = drill.judge(run, against)
    if not any(c.bandwidth.planted_slowdown is not None for c in run.bench_cases()):
        raise HarnessUsageError(f"{args.run}: {result.lines[-1].removeprefix('drill NOT PROVED: ')}")
    print("\n".join(result.lines))
    return 0 if result.proved else 1


def _timeline(args: argparse.Namespace) -> int:
    sys.stdout.write(timeline.render(compare.load(args.run), str(args.run)))
    return 0


def _repro(args: argparse.Namespace) -> int:
    """Write the reproducer; a path that holds no run is named as such."""
    try:
        run = compare.load(args.run)
    except ValueError as error:
        raise HarnessUsageError(f"{args.run}: not a run's report folder ({error})") from None
    text = repro.render(run, repro.find(run, args.case_id))
    if args.out:
        atomic.write_text(atomic.writable_file("--out", args.out, replace=False), text)
        print(f"wrote {args.out}")
    else:
        sys.stdout.write(text)
    return 0


def _ab(args: argparse.Namespace) -> int:
    """The A/B run into ``--out``, claimed first."""
    if args.rounds < 1:
        raise HarnessUsageError(f"--rounds {args.rounds}: at least 1")
    if args.host_only and args.cases != ["*"]:
        raise HarnessUsageError("--cases: bench cases, which --host-only leaves out (drop one of the two)")
    if args.fresh_rounds < 4:
        raise HarnessUsageError(f"--fresh-rounds {args.fresh_rounds}: at least 4 (fewer have no 95% rank interval)")
    for option, fraction in (("--plant-b-slowdown", args.plant_b_slowdown), ("--plant-b-compile-delay", args.plant_b_compile_delay)):
        if fraction is not None and not 0 < fraction < 1:
            raise HarnessUsageError(f"{option} {fraction}: a fraction between 0 and 1 (0.01 plants 1%)")
    plants = (*(("--plant-slowdown", str(args.plant_b_slowdown)) if args.plant_b_slowdown else ()),
              *(("--plant-compile-delay", str(args.plant_b_compile_delay)) if args.plant_b_compile_delay else ()),
              *(("--plant-leak",) if args.plant_b_leak else ()),
              *(("--plant-meaning",) if args.plant_b_meaning else ()))
    a, b = ab.Install("A", args.a), ab.Install("B", args.b, plants)
    a.command(), b.command()  # an install that is not there: one line, before anything starts
    held = report_folder.claim("--out", args.out)
    existed = held.folder.exists()
    try:
        plan = ab.Plan(tuple(args.cases), tuple(args.sizes), args.host_only, args.rounds, args.fresh_rounds)
        result = ab.run(a, b, plan, held.folder / "logs")
        ab.write(result, held.folder)
    except (ab.InstallFailed, HarnessUsageError) as error:  # no run: its logs go, so the same --out takes the rerun
        shutil.rmtree(held.folder / "logs", ignore_errors=True)
        if not existed and held.folder.exists():
            held.folder.rmdir()
        if isinstance(error, HarnessUsageError):
            raise
        print(f"reports ab: {model.INSTALL_BROKEN}: {error}", file=sys.stderr)
        return model.INSTALL_BROKEN_EXIT
    finally:
        held.release()
    print(f"{ab.verdict(result)}\nreport: {held.folder}")
    return 1 if result.needs_a_human else 0


_COMMANDS = {"compare": _compare, "releases": _releases, "merge": _merge, "forget": _forget, "repro": _repro,
             "drill": _drill, "ab": _ab, "timeline": _timeline}


if __name__ == "__main__":
    sys.exit(main())
