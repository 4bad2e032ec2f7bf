"""The ``rubriclab`` command: ``demo``, ``run``, ``report``, ``compare`` and ``serve-fake-judge``.

Progress and messages go to stderr, summaries to stdout and results to files, so the command
composes in CI. Exit codes (also in ``--help`` and the README): 0 success, 1 a metric's mean
is under ``--fail-under`` (or, for ``compare``, worse than ``--fail-if-worse`` allows), 2 bad
input (config, data, rubric, judge spec, flags), 3 a metric of ``run`` scored none of its rows
(every judge call failed: the errors are on stderr and earlier results are kept), 130
interrupted.
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
from .scale import format_count

if TYPE_CHECKING:
    from .judges import Judge
    from .result import EvalResult
    from .result.formats import OutputFields
    from .run_config import RunConfig

__all__ = ["main"]

EXIT_OK, EXIT_BELOW, EXIT_USAGE, EXIT_UNSCORED, EXIT_INTERRUPTED = 0, 1, 2, 3, 130
#: above this many rows ``run`` writes only the streamed results file and summary.json
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
  output_fields: all              # or compact: no raw judge answers (--output-fields)
  output_format: jsonl            # or jsonl.gz: gzipped JSON Lines (--output-format)

a rubric file (support.yaml; the repository's examples/ has it with eval.yaml and data):
  name: support
  pass_mark: 0.7
  criteria:
    accuracy: {weight: 0.6, critical: 2, levels: {1: wrong, 2: vague, 3: precise}}
    tone: {weight: 0.4, levels: {1: rude, 2: stiff, 3: warm}}

exit codes:
  0  done (every gate passed)
  1  a gate failed: a metric's mean under --fail-under, or compare's --fail-if-worse
  2  bad input: config, data, rubric, judge spec or flags (one line on stderr says which)
  3  run: a metric scored none of its rows (the commonest errors are on stderr; a results
     folder holding an earlier run keeps it, this run goes to its failed-run/ folder)
  130 interrupted (finished judge calls are in the cache; run again to resume)
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
        "--overwrite",
        action="store_true",
        help="replace the results folder's earlier run even when this run scores no row "
        "(without it such a run is written to the folder's failed-run/ and exits with 3)",
    )
    run.add_argument(
        "--allow-outside",
        action="store_true",
        help="let the config's paths (data, rubric, template, output, cache) leave its folder",
    )
    _allow_images(run, "read images named in the data from DIR too (besides the data's folder)")
    run.add_argument(
        "--allow-env",
        action="append",
        default=[],
        metavar="NAME",
        help="let the config send environment variable NAME as the API key although its name "
        "does not end in _API_KEY, _TOKEN or _KEY (repeatable; only for configs you trust)",
    )
    run.add_argument(
        "--allow-key-for",
        action="append",
        default=[],
        metavar="HOST",
        help="let the config send its api_key_env key to HOST (host or host:port) although "
        "that key's provider does not live there (repeatable; only for hosts you trust)",
    )
    run.add_argument(
        "--model-fn",
        action="append",
        default=[],
        metavar="NAME=MODULE:FUNCTION",
        help="also generate with your Python function prompt -> text, named NAME (a config "
        "never names code: only this flag does; repeatable)",
    )
    run.add_argument(
        "--output-fields",
        type=_output_fields,
        metavar="FIELDS",
        help="what the results files keep, overriding the config's 'output_fields': all "
        "(default), compact (no raw judge answers; scores, verdicts, criteria and rationales "
        "stay) or metric fields separated by commas",
    )
    run.add_argument(
        "--output-format",
        choices=("jsonl", "jsonl.gz"),
        help="the streamed results file, overriding the config's 'output_format': results.jsonl "
        "(default) or results.jsonl.gz (gzipped; every rubriclab command reads it)",
    )
    _fail_under(run)

    arena = sub.add_parser(
        "arena",
        help="rank candidates (response columns, or the config's models x prompts) with "
        "Bradley-Terry and intervals",
        description="Judge every pair of candidates in both orders with a pairwise metric and "
        "rank them (Bradley-Terry, ties half, bootstrap intervals over cases). Candidates are "
        "the config's 'candidates:' (response columns of its data) or its 'models:' x "
        "'prompts:' runs. Writes arena.json and arena.html to the output folder.",
    )
    arena.add_argument("config", help="a YAML or JSON run config")
    arena.add_argument("--judge", help="judge overriding the config's (as for run)")
    arena.add_argument("--model", help="the model name for a base-URL --judge")
    arena.add_argument("--output", "-o", help="folder overriding the config's 'output'")
    arena.add_argument("--pairs-per-case", type=int, help="comparisons per case (default: all)")
    arena.add_argument("--n-boot", type=int, default=1000, help="bootstrap resamples")
    arena.add_argument("--allow-outside", action="store_true", help="as for run")
    arena.add_argument("--allow-env", action="append", default=[], metavar="NAME")
    arena.add_argument("--allow-key-for", action="append", default=[], metavar="HOST")
    arena.add_argument("--model-fn", action="append", default=[], metavar="NAME=MODULE:FUNCTION")

    report = sub.add_parser(
        "report",
        help="write a self-contained HTML report from saved results",
        description="Read result files (.jsonl or .parquet written by rubriclab) or folders "
        "holding them, and write one HTML page that needs no scripts and no network.",
    )
    report.add_argument("results", nargs="+", help="result files or folders")
    report.add_argument(
        "-o",
        "--output",
        default="report.html",
        help="the HTML file to write; a folder (one that exists, or a name without .html) "
        "gets report.html inside it, as run's -o does (default: report.html)",
    )
    report.add_argument("--title", default="rubriclab report", help="the page title")
    _allow_images(
        report, "embed local images named in the results from DIR too (besides their folders)"
    )
    _fail_under(report)

    cmp = sub.add_parser(
        "compare",
        help="compare two saved runs case by case (B minus A); gate CI on regressions",
        description="Pair the cases of two result files by id and report, per metric and "
        "criterion, the mean difference with a paired bootstrap 95%% interval, the pass-rate "
        "difference with an exact McNemar test, and better/same/worse counts.",
    )
    cmp.add_argument("a", help="the baseline run: a results folder, or its .jsonl or .parquet file")
    cmp.add_argument("b", help="the new run, compared with A (a folder or a file)")
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

    rate = sub.add_parser(
        "rate-judge",
        help="rate a judge against people on shipped suites (LLMBar, MT-Bench, PandaLM, HHH)",
        description="Judge the suites' human-labelled pairs in both orders with rubriclab's "
        "pairwise metric and write a judge card: accuracy against people with 95%% intervals, "
        "position and length bias, ties, errors, tokens, cost and time, beside the published "
        "judges' figures. Runs through the cache like any evaluation.",
    )
    rate.add_argument(
        "--judge",
        default="mock",
        help="judge spec (default: mock): openai:MODEL, ollama:MODEL or a base URL (with --model)",
    )
    rate.add_argument("--model", help="the model to call when --judge is a base URL")
    rate.add_argument(
        "--suite",
        action="append",
        choices=["llmbar", "mt_bench", "pandalm", "hhh"],
        help="a suite to run (repeatable; default: llmbar)",
    )
    rate.add_argument("-n", type=int, help="items drawn per suite (default: all)")
    rate.add_argument("--seed", type=int, default=0, help="seed for drawing items (default 0)")
    rate.add_argument(
        "-o", "--output", default="judge-card.html", help="where to write the card (.html or .json)"
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


def _allow_images(parser: argparse.ArgumentParser, text: str) -> None:
    parser.add_argument(
        "--allow-images",
        action="append",
        default=[],
        metavar="DIR",
        help=f"{text}; repeatable (a data or result file is untrusted: its image paths "
        "stay inside these folders)",
    )


def _fail_under(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--fail-under",
        type=_threshold,
        metavar="SCORE",
        help="exit with code 1 when any pointwise metric's mean score is under SCORE (or has no "
        "score); SCORE is a fraction (0.7) or a percent (70%%); a bare number above 1 reads as a "
        "percent. Pairwise metrics (preferences on -100..+100%%) are not gated; pass rates never",
    )


def _threshold(text: str) -> float:
    from .scale import parse_fraction

    try:
        return parse_fraction(text, "--fail-under")
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _output_fields(text: str) -> str | list[str]:
    """``--output-fields``: all, compact or a comma-separated list of metric fields."""
    from .result.formats import check_output_fields

    value: str | list[str] = text.strip()
    if value not in ("all", "compact"):
        value = [f.strip() for f in text.split(",") if f.strip()]
    try:
        check_output_fields(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(
            str(exc).replace("output_fields", "--output-fields")
        ) from None
    return value


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
        if args.command == "arena":
            return _arena(args)
        if args.command == "report":
            return _report(
                args.results,
                _report_path(args.output),
                args.title,
                args.fail_under,
                args.allow_images,
            )
        if args.command == "compare":
            return _compare(args.a, args.b, args.key, args.json, args.fail_if_worse)
        if args.command == "rate-judge":
            return _rate_judge(args)
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
    except OSError as exc:  # a path too long, a folder we may not write...: one line
        name = str(exc.filename or "")
        shown = name if len(name) <= 120 else name[:80] + "…"
        where = f"{shown}: " if shown else ""
        print(f"rubriclab {args.command}: error: {where}{exc.strerror or exc}", file=sys.stderr)
        return EXIT_USAGE
    parser.error(f"unknown command {args.command!r}")
    return EXIT_USAGE  # pragma: no cover - parser.error exits


# -- rate-judge ---------------------------------------------------------------------------------


def _rate_judge(args: argparse.Namespace) -> int:
    from .judge_card import rate_judge

    if args.n is not None and args.n < 1:
        raise _CliError("-n: a whole number of items per suite, 1 or more")
    judge = _flag_judge(args.judge, args.model)
    card = rate_judge(judge, suites=tuple(args.suite or ("llmbar",)), n=args.n, seed=args.seed)
    print(card.summary_text())
    path = card.save(args.output)
    print(f"rubriclab rate-judge: wrote {path}", file=sys.stderr)
    return EXIT_OK


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
        print(
            f"rubriclab review: {format_count(server.result.row_count, 'row')} of {results}",
            flush=True,
        )
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
    from .result import result_file

    checks = [parse_gate(g) for g in gates]  # bad flags are reported before any work
    # a results folder (what run writes) stands for its results file; runs are named by it
    names = (_run_name(a), _run_name(b))
    if names[0] == names[1]:
        names = (f"{names[0]} (A)", f"{names[1]} (B)")
    comparison = compare(result_file(a), result_file(b), key=key, names=names)
    print(comparison.summary_text())
    if json_out:
        from .files import atomic_write_text

        atomic_write_text(Path(json_out), json.dumps(comparison.to_dict(), indent=2))
    failures = [msg for metric, margin in checks if (msg := comparison.regression(metric, margin))]
    for msg in failures:
        print(f"rubriclab compare: FAIL {msg}", file=sys.stderr)
    return EXIT_BELOW if failures else EXIT_OK


# -- run ----------------------------------------------------------------------------------------


def _load_run_config(args: argparse.Namespace) -> RunConfig:
    """The run config named on the command line, with the flags that widen what it may do."""
    from .run_config import load_config

    return load_config(
        args.config,
        allow_outside=args.allow_outside,
        allow_env=args.allow_env,
        allow_key_for=args.allow_key_for,
    )


def _run(args: argparse.Namespace) -> int:
    from .evaluation import evaluate
    from .run_config import ConfigError

    config = _load_run_config(args)
    try:  # building reads the config's other files: name the config they came from
        judge = _run_judge(config, args.judge, args.model)
        metrics = config.build_metrics()
        data = config.data_path()
    except ConfigError as exc:
        raise ConfigError(f"{args.config}: {exc}") from None
    out_dir = Path(args.output) if args.output else config.output_dir()
    if args.output_fields is not None:
        config.output_fields = args.output_fields
    if args.output_format is not None:
        config.output_format = args.output_format
    if config.models or config.prompts or args.model_fn:
        return _run_matrix(args, config, judge, metrics, out_dir)
    name = config.title or data.stem
    print(f"rubriclab run: {data} with {', '.join(m.name for m in metrics)}", file=sys.stderr)
    # streamed chunk by chunk into results.jsonl(.gz): bounded memory, a killed run resumes
    out_dir.mkdir(parents=True, exist_ok=True)
    streamed = out_dir / f"results.{config.output_format}"
    earlier = (
        any((out_dir / f"results.{fmt}").exists() for fmt in _STREAMED_FORMATS)
        and not _partial(streamed).exists()
    )
    # an earlier run's results stay untouched until this run has scored something: the new
    # one is streamed beside them and moved into place only then
    target = out_dir / _INCOMING / streamed.name if earlier else streamed
    if not _partial(target).exists():
        target.unlink(missing_ok=True)  # a fresh run replaces the last one's results
    with warnings.catch_warnings():
        from .result import RowErrorWarning

        warnings.simplefilter("ignore", RowErrorWarning)  # told below, on stderr, once
        result = evaluate(
            str(data),
            metrics,
            judge=judge,
            mapping=config.mapping or None,
            output=target,
            output_fields=config.output_fields,
            image_dirs=args.allow_images,
        )
    result.meta.update(config=str(args.config), data=str(data), name=name)
    row_errors = result.row_errors()
    unscored = [e.metric for e in row_errors if e.nothing_scored]
    if earlier:
        keep_earlier = bool(unscored) and not args.overwrite
        out_dir = _settle(result, target, out_dir, keep_earlier)
    written = _write_results(
        result,
        out_dir,
        name,
        [Path(data).parent, *args.allow_images],
        config.output_fields,
        config.output_format,
    )
    if args.junit:
        from .result.junit import write_junit

        prompt = (config.mapping or {}).get("prompt", "prompt")
        written.append(write_junit({name: result}, args.junit, prompt_column=prompt))
    _print_summary(name, result, sys.stdout)
    for path in written:
        print(f"wrote {path}", file=sys.stderr)
    for errors in row_errors:
        for line in errors.lines():
            print(f"rubriclab run: {line}", file=sys.stderr)
    threshold = args.fail_under if args.fail_under is not None else config.fail_under
    code = _gate({name: result}, threshold)
    if unscored:
        print(
            f"rubriclab run: error: no row scored for {', '.join(unscored)} "
            f"(exit code {EXIT_UNSCORED}); the errors above say why",
            file=sys.stderr,
        )
        return EXIT_UNSCORED
    return code


def _run_matrix(
    args: argparse.Namespace, config: Any, judge: Judge | None, metrics: list[Any], out: Path
) -> int:
    """``prompts:`` x ``models:``: one run per combination, its results in ``out/NAME/``;
    then the leaderboard, and a comparison (two runs) or the arena (more)."""
    from .run_config import ConfigError
    from .run_config.matrix import leaderboard, load_model_fn, run_matrix

    fns = [load_model_fn(text) for text in args.model_fn]
    try:
        run = run_matrix(config, metrics, judge, out, fns)
    except ConfigError as exc:
        raise ConfigError(f"{args.config}: {exc}") from None
    print(f"rubriclab run: {len(run.results)} runs ({', '.join(run.results)})", file=sys.stderr)
    written: list[Path] = []
    for name, result in run.results.items():
        result.meta.update(config=str(args.config))
        written += _write_results(
            result,
            out / name,
            name,
            output_fields=config.output_fields,
            output_format=config.output_format,
        )
        _print_summary(name, result, sys.stdout)
        for errors in result.row_errors():
            for line in errors.lines():
                print(f"rubriclab run: {name}: {line}", file=sys.stderr)
    if args.junit:
        from .result.junit import write_junit

        written.append(write_junit(run.results, args.junit, prompt_column=run.prompt_column))
    board = leaderboard(run)
    print("\n" + board.to_string(index=False), file=sys.stdout)
    from .files import atomic_write_text

    path = out / "leaderboard.json"
    atomic_write_text(path, json.dumps(to_plain(board.to_dict("records")), indent=2) + "\n")
    written.append(path)
    names = list(run.results)
    if len(names) == 2:
        from .comparison import compare

        comparison = compare(
            run.results[names[0]], run.results[names[1]], names=(names[0], names[1])
        )
        text = comparison.summary_text()
        print("\n" + text, file=sys.stdout)
        path = out / "comparison.txt"
        atomic_write_text(path, text + "\n")
        written.append(path)
    elif len(names) > 2:
        written += _arena_outputs(_matrix_arena(run, config), out)
    for path in written:
        print(f"wrote {path}", file=sys.stderr)
    threshold = args.fail_under if args.fail_under is not None else config.fail_under
    return _gate(run.results, threshold)


def _matrix_arena(run: Any, config: Any, **options: Any) -> Any:
    """The arena over a matrix's runs, judged by the judge (and cache) the runs used."""
    from .ranking import arena
    from .run_config.matrix import arena_frame, arena_metric

    frame, names = arena_frame(run)
    return arena(frame, names, arena_metric(config), judge=run.judge, **options)


