"""A run config that generates as well as judges: ``prompts:`` x ``models:`` (promptfoo's matrix).

Each prompt is a template over the data's columns, rendered in rubriclab's sandbox (a config
is someone else's file: its templates are hostile); each model is a judge spec used as a
generator, with the same key rules as the judge (``JudgeConfig``). A Python function may be a
model too, but only when named on the command line (``--model-fn NAME=module:function``),
never from the YAML. Every combination is one run, judged by the config's metrics. Model and
judge calls go through a cache file in the output folder by default, so adding a model to the
config makes only that model's calls (and its judging) on the next run.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

    from ..judges import Judge

__all__ = ["Combination", "combinations", "load_model_fn", "render_prompts"]

#: the default cache file (inside the output folder) when the config names none
CACHE_FILE = "cache.sqlite"
_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")


@dataclass(frozen=True)
class Combination:
    """One cell of the matrix: a prompt template and a model, and the run's name."""

    prompt: str | None  # the template's name (None: the data's own prompt column)
    template: str | None
    model: str
    generator: Judge | Callable[[str], Any]

    @property
    def name(self) -> str:
        return self.model if self.prompt is None else f"{self.prompt}__{self.model}"


def check_name(name: str, where: str) -> str:
    """Names become folder names: letters, digits, ``_ . -`` only (no path tricks)."""
    from .errors import ConfigError

    if not _NAME.match(name) or name in (".", ".."):
        raise ConfigError(
            f"{where}: {name!r} is not a usable name (1-64 letters, digits, '_', '.' or '-')"
        )
    return name


def load_model_fn(text: str) -> tuple[str, Callable[[str], Any]]:
    """``NAME=module:function`` from ``--model-fn``: the user's own code, named by the user."""
    from .errors import ConfigError

    name, sep, path = text.partition("=")
    module, colon, attr = path.partition(":")
    if not sep or not colon or not module or not attr:
        raise ConfigError(
            f"--model-fn {text!r}: give NAME=module:function, e.g. mine=my_pkg.models:answer"
        )
    check_name(name, "--model-fn")
    try:
        fn = getattr(importlib.import_module(module), attr)
    except (ImportError, AttributeError) as exc:
        raise ConfigError(f"--model-fn {text!r}: cannot load {path}: {exc}") from None
    if not callable(fn):
        raise ConfigError(f"--model-fn {text!r}: {path} is not a function")
    return name, fn


def combinations(
    prompts: Mapping[str, str] | None,
    models: Sequence[tuple[str, Judge | Callable[[str], Any]]],
) -> list[Combination]:
    """Every prompt with every model, prompts first (one run each)."""
    templates: list[tuple[str | None, str | None]] = (
        [(k, v) for k, v in prompts.items()] if prompts else [(None, None)]
    )
    return [Combination(p, t, m, g) for p, t in templates for m, g in models]


def render_prompts(frame: pd.DataFrame, template: str, name: str) -> list[str]:
    """The template rendered over each row's columns, in the sandbox; a row that cannot be
    rendered stops the run with its row and the reason (before any call)."""
    from ..templates import TemplateError, compile_template
    from .errors import ConfigError

    try:
        compiled = compile_template(template, name=f"prompts.{name}")
    except TemplateError as exc:
        raise ConfigError(f"prompts.{name}: {exc}") from None
    out = []
    for i, row in enumerate(frame.to_dict("records")):
        variables = {str(k): _plain(v) for k, v in row.items()}
        try:
            out.append(compiled.render(variables))
        except TemplateError as exc:
            raise ConfigError(f"prompts.{name}, data row {i}: {exc}") from None
    return out


def _plain(value: Any) -> Any:
    try:
        import math

        if isinstance(value, float) and math.isnan(value):
            return None
    except TypeError:
        pass
    return value


def default_cache(out_dir: Path) -> str:
    return str(out_dir / CACHE_FILE)


# -- running -------------------------------------------------------------------------------------


@dataclass
class MatrixRun:
    """Every combination's result, by run name, and the data they were made from."""

    results: dict[str, Any]
    combinations: list[Combination]
    data: pd.DataFrame
    prompt_column: str
    judge: Judge
    """The judge the runs were judged by (through the output folder's cache by default)."""


