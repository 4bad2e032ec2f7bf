"""``%load_ext rubriclab``: ``%rubric_judge`` and ``%%rubric``, the shortest notebook path.

``%%rubric DATA`` turns a DataFrame (or a data file) and a rubric written in the cell into a
judged, displayed :class:`~rubriclab.result.EvalResult`, stored in the user's namespace. Every
input problem (unknown variable, bad YAML with its line, missing column, unknown metric) is
raised as IPython's ``UsageError``: one short message, no traceback.
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_cell_magic, line_magic, magics_class

from .scale import format_count

if TYPE_CHECKING:
    from .judges import Judge
    from .metrics import RubricMetric

__all__ = ["RubricMagics", "load_ipython_extension"]

_UNEXPANDED = re.compile(r"\{([A-Za-z_][\w.]*)\}")


def _usage_errors() -> tuple[type[BaseException], ...]:
    """Errors that mean "your input is wrong": shown as one line, never a traceback."""
    from .templates import TemplateError

    return (ValueError, KeyError, FileNotFoundError, TemplateError)


_MAPPING_HINT = re.compile(r"pass mapping=\{'(\w+)': 'your_column'\}")


def _message(exc: BaseException) -> str:
    from pydantic import ValidationError

    from .plain_errors import explain
    from .rubric import Rubric, RubricError

    if isinstance(exc, ValidationError):  # the cell's YAML, in its own keys
        return "the rubric in the cell: " + explain(exc, Rubric)
    if isinstance(exc, RubricError) and not str(exc).startswith("rubric YAML"):
        return "the rubric in the cell: " + str(exc)
    text = str(exc.args[0]) if isinstance(exc, KeyError) and exc.args else str(exc)
    # the data and judge layers speak Python; in a magic the same fix is an option
    text = text.replace(" (or pass api_key=...)", "")
    text = text.replace(
        "or use Judge('mock') to run offline", "or %rubric_judge mock to run offline"
    )
    text = text.replace("with model='...'", "with --model NAME")
    return _MAPPING_HINT.sub(r"add --map \1=your_column", text)


class _HelpShown(Exception):
    """``--help`` printed the help (once): the magic stops there, quietly."""


class _Parser(argparse.ArgumentParser):
    """argparse that reports a bad magic line as a ``UsageError`` instead of exiting."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{self.prog}: {message}")

    def exit(self, status: int = 0, message: str | None = None) -> NoReturn:
        if message:
            raise UsageError(message.strip())
        raise _HelpShown  # --help has printed the help: run nothing


def _judge_parser() -> _Parser:
    p = _Parser(prog="%rubric_judge", description="Set or show the session's default judge.")
    p.add_argument(
        "spec",
        nargs="?",
        help="mock, openai:MODEL, ollama:MODEL or a base URL; 'none' clears it",
    )
    p.add_argument("--model", help="model name for a base-URL spec")
    return p