def _arena_outputs(board: Any, out: Path) -> list[Path]:
    from .files import atomic_write_text
    from .result import presentation

    print("\n" + board.summary_text(), file=sys.stdout)
    json_path = out / "arena.json"
    atomic_write_text(
        json_path,
        json.dumps(
            to_plain(
                {"ranking": board.ranking.to_dict("records"), "matrix": board.matrix.to_dict()}
            ),
            indent=2,
        )
        + "\n",
    )
    html_path = out / "arena.html"
    page = presentation().arena_mimebundle(board)["text/html"]
    atomic_write_text(
        html_path, f"<!doctype html><meta charset='utf-8'><title>rubriclab arena</title>{page}\n"
    )
    return [json_path, html_path]


def _arena(args: argparse.Namespace) -> int:
    """``rubriclab arena CONFIG``: rank response columns, or the config's models x prompts."""
    from .data import to_frame
    from .ranking import arena
    from .run_config import ConfigError
    from .run_config.matrix import arena_metric, default_cache, load_model_fn, run_matrix

    config = _load_run_config(args)
    out = Path(args.output) if args.output else config.output_dir()
    out.mkdir(parents=True, exist_ok=True)
    options = {"pairs_per_case": args.pairs_per_case, "n_boot": args.n_boot}
    try:
        judge = _run_judge(config, args.judge, args.model)
        if config.judge is None or config.judge.cache is None:
            from .judges import get_judge

            judge = (judge or get_judge()).with_cache(default_cache(out))
        metric = arena_metric(config)
        if config.candidates:
            if config.models or config.prompts or args.model_fn:
                raise ConfigError(
                    "candidates: rank either the data's response columns (candidates:) or "
                    "the runs of models: x prompts:, not both"
                )
            data = to_frame(str(config.data_path()))
            mapping = dict(config.mapping or {})
            if mapping:
                data = data.rename(columns={v: k for k, v in mapping.items()})
            board = arena(data, config.candidates, metric, judge=judge, **options)
        else:
            fns = [load_model_fn(text) for text in args.model_fn]
            run = run_matrix(config, config.build_metrics(), judge, out, fns)
            if len(run.results) < 2:
                raise ConfigError("models: an arena needs at least two candidates")
            board = _matrix_arena(run, config, **options)
    except ConfigError as exc:
        raise ConfigError(f"{args.config}: {exc}") from None
    for path in _arena_outputs(board, out):
        print(f"wrote {path}", file=sys.stderr)
    return EXIT_OK