def run_matrix(
    config: Any,
    metrics: Sequence[Any],
    judge: Judge | None,
    out_dir: Path,
    model_fns: Sequence[tuple[str, Callable[[str], Any]]] = (),
) -> MatrixRun:
    """One run per prompt x model, each judged by ``metrics``; calls through the cache file in
    ``out_dir`` (unless the config names caches), so a re-run asks only what is new."""
    import warnings

    from ..data import to_frame
    from ..evaluation import evaluate
    from ..judges import get_judge
    from ..result import RowErrorWarning
    from .errors import ConfigError

    templates = config.prompt_templates()
    out_dir.mkdir(parents=True, exist_ok=True)
    cache = default_cache(out_dir)
    models: list[tuple[str, Any]] = [*config.build_models(cache), *model_fns]
    if not models:
        raise ConfigError(
            "prompts: nothing writes responses; add 'models:' (or --model-fn NAME=module:fn)"
        )
    names = [n for n, _ in models]
    if len(set(names)) != len(names):
        raise ConfigError(f"models: a name appears twice among {', '.join(names)}")
    judge = judge or get_judge()
    if config.judge is None or config.judge.cache is None:
        judge = judge.with_cache(cache)
    mapping = dict(config.mapping or {})
    prompt_col = mapping.get("prompt", "prompt")
    data = to_frame(str(config.data_path()))
    if templates is None and prompt_col not in data.columns:
        raise ConfigError(
            f"models: the data has no {prompt_col!r} column to send; add 'prompts:' templates "
            "over its columns, or map one with mapping: {prompt: COLUMN}"
        )
    rendered = {k: render_prompts(data, t, k) for k, t in (templates or {}).items()}
    combos = combinations(templates, models)
    results: dict[str, Any] = {}
    for combo in combos:
        frame = data.copy()
        if combo.prompt is not None:
            frame[prompt_col] = rendered[combo.prompt]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RowErrorWarning)  # the CLI tells them once
            result = evaluate(
                frame, list(metrics), judge=judge, model=combo.generator, mapping=mapping or None
            )
        result.meta.update(prompt=combo.prompt, model=combo.model, name=combo.name)
        results[combo.name] = result
    return MatrixRun(results, combos, data, prompt_col, judge)


def leaderboard(run: MatrixRun) -> pd.DataFrame:
    """One row per run: its prompt and model, then each metric's mean and pass rate."""
    import pandas as pd

    rows = []
    for combo in run.combinations:
        result = run.results[combo.name]
        row: dict[str, Any] = {"run": combo.name, "prompt": combo.prompt, "model": combo.model}
        for metric in result.metric_names:
            s = result.metric_summary(metric)
            row[f"{metric}/mean"] = s.mean
            row[f"{metric}/pass_rate"] = None if s.pass_rate is None else s.pass_rate.rate
        rows.append(row)
    return pd.DataFrame(rows)


def arena_frame(run: MatrixRun) -> tuple[pd.DataFrame, list[str]]:
    """The data with one response column per run, for the arena. The pairwise judge reads the
    data's prompt column when it has one, else the first template's rendering."""
    frame = run.data.copy()
    if run.prompt_column not in frame.columns:
        first = run.combinations[0].name
        frame[run.prompt_column] = run.results[first].table[run.prompt_column].tolist()
    names = [c.name for c in run.combinations]
    for name in names:
        frame[name] = run.results[name].table["response"].tolist()
    return frame, names


def arena_metric(config: Any) -> Any:
    """The arena's pairwise metric: ``arena_metric`` by name, else general quality."""
    from .. import metrics
    from .errors import ConfigError

    name = config.arena_metric or "general_quality"
    try:
        found = metrics.by_name(name if name.startswith("pairwise_") else f"pairwise_{name}")
    except KeyError:
        choices = sorted(k for k in metrics.PREDEFINED if not k.startswith("pairwise_"))
        raise ConfigError(
            f"arena_metric: no pairwise metric {name!r}; choose one of: {', '.join(choices)}"
        ) from None
    return found
