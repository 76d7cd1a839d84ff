"""``python -m reports compare RUN_A RUN_B``: the reports' command line."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from reports import compare


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m reports", description="Read the harness's run reports.")
    commands = parser.add_subparsers(dest="command", required=True)
    diff = commands.add_parser("compare", help="what changed between two runs (markdown on stdout)",
                               description="What changed between two installs' runs, as markdown.")
    diff.add_argument("run_a", type=Path, help="report folder (holding results.json) or a results.json")
    diff.add_argument("run_b", type=Path, help="report folder (holding results.json) or a results.json")
    diff.add_argument("--threshold", type=float, default=5.0, metavar="PCT",
                      help="flag bandwidth changes larger than this many percent (default 5)")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)  # argparse exits 2 with usage on a bad command line
    try:
        a, b = compare.load(args.run_a), compare.load(args.run_b)
    except ValueError as error:
        print(f"reports compare: {error}", file=sys.stderr)
        return 2
    sys.stdout.write(compare.render(a, b, str(args.run_a), str(args.run_b), args.threshold))
    return 0


if __name__ == "__main__":
    sys.exit(main())