def _rubric_parser() -> _Parser:
    p = _Parser(
        prog="%%rubric",
        description="Judge DATA with the rubric in the cell (YAML), or with --metric.",
        epilog="""example (the cell body is a rubric, as in a rubric YAML file):
  %%rubric df --name support
  pass_mark: 0.7
  criteria:
    accuracy: {weight: 0.6, critical: 2, levels: {1: wrong, 2: vague, 3: precise}}
    tone: {weight: 0.4, levels: {1: rude, 2: stiff, 3: warm}}

  %rubric df --metric text_quality        (no cell body: a predefined metric)
  %rubric_judge mock                      (set the session judge first)""",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("data", help="a DataFrame or records variable, or a CSV/JSONL/Parquet file")
    p.add_argument("--metric", help="a predefined metric, e.g. text_quality (its checklists)")
    p.add_argument("--pairwise", metavar="BASELINE_COLUMN", help="judge against this column")
    p.add_argument(
        "--judge", help="a judge spec or a rl.Judge variable (default: the session judge)"
    )
    p.add_argument("--generate", action="store_true", help="only write rubrics, to revise")
    p.add_argument("--out", help="variable for the result (default: rubric_result)")
    p.add_argument("--name", help="metric name (default: the rubric's name, else 'rubric')")
    p.add_argument("--template", action="store_true", help="the cell is a Jinja2 judge template")
    p.add_argument(
        "--allow-outside",
        action="store_true",
        help="let file paths (data, a rubric file) leave the working folder",
    )
    p.add_argument(
        "--map",
        action="append",
        default=[],
        metavar="FIELD=COLUMN",
        help="read a field from another column, e.g. --map response=answer (repeatable)",
    )
    return p


def _parse(parser: _Parser, line: str) -> argparse.Namespace | None:
    """The parsed line, or None when it asked for ``--help`` (printed once)."""
    _check_expanded(line)
    try:
        words = shlex.split(line)
    except ValueError as exc:
        raise UsageError(f"{parser.prog}: {exc}") from None
    try:
        return parser.parse_args(words)
    except _HelpShown:
        return None


_EMPTY_CELL_MAGIC = re.compile(r"^(\s*)%%rubric(?=\s|$)")


def _empty_rubric_cell(lines: list[str]) -> list[str]:
    """IPython refuses a cell magic with an empty body before calling it ("Did you mean the line
    magic"); run ``%%rubric ARGS`` with no body as ``%rubric ARGS`` so it gets our help or runs
    the line form (``--metric``), instead."""
    if lines and _EMPTY_CELL_MAGIC.match(lines[0]) and not "".join(lines[1:]).strip():
        return [_EMPTY_CELL_MAGIC.sub(r"\1%rubric", lines[0], count=1)]
    return lines


@magics_class
class RubricMagics(Magics):
    """The rubriclab magics; IPython expands ``{var}`` and ``$var`` in their arguments."""

    @line_magic
    def rubric_judge(self, line: str) -> None:
        """Set (``%rubric_judge mock``) or show (``%rubric_judge``) the session's judge."""
        from .judges import Judge, get_judge, set_judge

        args = _parse(_judge_parser(), line)
        if args is None:
            return
        if args.spec is None:
            try:
                judge = get_judge()
            except ValueError as exc:
                if os.environ.get("RUBRICLAB_JUDGE", "").strip():
                    raise UsageError(str(exc)) from None
                raise UsageError(
                    "no judge set: run %rubric_judge mock (offline, deterministic), or "
                    "%rubric_judge openai:gpt-4o-mini, %rubric_judge ollama:MODEL, "
                    "%rubric_judge http://HOST/v1 --model NAME"
                ) from None
            print(f"Judge: {_describe(judge)}")
            return
        if args.spec.lower() == "none":
            set_judge(None)
            print("Judge cleared: calls now need judge=... or RUBRICLAB_JUDGE")
            return
        if args.spec.startswith(("http://", "https://")) and not args.model:
            raise UsageError(
                f"%rubric_judge {args.spec} needs --model NAME: the endpoint does not say "
                "which model to use"
            )
        try:
            judge = Judge(args.spec, model=args.model)
        except ValueError as exc:
            raise UsageError(_message(exc)) from None
        set_judge(judge)
        print(f"Judge for this session: {_describe(judge)}")

    @line_cell_magic
    def rubric(self, line: str, cell: str | None = None) -> None:
        """Judge DATA with the rubric in the cell (YAML), or with ``--metric``.

        ``%%rubric DATA [--metric NAME] [--pairwise BASELINE_COLUMN] [--judge SPEC]
        [--generate] [--out NAME] [--name METRIC] [--template] [--map FIELD=COLUMN ...]``

        With no cell body, the line form works too: ``%rubric df --metric text_quality``.

        ``--generate`` writes each row's checklist with the metric's generator and stores the
        data with a ``rubric`` column (default ``rubric_cases``) to revise in the grid; a later
        ``%%rubric rubric_cases`` judges with the revised rubrics. ``--template`` reads the cell
        as a Jinja2 critique template (rubric from ``--metric`` or the data's rubric column).
        """
        if not line.strip() and not (cell or "").strip():
            _rubric_parser().print_help()  # a bare %%rubric / %rubric: how to use it
            return
        args = _parse(_rubric_parser(), line)
        if args is None:
            return
        data = self._data(args.data, args.allow_outside)
        body = cell or ""
        try:
            judge = self._judge(args.judge)
            mapping = _mapping(args.map)
            if args.generate:
                self._generate(data, args, body, judge, mapping)
                return
            if not (body.strip() or args.metric or args.template or _has_rubric_column(data)):
                raise UsageError(
                    f"%%rubric {args.data}: nothing to judge with: write a rubric (YAML) in the "
                    "cell body, or add --metric NAME (e.g. text_quality); %%rubric --help shows both"
                )
            metric = _metric(args, body)
            self._evaluate(data, metric, args, judge, mapping)
        except _usage_errors() as exc:
            raise UsageError(_message(exc)) from None

    @property
    def _ns(self) -> dict[str, Any]:
        assert self.shell is not None, "the magics are registered with a running shell"
        ns: dict[str, Any] = self.shell.user_ns
        return ns

    # -- steps --------------------------------------------------------------------------------
    def _data(self, name: str, allow_outside: bool = False) -> Any:
        ns = self._ns
        if name in ns:
            return ns[name]
        if "." in name and name.split(".", 1)[0] in ns:
            raise UsageError(f"{name!r}: pass a variable name; assign the attribute to one first")
        path = Path(name).expanduser()
        if path.is_file():
            return str(_inside_cwd(name, "DATA", allow_outside))
        raise UsageError(f"no variable or data file named {name!r}")

    def _judge(self, spec: str | None) -> Judge | None:
        """``--judge`` is a spec (``mock``, ``openai:MODEL``) or a ``rl.Judge`` variable."""
        from .judges import Judge, get_judge

        if spec is None:
            return None
        value = self._ns.get(spec)
        if isinstance(value, Judge):
            return value
        if spec.startswith(("http://", "https://")):
            raise UsageError(
                f"--judge {spec}: a base URL needs a model: set it with "
                f"%rubric_judge {spec} --model NAME, or pass a rl.Judge variable"
            )
        return get_judge(spec)

    def _generate(
        self,
        data: Any,
        args: Any,
        cell: str,
        judge: Judge | None,
        mapping: dict[str, str] | None,
    ) -> None:
        from IPython.display import display

        from . import metrics
        from .generate import generate_rubrics

        if cell.strip():
            raise UsageError("--generate writes the rubrics itself: leave the cell body empty")
        if not args.metric:
            raise UsageError("--generate needs --metric NAME (e.g. text_quality) to write with")
        metric = metrics.by_name(args.metric)
        cases = generate_rubrics(data, metric, judge=judge, mapping=mapping)
        out = args.out or "rubric_cases"
        self._ns[out] = cases
        failed = int(cases["rubric_error"].notna().sum()) if "rubric_error" in cases else 0
        note = f" ({failed} failed: see the rubric_error column)" if failed else ""
        print(
            f"Rubrics for {format_count(len(cases), 'row')} stored in {out!r}{note}; revise them, then run"
        )
        print(f"%%rubric {out} --metric {metric.name}")
        from .widgets import RubricEditor

        display(RubricEditor(cases))  # type: ignore[no-untyped-call]

    def _evaluate(
        self,
        data: Any,
        metric: RubricMetric,
        args: Any,
        judge: Judge | None,
        mapping: dict[str, str] | None,
    ) -> None:
        from .evaluation import evaluate
        from .widgets.display import display_eval_result

        result = evaluate(data, [metric], judge=judge, mapping=mapping)
        out = args.out or "rubric_result"
        self._ns[out] = result
        display_eval_result(result)
        errors = sum(result.metric_summary(m).errors for m in result.metric_names)
        note = (
            f"; {format_count(errors, 'row')} {'has' if errors == 1 else 'have'} errors "
            f"(see {out}.table)"
            if errors
            else ""
        )
        print(f"EvalResult stored in {out!r}{note}")


def _has_rubric_column(data: Any) -> bool:
    """Whether rows may carry their own rubrics (a data file is read later: assume it may)."""
    columns = getattr(data, "columns", None)
    if columns is not None:
        return "rubric" in columns
    if isinstance(data, list) and data and isinstance(data[0], dict):
        return "rubric" in data[0]
    return isinstance(data, str)


def _check_expanded(line: str) -> None:
    """IPython leaves ``{name}`` as typed when the name is unknown: say so instead."""
    match = _UNEXPANDED.search(line)
    if match:
        raise UsageError(f"unknown variable {match.group(1)!r} in {{{match.group(1)}}}")


def _mapping(items: list[str]) -> dict[str, str] | None:
    """``--map response=answer`` pairs as the column mapping ``evaluate`` takes."""
    mapping: dict[str, str] = {}
    for item in items:
        field, sep, column = item.partition("=")
        if not sep or not field.strip() or not column.strip():
            raise UsageError(f"--map {item!r}: write FIELD=COLUMN, e.g. --map response=answer")
        mapping[field.strip()] = column.strip()
    return mapping or None


def _describe(judge: Judge) -> str:
    if judge.is_mock:
        return f"{judge!r}: MOCK (offline, deterministic; its verdicts are not real judgments)"
    return judge.describe()


def _metric(args: Any, cell: str) -> RubricMetric:
    """The metric a cell asks for: a YAML rubric, a template, a predefined metric, or the data's
    own ``rubric`` column."""
    from . import metrics
    from .rubric import Rubric

    body = cell.strip()
    if args.template:
        if not body:
            raise UsageError("--template needs the Jinja2 judge template in the cell body")
        from .templates import compile_template

        compile_template(body, name="%%rubric cell")  # a syntax error names its line now
        base = metrics.by_name(args.metric) if args.metric else metrics.RubricMetric()
        return _pairwise(base, args).with_options(name=args.name or base.name, template=body)
    if body:
        if args.metric:
            raise UsageError("give either a rubric in the cell or --metric NAME, not both")
        if "\n" not in body and body.endswith((".yaml", ".yml", ".json")):  # a rubric file
            body = _inside_cwd(body, "the rubric file in the cell", args.allow_outside).read_text(
                encoding="utf-8"
            )
        rubric = Rubric.from_yaml_text(body)
        name = args.name or rubric.name or "rubric"
        return _pairwise(metrics.RubricMetric(name=name, rubric=rubric), args)
    if args.metric:
        metric = _pairwise(metrics.by_name(args.metric), args)
        return metric.with_options(name=args.name) if args.name else metric
    # no rubric anywhere else: each row's own 'rubric' column (e.g. from --generate)
    return _pairwise(metrics.RubricMetric(name=args.name or "rubric"), args)


def _pairwise(metric: RubricMetric, args: Any) -> RubricMetric:
    """The pairwise twin of ``metric`` when ``--pairwise COLUMN`` is given."""
    from .metrics import PairwiseRubricMetric

    if not args.pairwise:
        return metric
    name = metric.name if metric.name.startswith("pairwise") else f"pairwise_{metric.name}"
    return PairwiseRubricMetric(
        name=name,
        rubric=metric.rubric,
        rubric_column=metric.rubric_column,
        generator=metric.generator,
        samples=metric.samples,
        template=metric.template,
        baseline_column=args.pairwise,
    )


def load_ipython_extension(ipython: Any) -> None:
    """Register the magics (called by ``%load_ext rubriclab``)."""
    ipython.register_magics(RubricMagics)
    cleanup = getattr(ipython, "input_transformers_cleanup", None)
    if cleanup is not None and _empty_rubric_cell not in cleanup:
        cleanup.append(_empty_rubric_cell)


def _inside_cwd(path: str, what: str, allow_outside: bool) -> Path:
    """A path from a cell, kept inside the working folder unless ``--allow-outside``."""
    from .files import PathOutsideError, resolve_inside

    try:
        return resolve_inside(
            Path(path).expanduser(),
            Path.cwd(),
            key=what,
            allow_outside=allow_outside,
            allow_hint="--allow-outside",
        )
    except PathOutsideError as exc:
        raise UsageError(str(exc)) from None
