"""The ``rubriclab`` command: ``demo``, ``run``, ``report`` and ``serve-fake-judge``.

Progress and messages go to stderr, summaries to stdout and results to files, so the command
composes in CI. Exit codes: 0 success, 1 a metric's mean is under ``--fail-under``, 2 bad input
(config, data, rubric, judge spec), 130 interrupted.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from .result import EvalResult

__all__ = ["main"]

EXIT_OK, EXIT_BELOW, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130
#: above this many rows ``run`` writes only the streamed results.jsonl and summary.json
_FULL_OUTPUTS_MAX_ROWS = 100_000

_EPILOG = """\
examples:
  rubriclab demo                                  offline demo on the mock judge + report
  rubriclab run eval.yaml --fail-under 0.7        judge a data file, gate CI on the mean score
  rubriclab report results/ -o report.html        an HTML report from saved results
  rubriclab serve-fake-judge --port 8765          a fake OpenAI-compatible judge for tests

a run config (YAML or JSON; unknown keys are errors):
  data: answers.csv               # CSV, JSONL/JSON or Parquet, relative to the config
  mapping: {response: answer}     # canonical field -> your column
  judge: openai:gpt-4o-mini       # or mock, ollama:MODEL, {spec: URL, model: ...}
  metrics:
    - text_quality                # a predefined metric (generated checklists)
    - name: support
      rubric: support.yaml        # a rubric file, or the rubric inline
    - name: vs_old
      rubric: support.yaml
      baseline: old_answer        # pairwise: response vs this column
  output: results                 # results.jsonl (+ .parquet), summary.json, report.html
