"""The ``rubriclab`` command: ``demo``, ``run``, ``report``, ``compare`` and ``serve-fake-judge``.

Progress and messages go to stderr, summaries to stdout and results to files, so the command
composes in CI. Exit codes: 0 success, 1 a metric's mean is under ``--fail-under`` (or, for
``compare``, worse than ``--fail-if-worse`` allows), 2 bad input
(config, data, rubric, judge spec), 130 interrupted.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from .columns import to_plain

if TYPE_CHECKING:
    from .judges import Judge
    from .result import EvalResult

__all__ = ["main"]

EXIT_OK, EXIT_BELOW, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130
#: above this many rows ``run`` writes only the streamed results.jsonl and summary.json
_FULL_OUTPUTS_MAX_ROWS = 100_000

_EPILOG = """\
examples:
  rubriclab demo                                  offline demo on the mock judge + report
  rubriclab run eval.yaml --fail-under 70%        judge a data file, gate CI on the mean score
  rubriclab run eval.yaml --junit junit.xml       ... and one JUnit test case per row and metric
  rubriclab run eval.yaml --judge http://127.0.0.1:11434/v1 --model qwen2.5:7b
                                                  any OpenAI-compatible server
  rubriclab report results/ -o report.html        an HTML report from saved results
  rubriclab compare old.jsonl new.jsonl --fail-if-worse support:2%
                                                  paired comparison; gate CI on a regression
  rubriclab serve-fake-judge --port 8765          a fake OpenAI-compatible judge for tests

a run config (YAML or JSON; unknown keys are errors):
  data: answers.csv               # CSV, JSONL/JSON or Parquet, relative to the config
  mapping: {response: answer}     # canonical field -> your column
  judge: openai:gpt-4o-mini       # or mock, ollama:MODEL, {spec: URL, model: ...}
                                  # (default: $RUBRICLAB_JUDGE, with $RUBRICLAB_MODEL for a URL)
  metrics:
    - text_quality                # a predefined metric (generated checklists)
    - name: support
      rubric: support.yaml        # a rubric file, or the rubric inline
    - name: vs_old
      rubric: support.yaml
      baseline: old_answer        # pairwise: response vs this column
  output: results                 # results.jsonl (+ .parquet), summary.json, report.html

a rubric file (support.yaml; the repository's examples/ has it with eval.yaml and data):
  name: support
  pass_mark: 0.7
  criteria:
    accuracy: {weight: 0.6, critical: 2, levels: {1: wrong, 2: vague, 3: precise}}
    tone: {weight: 0.4, levels: {1: rude, 2: stiff, 3: warm}}
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
    demo.add_argument("--model", help="the model to call when --judge is a base URL")
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
    run.add_argument(
        "--judge",
        help="judge overriding the config's: mock, openai:MODEL, ollama:MODEL or a base URL "
        "such as http://127.0.0.1:8000/v1 (with --model)",
    )
    run.add_argument(
        "--model",
        help="the model name: needed with a base-URL --judge; else overrides the config's",
    )
    run.add_argument(
        "--junit",
        metavar="FILE",
        help="also write JUnit XML: one test case per row and metric (fail verdicts fail, "
        "judge errors error)",
    )
    run.add_argument("--output", "-o", help="results folder overriding the config's 'output'")
    run.add_argument(
        "--allow-outside",
        action="store_true",
        help="let the config's paths (data, rubric, template, output, cache) leave its folder",
    )
    run.add_argument(
        "--allow-env",
        action="append",
        default=[],
        metavar="NAME",
        help="let the config send environment variable NAME as the API key although its name "
        "does not end in _API_KEY, _TOKEN or _KEY (repeatable; only for configs you trust)",
    )
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

    cmp = sub.add_parser(
        "compare",
        help="compare two saved runs case by case (B minus A); gate CI on regressions",
        description="Pair the cases of two result files by id and report, per metric and "
        "criterion, the mean difference with a paired bootstrap 95%% interval, the pass-rate "
        "difference with an exact McNemar test, and better/same/worse counts.",
    )
    cmp.add_argument("a", help="the baseline run (.jsonl or .parquet written by rubriclab)")
    cmp.add_argument("b", help="the new run, compared with A")
    cmp.add_argument("--key", help="column that identifies a case (default: id, else row order)")
    cmp.add_argument("--json", metavar="FILE", help="also write the comparison as JSON")
    cmp.add_argument(
        "--fail-if-worse",
        action="append",
        default=[],
        metavar="METRIC[:MARGIN]",
        help="exit with code 1 when B's mean on METRIC is more than MARGIN below A's "
        "(0.05 or 5%%; default 0); repeat for several metrics",
    )

    review = sub.add_parser(
        "review",
        help="serve a result file as a web page where people label its rows",
        description="Serve RESULTS (.jsonl or .parquet written by rubriclab) on 127.0.0.1 with a "
        "random token in the URL; reviewers label rows in the browser (no Jupyter) and the "
        "labels go to RESULTS' labels file (run.labels.jsonl), where load_result finds them.",
    )
    review.add_argument("results", help="the result file to review")
    review.add_argument("--port", type=int, default=0, help="port (default: any free port)")
    review.add_argument(
        "--host",
        default="127.0.0.1",
        help="address to listen on (default 127.0.0.1: this machine only)",
    )
    review.add_argument("--reviewer", help="the reviewer name labels get by default")

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
        type=_threshold,
        metavar="SCORE",
        help="exit with code 1 when any metric's mean score is under SCORE (or has no score); "
        "SCORE is a fraction (0.7) or a percent (70%%); a bare number above 1 reads as a percent",
    )