#: the folder, inside a results folder, a new run is streamed into while an earlier run's
#: results are still there
_INCOMING = ".incoming"
#: where a run that scored nothing is written when the results folder holds an earlier run
_FAILED_RUN = "failed-run"
#: the formats ``run`` streams its results file in (``output_format:``, ``--output-format``)
_STREAMED_FORMATS = ("jsonl", "jsonl.gz")


def _partial(path: Path) -> Path:
    return path.with_name(path.name + ".partial")


def _settle(result: EvalResult, target: Path, out_dir: Path, keep_earlier: bool) -> Path:
    """Put a run streamed beside earlier results in its place; returns its results folder.

    A run that scored nothing goes to ``failed-run/`` and the earlier results stay as they
    were; any other run replaces them.
    """
    import shutil

    from .result import FileResult

    home = out_dir / _FAILED_RUN if keep_earlier else out_dir
    if keep_earlier:
        shutil.rmtree(home, ignore_errors=True)
        home.mkdir(parents=True)
        print(
            f"rubriclab run: kept the earlier results in {out_dir}: this run scored no row "
            f"for some metric; it is written to {home} (--overwrite replaces them anyway)",
            file=sys.stderr,
        )
    else:  # a run that replaces the earlier results supersedes an earlier failed attempt too
        shutil.rmtree(out_dir / _FAILED_RUN, ignore_errors=True)
    final = home / target.name
    target.replace(final)
    if isinstance(result, FileResult):
        result.path = final
    shutil.rmtree(target.parent, ignore_errors=True)
    return home