"""


class _CliError(Exception):
    """Bad input found by the CLI itself; printed as one line, exit code 2."""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="rubriclab",
        description="Rubric-based LLM evaluation: generate rubrics, critique responses with a "
        "judge model, score in code, and report.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    from . import __version__

    parser.add_argument("--version", action="version", version=f"rubriclab {__version__}")
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

    run = sub.add_parser(
        "run",
        help="judge a data file with the metrics in a config; write results and a report",
        description="Judge every row of the config's data file with its metrics. Writes "
        "results.jsonl (and results.parquet when pyarrow is installed), summary.json and "
        "report.html to the output folder, and prints the summary.",
        epilog=_EPILOG.split("\n\n", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    run.add_argument("config", help="a YAML or JSON run config")
    run.add_argument("--judge", help="judge spec overriding the config's (e.g. mock)")
    run.add_argument("--output", "-o", help="results folder overriding the config's 'output'")
    _fail_under(run)

    report = sub.add_parser(
        "report",
        help="write a self-contained HTML report from saved results",
        description="Read result files (.jsonl or .parquet written by rubriclab) or folders "
        "holding them, and write one HTML page that needs no scripts and no network.",
    )
    report.add_argument("results", nargs="+", help="result files or folders")
    report.add_argument("-o", "--output", default="report.html", help="the HTML file to write")
    report.add_argument("--title", default="rubriclab report", help="the page title")
    _fail_under(report)

    sub.add_parser(
        "serve-fake-judge",
        help="serve a fake OpenAI-compatible judge on 127.0.0.1 (for tests and offline demos)",
        description="Options are those of rubriclab.testing: see 'rubriclab serve-fake-judge "
        "--help'.",
        add_help=False,
    )
    return parser


def _fail_under(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--fail-under",
        type=float,
        metavar="SCORE",
        help="exit with code 1 when any metric's mean score is under SCORE (or has no score)",
    )


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    if args_list and args_list[0] == "serve-fake-judge":
        from .testing import main as serve

        return int(serve(args_list[1:]) or 0)
    parser = _parser()
    args = parser.parse_args(args_list)
    if args.command is None:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    try:
        if args.command == "demo":
            from .demo import run_demo

            run_demo(args.judge, report=None if args.no_report else args.report)
            return EXIT_OK
        if args.command == "run":
            return _run(args.config, args.judge, args.output, args.fail_under)
        if args.command == "report":
            return _report(args.results, Path(args.output), args.title, args.fail_under)
    except KeyboardInterrupt:
        print("rubriclab: interrupted (finished judge calls are in the cache)", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # `rubriclab demo | head`: the reader left; not an error of ours
        with contextlib.suppress(OSError):
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - keeps the exit-time flush quiet
        return EXIT_OK
    except (_CliError, ValueError, FileNotFoundError, ImportError) as exc:
        # config, data, rubric and judge-spec errors are ValueErrors whose message says the fix
        print(f"rubriclab {args.command}: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    parser.error(f"unknown command {args.command!r}")
    return EXIT_USAGE  # pragma: no cover - parser.error exits


# -- run ----------------------------------------------------------------------------------------


def _run(config_path: str, judge_spec: str | None, output: str | None, fail: float | None) -> int:
    from .evaluate import evaluate
    from .run_config import JudgeConfig, load_config

    config = load_config(config_path)
    judge = JudgeConfig(spec=judge_spec).build() if judge_spec else config.build_judge()
    metrics = config.build_metrics()
    data = config.data_path()
    out_dir = Path(output) if output else config.output_dir()
    name = config.title or data.stem
    print(f"rubriclab run: {data} with {', '.join(m.name for m in metrics)}", file=sys.stderr)
    # streamed chunk by chunk into results.jsonl: bounded memory, and a killed run resumes
    out_dir.mkdir(parents=True, exist_ok=True)
    streamed = out_dir / "results.jsonl"
    if not streamed.with_name(streamed.name + ".partial").exists():
        streamed.unlink(missing_ok=True)  # a fresh run replaces the last one's results
    result = evaluate(
        str(data), metrics, judge=judge, mapping=config.mapping or None, output=streamed
    )
    result.meta.update(config=str(config_path), data=str(data), name=name)
    written = _write_results(result, out_dir, name)
    _print_summary(name, result, sys.stdout)
    for path in written:
        print(f"wrote {path}", file=sys.stderr)
    threshold = fail if fail is not None else config.fail_under
    return _gate({name: result}, threshold)


def _write_results(result: EvalResult, out_dir: Path, name: str) -> list[Path]:
    from .report import report_html

    out_dir.mkdir(parents=True, exist_ok=True)
    if result.row_count > _FULL_OUTPUTS_MAX_ROWS:  # keep memory bounded: summary only
        summary = out_dir / "summary.json"
        summary.write_text(
            json.dumps(_jsonable(result.summary_metrics), indent=2) + "\n", encoding="utf-8"
        )
        print(
            f"{result.row_count} rows: results.jsonl was written chunk by chunk; "
            "results.parquet and report.html are skipped above "
            f"{_FULL_OUTPUTS_MAX_ROWS} rows",
            file=sys.stderr,
        )
        return [out_dir / "results.jsonl", summary]
    written = [result.save(out_dir / "results.jsonl")]
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        print("pyarrow is not installed: skipping results.parquet", file=sys.stderr)
    else:
        written.append(result.save(out_dir / "results.parquet"))
    summary = out_dir / "summary.json"
    summary.write_text(
        json.dumps(_jsonable(result.summary_metrics), indent=2) + "\n", encoding="utf-8"
    )
    written.append(summary)
    page = out_dir / "report.html"
    page.write_text(report_html({name: result}, title=f"rubriclab: {name}"), encoding="utf-8")
    written.append(page)
    return written


# -- report -------------------------------------------------------------------------------------


def _report(sources: Sequence[str], output: Path, title: str, fail: float | None) -> int:
    from .report import report_html
    from .result import load_result

    results: dict[str, EvalResult] = {}
    for path in _result_files(sources):
        name = _unique(path.parent.name if path.stem == "results" else path.stem, results)
        results[name] = load_result(path)
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(report_html(results, title=title), encoding="utf-8")
    for name, result in results.items():
        _print_summary(name, result, sys.stdout)
    print(f"wrote {output}", file=sys.stderr)
    return _gate(results, fail)


def _result_files(sources: Sequence[str]) -> list[Path]:
    """Files as given; in a folder, each result once (JSONL preferred over its Parquet twin)."""
    files: list[Path] = []
    for source in sources:
        path = Path(source)
        if path.is_dir():
            found = sorted(path.glob("*.jsonl"))
            stems = {p.stem for p in found}
            found += sorted(p for p in path.glob("*.parquet") if p.stem not in stems)
            if not found:
                raise _CliError(f"{path} holds no result files (.jsonl or .parquet)")
            files.extend(found)
        elif path.is_file():
            files.append(path)
        else:
            raise _CliError(f"no result file or folder at {path}")
    return files


def _unique(name: str, taken: Mapping[str, object]) -> str:
    candidate, n = name, 2
    while candidate in taken:
        candidate, n = f"{name}-{n}", n + 1
    return candidate


# -- shared -------------------------------------------------------------------------------------


def _gate(results: Mapping[str, EvalResult], threshold: float | None) -> int:
    """Exit code for ``--fail-under``: every metric's mean must be at least ``threshold``."""
    if threshold is None:
        return EXIT_OK
    failures = []
    for name, result in results.items():
        for metric in result.metric_names:
            mean = result.metric_summary(metric).mean
            if mean is None:
                failures.append(f"{name}/{metric}: no scored rows")
            elif mean < threshold:
                failures.append(f"{name}/{metric}: mean {mean:.3f} < {threshold:g}")
    for line in failures:
        print(f"FAIL {line}", file=sys.stderr)
    if not failures:
        print(f"OK every metric's mean is at least {threshold:g}", file=sys.stderr)
    return EXIT_BELOW if failures else EXIT_OK


def _print_summary(name: str, result: EvalResult, out: TextIO) -> None:
    print("\n" + result.summary_text(name), file=out)


def _jsonable(value: object) -> object:
    from .result import _plain

    return _plain(value)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
