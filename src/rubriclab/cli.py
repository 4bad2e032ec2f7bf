"""The ``rubriclab`` command: ``demo``, ``run``, ``report`` and ``serve-fake-judge``.

Progress and messages go to stderr, results to stdout and files, so the command composes in CI.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="rubriclab",
        description="Rubric-based LLM evaluation: generate rubrics, critique responses, score in code.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    demo = sub.add_parser(
        "demo",
        help="run the offline demo (mock judge): summaries, car-damage pairwise, support rubric",
        description="Run the seed notebook's two workflows and the lesson's support-reply rubric, "
        "print their summaries and write an HTML report. Offline on the mock judge by default.",
    )
    demo.add_argument(
        "--judge", default="mock", help="judge spec (default: mock), e.g. openai:gpt-4o-mini"
    )
    demo.add_argument(
        "--report", default="rubriclab-demo.html", help="where to write the HTML report"
    )
    demo.add_argument("--no-report", action="store_true", help="do not write the HTML report")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    if args.command == "demo":
        from .demo import run_demo

        run_demo(args.judge, report=None if args.no_report else args.report)
        return 0
    parser.error(f"unknown command {args.command!r}")
    return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