def _run_judge(config: Any, spec: str | None, model: str | None) -> Judge | None:
    """``--judge``/``--model`` over the config's ``judge``, over ``$RUBRICLAB_JUDGE``."""
    if spec is None and model is None:
        built: Judge | None = config.build_judge()
        return built
    if spec is None and config.judge is not None:  # --model alone: the config's judge, renamed
        return _flag_judge(
            config.judge.spec,
            model,
            config.judge,
            config.base,
            config.allowed_env,
            config.allowed_key_hosts,
        )
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
    allow_key_for: tuple[str, ...] = (),
) -> Judge:
    """A judge from ``--judge``/``--model``; its errors speak of flags, not Python arguments.
    ``settings``: the config's judge (its spec renamed by ``--model``), whose key is held to
    the same rule as when it is built from the config."""
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
                base, allow_env=allow_env, allow_key_for=allow_key_for
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


def _write_results(
    result: EvalResult,
    out_dir: Path,
    name: str,
    image_dirs: Sequence[str | Path] = (),
    output_fields: OutputFields | None = None,
    output_format: str = "jsonl",
) -> list[Path]:
    from .files import atomic_write_text
    from .widgets.report import write_report_html

    out_dir.mkdir(parents=True, exist_ok=True)
    results = out_dir / f"results.{output_format}"
    # an earlier run's results in the other formats would be read in place of this run's
    stale = [out_dir / f"results.{fmt}" for fmt in (*_STREAMED_FORMATS, "parquet")]
    for path in stale:
        if path != results:
            path.unlink(missing_ok=True)
    if result.row_count > _FULL_OUTPUTS_MAX_ROWS:  # keep memory bounded: summary only
        summary = out_dir / "summary.json"
        summary.write_text(
            json.dumps(to_plain(result.summary_metrics), indent=2) + "\n", encoding="utf-8"
        )
        print(
            f"{result.row_count} rows: {results.name} was written chunk by chunk; "
            "results.parquet and report.html are skipped above "
            f"{_FULL_OUTPUTS_MAX_ROWS} rows",
            file=sys.stderr,
        )
        return [results, summary]
    written = [result.save(results, output_fields=output_fields)]
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        print("pyarrow is not installed: skipping results.parquet", file=sys.stderr)
    else:
        written.append(result.save(out_dir / "results.parquet", output_fields=output_fields))
    summary = out_dir / "summary.json"
    atomic_write_text(summary, json.dumps(to_plain(result.summary_metrics), indent=2) + "\n")
    written.append(summary)
    page = write_report_html(
        out_dir / "report.html", {name: result}, f"rubriclab: {name}", image_dirs=image_dirs
    )
    written.append(page)
    return written