def _threshold(text: str) -> float:
    from .scale import parse_fraction

    try:
        return parse_fraction(text, "--fail-under")
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


_python_showwarning = warnings.showwarning


def _show_warning(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: TextIO | None = None,
    line: str | None = None,
) -> None:
    """A rubric warning as one line in the user's terms, not a source location."""
    from .rubric import RubricWarning

    if issubclass(category, RubricWarning):
        print(f"rubriclab: warning: {message}", file=file or sys.stderr)
    else:
        _python_showwarning(message, category, filename, lineno, file, line)


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
    warnings.showwarning = _show_warning
    try:
        if args.command == "demo":
            from .demo import run_demo

            judge = _flag_judge(args.judge, args.model)
            run_demo(judge, report=None if args.no_report else args.report)
            return EXIT_OK
        if args.command == "run":
            return _run(args)
        if args.command == "report":
            return _report(args.results, Path(args.output), args.title, args.fail_under)
        if args.command == "compare":
            return _compare(args.a, args.b, args.key, args.json, args.fail_if_worse)
        if args.command == "review":
            return _review(args.results, args.host, args.port, args.reviewer)
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


# -- review -------------------------------------------------------------------------------------


def _review(results: str, host: str, port: int, reviewer: str | None) -> int:
    import asyncio

    from .result.labels import LabelError
    from .review import ReviewServer, serve

    if not 0 <= port <= 65535:
        raise _CliError(f"--port must be between 0 and 65535, got {port}")
    try:
        server = ReviewServer(results, reviewer=reviewer)
    except LabelError as exc:
        raise _CliError(f"--reviewer: {exc}") from None

    async def run() -> None:
        runner = await serve(server, host, port)
        print(f"rubriclab review: {server.result.row_count} rows of {results}", flush=True)
        print(f"  open {server.url}", flush=True)
        print("  (Ctrl+C stops; labels are saved as they are given)", flush=True)
        try:
            await asyncio.Event().wait()
        finally:
            await runner.cleanup()

    try:
        asyncio.run(run())
    except OSError as exc:
        raise _CliError(str(exc)) from None
    return EXIT_OK


# -- compare ------------------------------------------------------------------------------------


def _compare(a: str, b: str, key: str | None, json_out: str | None, gates: list[str]) -> int:
    from .comparison import compare, parse_gate

    checks = [parse_gate(g) for g in gates]  # bad flags are reported before any work
    comparison = compare(a, b, key=key)
    print(comparison.summary_text())
    if json_out:
        Path(json_out).write_text(json.dumps(comparison.to_dict(), indent=2), encoding="utf-8")
    failures = [msg for metric, margin in checks if (msg := comparison.regression(metric, margin))]
    for msg in failures:
        print(f"rubriclab compare: FAIL {msg}", file=sys.stderr)
    return EXIT_BELOW if failures else EXIT_OK


# -- run ----------------------------------------------------------------------------------------


def _run(args: argparse.Namespace) -> int:
    from .evaluation import evaluate
    from .run_config import ConfigError, load_config

    config = load_config(args.config, allow_outside=args.allow_outside, allow_env=args.allow_env)
    try:  # building reads the config's other files: name the config they came from
        judge = _run_judge(config, args.judge, args.model)
        metrics = config.build_metrics()
        data = config.data_path()
    except ConfigError as exc:
        raise ConfigError(f"{args.config}: {exc}") from None
    out_dir = Path(args.output) if args.output else config.output_dir()
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
    result.meta.update(config=str(args.config), data=str(data), name=name)
    written = _write_results(result, out_dir, name)
    if args.junit:
        from .result.junit import write_junit

        prompt = (config.mapping or {}).get("prompt", "prompt")
        written.append(write_junit({name: result}, args.junit, prompt_column=prompt))
    _print_summary(name, result, sys.stdout)
    for path in written:
        print(f"wrote {path}", file=sys.stderr)
    threshold = args.fail_under if args.fail_under is not None else config.fail_under
    return _gate({name: result}, threshold)