# -- report -------------------------------------------------------------------------------------


def _report(
    sources: Sequence[str],
    output: Path,
    title: str,
    fail: float | None,
    allow_images: Sequence[str] = (),
) -> int:
    from .result import load_result
    from .result.formats import result_stem
    from .widgets.report import write_report_html

    results: dict[str, EvalResult] = {}
    folders: list[Path] = []
    for path in _result_files(sources):
        stem = result_stem(path)
        name = _unique(path.parent.name if stem == "results" else stem, results)
        results[name] = load_result(path)
        if path.parent not in folders:
            folders.append(path.parent)
    write_report_html(output, results, title, image_dirs=[*folders, *allow_images])
    for name, result in results.items():
        _print_summary(name, result, sys.stdout)
    print(f"wrote {output}", file=sys.stderr)
    return _gate(results, fail)


def _result_files(sources: Sequence[str]) -> list[Path]:
    """Files as given; in a folder, each result once (JSONL preferred over its gzipped and
    Parquet twins; labels files are not results)."""
    from .result.formats import result_stem

    files: list[Path] = []
    for source in sources:
        path = Path(source)
        if path.is_dir():
            by_stem: dict[str, Path] = {}
            for suffix in (".jsonl", ".jsonl.gz", ".parquet"):
                for found in sorted(path.glob(f"*{suffix}")):
                    stem = result_stem(found)
                    if not stem.endswith(".labels") and found.is_file():
                        by_stem.setdefault(stem, found)
            if not by_stem:
                raise _CliError(f"{path} holds no result files (.jsonl, .jsonl.gz or .parquet)")
            files.extend(by_stem[stem] for stem in sorted(by_stem))
        elif path.is_file():
            files.append(path)
        else:
            raise _CliError(f"no result file or folder at {path}")
    return files


def _run_name(source: str) -> str:
    """A run's name as the user gave it: a folder's name, or a file's (its folder's for a
    ``results.*`` file)."""
    from .result.formats import result_stem

    path = Path(source)
    if path.is_dir():
        return path.resolve().name or str(path)
    stem = result_stem(path)
    return path.parent.resolve().name if stem == "results" else stem


def _report_path(output: str) -> Path:
    """``-o`` as run reads it: a folder (existing, or named without .html/.htm) gets
    report.html inside; a file name is the page itself. Missing folders are made."""
    path = Path(output)
    if path.is_dir() or path.suffix.lower() not in (".html", ".htm"):
        return path / "report.html"
    return path


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
            if result.metric(metric).kind == "pairwise":
                # a preference on -100%..+100%, not a score on 0-100%: no bar applies to it
                print(
                    f"--fail-under skips {name}/{metric}: pairwise (a preference on "
                    "-100%..+100%); use 'rubriclab compare --fail-if-worse' to gate it",
                    file=sys.stderr,
                )
                continue
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