def _run_judge(config: Any, spec: str | None, model: str | None) -> Judge | None:
    """``--judge``/``--model`` over the config's ``judge``, over ``$RUBRICLAB_JUDGE``."""
    if spec is None and model is None:
        built: Judge | None = config.build_judge()
        return built
    if spec is None and config.judge is not None:  # --model alone: the config's judge, renamed
        return _flag_judge(config.judge.spec, model, config.judge, config.base, config.allowed_env)
    if spec is None:
        spec = os.environ.get("RUBRICLAB_JUDGE", "").strip()
        if not spec:
            raise _CliError(
                "--model needs a judge: add --judge SPEC (e.g. --judge openai), a 'judge:' "
                "in the config, or set RUBRICLAB_JUDGE"
            )
    return _flag_judge(spec, model)


def _flag_judge(
    spec: str,
    model: str | None,
    settings: Any = None,
    base: Path = Path("."),
    allow_env: frozenset[str] = frozenset(),
) -> Judge:
    """A judge from ``--judge``/``--model``; its errors speak of flags, not Python arguments."""
    from .judges import Judge
    from .judges.specs import PROVIDERS

    spec = spec.strip()
    is_url = spec.startswith(("http://", "https://"))
    if is_url and not model:
        model = os.environ.get("RUBRICLAB_MODEL") or None
        if not model:
            raise _CliError(
                f"--judge {spec} needs --model NAME (or RUBRICLAB_MODEL): the endpoint "
                "does not say which model to use"
            )
    if model and spec in PROVIDERS:  # --judge openai --model gpt-4o-mini
        spec, model = f"{spec}:{model}", None
    elif model and not is_url and spec != "mock":
        spec = f"{spec.partition(':')[0]}:{model}"  # --model overrides the spec's model
        model = None
    try:
        if settings is not None:
            # the config's other settings (concurrency, cache relative to the config ...) stay
            judge: Judge = settings.model_copy(update={"spec": spec, "model": model}).build(
                base, allow_env=allow_env
            )
            return judge
        return Judge(spec, model=model)
    except ValueError as exc:
        raise _CliError(_as_flags(str(exc))) from None


_FLAG_HINTS = (
    ("with model='...'", "with --model NAME"),
    ("needs model='...'", "needs --model NAME"),
    (" (or pass api_key=...)", ""),
    ("or use Judge('mock') to run offline", "or use --judge mock to run offline"),
)


def _as_flags(message: str) -> str:
    """A judge error written for Python callers, retold with the command's flags."""
    for python, flags in _FLAG_HINTS:
        message = message.replace(python, flags)
    return message


def _write_results(result: EvalResult, out_dir: Path, name: str) -> list[Path]:
    from .files import atomic_write_text
    from .widgets.report import write_report_html

    out_dir.mkdir(parents=True, exist_ok=True)
    if result.row_count > _FULL_OUTPUTS_MAX_ROWS:  # keep memory bounded: summary only
        summary = out_dir / "summary.json"
        summary.write_text(
            json.dumps(to_plain(result.summary_metrics), indent=2) + "\n", encoding="utf-8"
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
    atomic_write_text(summary, json.dumps(to_plain(result.summary_metrics), indent=2) + "\n")
    written.append(summary)
    page = write_report_html(out_dir / "report.html", {name: result}, f"rubriclab: {name}")
    written.append(page)
    return written


# -- report -------------------------------------------------------------------------------------


def _report(sources: Sequence[str], output: Path, title: str, fail: float | None) -> int:
    from .result import load_result
    from .widgets.report import write_report_html

    results: dict[str, EvalResult] = {}
    for path in _result_files(sources):
        name = _unique(path.parent.name if path.stem == "results" else path.stem, results)
        results[name] = load_result(path)
    write_report_html(output, results, title)
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
    from .scale import format_percent

    if threshold is None:
        return EXIT_OK
    bar = format_percent(threshold)
    print(f"--fail-under read as {bar} (mean scores are compared on 0-100%)", file=sys.stderr)
    failures = []
    for name, result in results.items():
        for metric in result.metric_names:
            mean = result.metric_summary(metric).mean
            if mean is None:
                failures.append(f"{name}/{metric}: no scored rows")
            elif mean < threshold:
                failures.append(f"{name}/{metric}: mean {format_percent(mean)} < {bar}")
    for line in failures:
        print(f"FAIL {line}", file=sys.stderr)
    if not failures:
        print(f"OK every metric's mean is at least {bar}", file=sys.stderr)
    return EXIT_BELOW if failures else EXIT_OK


def _print_summary(name: str, result: EvalResult, out: TextIO) -> None:
    print("\n" + result.summary_text(name), file=out)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
