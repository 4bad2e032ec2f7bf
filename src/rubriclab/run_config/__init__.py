"""The ``rubriclab run CONFIG`` file: data, column mapping, metrics, judge and output folder.

A config is small YAML or JSON that a CI job can keep next to its data. Every model forbids
unknown keys, so a typo (``metric:`` for ``metrics:``) is an error naming the key and where it
is, never a silently ignored setting. Relative paths are read from the config's own folder.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    field_validator,
)

from ..files import YamlError, load_yaml
from .errors import ConfigError, did_you_mean, explain

if TYPE_CHECKING:
    from ..judges import Judge
    from ..metrics import RubricMetric

__all__ = [
    "ConfigError",
    "JudgeConfig",
    "MetricConfig",
    "ModelConfig",
    "RunConfig",
    "check_key_env",
    "load_config",
]

_Strict = ConfigDict(extra="forbid")


class JudgeConfig(BaseModel):
    """Which judge to call. The key comes from the provider's variable or ``api_key_env``:
    a config file is shared and committed, so it never holds a key itself."""

    model_config = _Strict

    spec: str = Field(description="'mock', 'openai:MODEL', 'ollama:MODEL' or a base URL")
    model: str | None = None
    api_key_env: str | None = Field(
        default=None, description="name of the environment variable that holds the key"
    )
    temperature: float | None = None
    max_concurrency: int | None = Field(default=None, ge=1)
    timeout: float | None = Field(default=None, gt=0)
    max_retries: int | None = Field(default=None, ge=0)
    cache: bool | str | None = Field(
        default=None,
        description="true: the default SQLite file; a path: that file; false: no cache",
    )

    def build(
        self,
        base: Path = Path("."),
        *,
        allow_outside: bool = False,
        allow_env: Collection[str] = (),
        allow_key_for: Collection[str] = (),
    ) -> Judge:
        """The judge; ``allow_env`` names variables the user confirmed may be sent as a key
        although their names do not look like keys (``rubriclab run --allow-env NAME``);
        ``allow_key_for`` names hosts the user lets a key go to although no provider of that
        key lives there (``--allow-key-for HOST``)."""
        import os

        from ..judges import Judge

        options: dict[str, Any] = {}
        for name in ("model", "temperature", "max_concurrency", "timeout", "max_retries"):
            value = getattr(self, name)
            if value is not None:
                options[name] = value
        if self.api_key_env:
            check_key_env(self.api_key_env, allow_env)
            key = os.environ.get(self.api_key_env)
            if not key:
                raise ConfigError(
                    f"judge.api_key_env names {self.api_key_env!r}, which is not set: "
                    "export it before running"
                )
            host = self._key_destination(allow_key_for)
            options["api_key"] = key
            options["allow_key_for"] = (*allow_key_for, host) if host else tuple(allow_key_for)
        if isinstance(self.cache, str):
            # re-runs answer finished calls from here
            options["cache"] = _inside(base, self.cache, "judge.cache", allow_outside)
        elif self.cache is not None:
            options["cache"] = self.cache
        if self.spec.strip().startswith(("http://", "https://")) and not self.model:
            raise ConfigError(
                f"judge.spec is a URL ({self.spec}): add judge.model with the model name the "
                "endpoint serves, e.g. model: qwen2.5:7b"
            )
        try:
            return Judge(self.spec, **options)
        except ValueError as exc:
            raise ConfigError(f"judge: {as_config_keys(str(exc))}") from None

    def _key_destination(self, allow_key_for: Collection[str]) -> str | None:
        """Refuse before any call to send ``api_key_env``'s key where it does not belong: the
        config chose the variable and the URL, and a config is someone else's file. The host
        it goes to (for the judge's own warning), or None when the spec names no host."""
        from ..judges.specs import host_label, key_destination_error, parse_spec

        assert self.api_key_env is not None
        try:
            endpoint = parse_spec(self.spec, self.model, "-")
        except ValueError:
            return None  # the judge itself says what is wrong with the spec
        if endpoint.is_mock or not endpoint.base_url:
            return None
        error = key_destination_error(self.api_key_env, endpoint.base_url, allow_key_for)
        if error is not None:
            raise ConfigError(f"judge.api_key_env: {error}")
        return host_label(endpoint.base_url)


class MetricConfig(BaseModel):
    """One metric: a predefined one by ``use``, or a rubric (file or inline) of your own.

    ``pairwise: true`` (or a ``baseline`` column) judges the response against a baseline.
    ``judges:`` (two or more judge specs or mappings) makes a panel whose verdicts are combined
    by ``aggregate``. ``use: exact_match`` (``json_match``, ``rouge_1``, ``rouge_2``, ``rouge_l``,
    ``rouge_l_sum``, ``bleu``) compares the response with the ``reference`` column, no judge.
    """

    model_config = _Strict

    name: str | None = None
    use: str | None = Field(
        default=None, description="a predefined metric, e.g. text_quality or exact_match"
    )
    reference: str | None = Field(
        default=None, description="the reference column a computation metric compares with"
    )
    judges: list[JudgeConfig] | None = Field(
        default=None, description="a panel: two or more judges, each a spec or a mapping"
    )
    aggregate: Literal["majority", "median", "mean"] | None = None
    rubric: str | dict[str, Any] | list[Any] | None = Field(
        default=None, description="a rubric file (.yaml/.yml/.json) or the rubric inline"
    )
    rubric_column: str | None = None
    template: str | None = Field(default=None, description="a Jinja2 critique template file")
    pairwise: bool = False
    baseline: str | None = Field(default=None, description="the baseline response column")
    samples: int = Field(default=1, ge=1)

    @field_validator("name")
    @classmethod
    def _name_ok(cls, value: str | None) -> str | None:
        if value is not None and (not value.strip() or "/" in value):
            raise ValueError("a metric name must be non-empty and contain no '/'")
        return value

    @field_validator("judges", mode="before")
    @classmethod
    def _short_judges(cls, value: Any) -> Any:
        """``judges: [mock, openai:gpt-4o-mini]``: each string is short for ``{spec: ...}``."""
        if isinstance(value, list):
            return [{"spec": v} if isinstance(v, str) else v for v in value]
        return value

    def build(
        self,
        base: Path,
        index: int,
        *,
        allow_outside: bool = False,
        allow_env: Collection[str] = (),
        allow_key_for: Collection[str] = (),
    ) -> Any:
        """The metric this entry describes; files are read relative to ``base``."""
        from .. import metrics
        from ..metrics.computation import COMPUTATION

        where = f"metrics[{index}]"
        if self.use is not None and self.use in COMPUTATION:
            return self._computation(COMPUTATION[self.use], where)
        if self.use is not None and self.use in metrics.RAG:
            return self._rag(metrics.RAG[self.use], where)
        if self.reference is not None:
            raise ConfigError(
                f"{where}.reference: only computation metrics ({', '.join(COMPUTATION)}) "
                "compare with a reference column"
            )
        metric = self._judged(base, where, allow_outside)
        if self.judges is None:
            if self.aggregate is not None:
                raise ConfigError(f"{where}.aggregate: only a panel (judges: [...]) aggregates")
            return metric
        if len(self.judges) < 2:
            raise ConfigError(f"{where}.judges: a panel needs at least 2 judges")
        panel = []
        for i, judge in enumerate(self.judges):
            try:
                panel.append(
                    judge.build(
                        base,
                        allow_outside=allow_outside,
                        allow_env=allow_env,
                        allow_key_for=allow_key_for,
                    )
                )
            except ConfigError as exc:
                raise ConfigError(
                    str(exc)
                    .replace("judge.", f"{where}.judges[{i}].")
                    .replace("judge:", f"{where}.judges[{i}]:")
                ) from None
        if not isinstance(metric, metrics.RubricMetric) or isinstance(
            metric, metrics.PairwiseRubricMetric
        ):
            raise ConfigError(f"{where}.judges: a panel judges pointwise rubric metrics only")
        return metric.with_options(judges=panel, aggregate=self.aggregate or "majority")

    def _rubric_keys_given(self) -> list[str]:
        """The keys set that only a rubric-judged metric uses (a metric with its own prompt, or
        none, names them as mistakes)."""
        given = {
            "rubric": self.rubric is not None,
            "rubric_column": self.rubric_column is not None,
            "template": self.template is not None,
            "pairwise": self.pairwise,
            "baseline": self.baseline is not None,
            "samples": self.samples != 1,
            "judges": self.judges is not None,
            "aggregate": self.aggregate is not None,
        }
        return [key for key, set_ in given.items() if set_]

    def _rag(self, found: Any, where: str) -> Any:
        """A RAG metric: judged with its own prompt over the context column, no rubric."""
        wrong = self._rubric_keys_given() + (["reference"] if self.reference is not None else [])
        if wrong:
            raise ConfigError(
                f"{where}: {self.use} judges the context column with its own prompt, so "
                + ", ".join(f"{where}.{k}" for k in wrong)
                + " does not apply; keep 'use' and 'name'"
            )
        return found.with_options(name=self.name) if self.name is not None else found

    def _computation(self, found: Any, where: str) -> Any:
        """A computation metric: no judge, so judge-only keys are mistakes worth naming."""
        wrong = self._rubric_keys_given()
        if wrong:
            raise ConfigError(
                f"{where}: {self.use} is computed, not judged, so "
                + ", ".join(f"{where}.{k}" for k in wrong)
                + " does not apply; keep 'use', 'name' and 'reference'"
            )
        changes: dict[str, Any] = {}
        if self.name is not None:
            changes["name"] = self.name
        if self.reference is not None:
            changes["reference_column"] = self.reference
        return found.with_options(**changes) if changes else found

    def _judged(self, base: Path, where: str, allow_outside: bool) -> RubricMetric:
        from .. import metrics
        from ..metrics.computation import COMPUTATION
        from ..rubric import Rubric, RubricError

        sources = [k for k in ("use", "rubric", "rubric_column") if getattr(self, k) is not None]
        if len(sources) != 1:
            raise ConfigError(
                f"{where}: give exactly one of 'use' (a predefined metric), 'rubric' "
                f"(a file or inline rubric) or 'rubric_column'; got {sources or 'none'}"
            )
        pairwise = self.pairwise or self.baseline is not None
        options: dict[str, Any] = {"samples": self.samples}
        if self.template is not None:
            template = _inside(base, self.template, f"{where}.template", allow_outside)
            options["template"] = _read_text(template, f"{where}.template")
        if pairwise:
            options["baseline_column"] = self.baseline or "baseline_model_response"
        if self.use is not None:
            try:
                found = metrics.by_name(self.use)
            except KeyError:
                known = [*metrics.PREDEFINED, *COMPUTATION, *metrics.RAG]
                hint = did_you_mean(self.use, known)
                raise ConfigError(
                    f"{where}.use: no predefined metric {self.use!r}{hint}; choose one of: "
                    + ", ".join(sorted(known))
                ) from None
            if pairwise and found.kind != "pairwise":
                found = metrics.by_name(f"pairwise_{found.name}")
            name = self.name or found.name
            if pairwise:
                return metrics.PairwiseRubricMetric(name=name, generator=found.generator, **options)
            return found.with_options(name=name, **options)
        if self.rubric_column is not None:
            cls = metrics.PairwiseRubricMetric if pairwise else metrics.RubricMetric
            return cls(name=self.name or "rubric", rubric_column=self.rubric_column, **options)
        try:
            if isinstance(self.rubric, str) and "\n" in self.rubric:
                rubric = Rubric.from_yaml_text(self.rubric)  # a YAML block inline
            elif isinstance(self.rubric, str):
                path = _inside(base, self.rubric, f"{where}.rubric", allow_outside)
                # the error names the file beside the key (metrics[0].rubric (support.yaml): ...)
                rubric = Rubric.from_yaml_text(_read_text(path, f"{where}.rubric"))
            elif isinstance(self.rubric, list):
                rubric = Rubric.from_dict({"criteria": self.rubric})
            else:
                assert self.rubric is not None
                rubric = Rubric.from_dict(self.rubric)
        except ConfigError:
            raise
        except ValidationError as exc:
            inline = not isinstance(self.rubric, str) or "\n" in self.rubric
            prefix = f"{where}.rubric" if inline else ""
            told = explain(exc, Rubric, prefix=prefix)
            raise ConfigError(
                told if inline else f"{where}.rubric ({self.rubric}): {told}"
            ) from None
        except RubricError as exc:
            inline = not isinstance(self.rubric, str) or "\n" in self.rubric
            if inline:
                raise ConfigError(exc.retold(f"{where}.rubric")) from None
            raise ConfigError(f"{where}.rubric ({self.rubric}): {exc.retold('')}") from None
        except ValueError as exc:
            raise ConfigError(f"{where}.rubric: {exc}") from None
        name = self.name or rubric.name or "rubric"
        cls = metrics.PairwiseRubricMetric if pairwise else metrics.RubricMetric
        return cls(name=name, rubric=rubric, **options)


class ModelConfig(JudgeConfig):
    """A model that writes responses (``models:``): a judge spec used as a generator, with the
    judge's key rules; ``name`` names its runs (default: the spec)."""

    name: str | None = None


class RunConfig(BaseModel):
    """The whole run: what to judge, how, and where the results go.

    ``models:`` (and ``prompts:``, templates over the data's columns) make it generate first:
    one run per prompt and model, then a comparison (see ``run_config.matrix``).
    """

    model_config = _Strict

    data: str = Field(description="a CSV, JSONL/JSON or Parquet file")
    mapping: dict[str, str] = Field(
        default_factory=dict, description="canonical field -> your column, e.g. response: answer"
    )
    metrics: list[MetricConfig] = Field(
        min_length=1, description="predefined names, or mappings with a rubric"
    )
    judge: JudgeConfig | None = Field(
        default=None, description="a spec string or a mapping; default: RUBRICLAB_JUDGE"
    )
    output: str = "results"
    output_fields: str | list[str] = Field(
        default="all",
        description="what the results files keep: all, compact (no raw judge answers) "
        "or a list of metric fields",
    )
    output_format: Literal["jsonl", "jsonl.gz"] = Field(
        default="jsonl",
        description="the results file run streams: jsonl, or jsonl.gz (gzipped JSON Lines)",
    )
    title: str | None = None
    fail_under: float | None = None
    prompts: dict[str, str] | list[str] | None = Field(
        default=None,
        description="templates over the data's columns (Jinja2, sandboxed), by name or a list",
    )
    models: list[ModelConfig] | None = Field(
        default=None, description="models that write the responses: specs or mappings"
    )
    candidates: list[str] | None = Field(
        default=None, description="rubriclab arena: the data's response columns to rank"
    )
    arena_metric: str | None = Field(
        default=None,
        description="the pairwise metric the arena ranks with (default: general_quality)",
    )

    @field_validator("models", mode="before")
    @classmethod
    def _short_models(cls, value: Any) -> Any:
        """``models: [mock, openai:gpt-4o-mini]``: each string is short for ``{spec: ...}``."""
        if isinstance(value, list):
            return [{"spec": v} if isinstance(v, str) else v for v in value]
        return value

    def prompt_templates(self) -> dict[str, str] | None:
        """``prompts:`` by name (a list is named p1, p2 ...); names are checked."""
        from .matrix import check_name

        if self.prompts is None:
            return None
        named = (
            dict(self.prompts)
            if isinstance(self.prompts, dict)
            else {f"p{i}": t for i, t in enumerate(self.prompts, start=1)}
        )
        if not named:
            raise ConfigError("prompts: give at least one template")
        for name in named:
            check_name(name, f"prompts.{name}")
        return named

    def build_models(self, default_cache: str | None = None) -> list[tuple[str, Judge]]:
        """The generators of ``models:``, named; each through ``default_cache`` unless its own
        ``cache`` is set, so a re-run asks only what is new."""
        from .matrix import check_name

        out: list[tuple[str, Judge]] = []
        for i, entry in enumerate(self.models or []):
            where = f"models[{i}]"
            name = check_name(entry.name or _spec_name(entry), f"{where}.name")
            if default_cache is not None and entry.cache is None:
                entry = entry.model_copy(update={"cache": default_cache})
            try:
                judge = JudgeConfig.model_validate(entry.model_dump(exclude={"name"})).build(
                    self.base,
                    allow_outside=self._allow_outside or entry.cache == default_cache,
                    allow_env=self._allow_env,
                    allow_key_for=self._allow_key_for,
                )
            except ConfigError as exc:
                raise ConfigError(
                    str(exc).replace("judge.", f"{where}.").replace("judge:", f"{where}:")
                ) from None
            out.append((name, judge))
        names = [n for n, _ in out]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ConfigError(f"models: the name(s) {', '.join(dupes)} appear twice; add 'name'")
        return out

    @field_validator("output_fields")
    @classmethod
    def _known_output_fields(cls, value: str | list[str]) -> str | list[str]:
        """Refused when the config is read, not after an hour of judge calls."""
        from ..result.formats import check_output_fields

        try:
            check_output_fields(value)
        except ValueError as exc:  # the message names output_fields= already: say it once
            raise ValueError(str(exc).removeprefix("output_fields: ")) from None
        return value

    @field_validator("fail_under", mode="before")
    @classmethod
    def _fail_under_fraction(cls, value: Any) -> Any:
        """0.7, "70%" and 70 all read as 70%, as ``--fail-under`` and ``pass_mark`` do."""
        from ..scale import parse_fraction

        return None if value is None else parse_fraction(value, "fail_under")

    #: the folder relative paths are read from (the config file's folder)
    _base: Path = PrivateAttr(default=Path("."))
    #: paths may leave the config's folder only when the user says so (--allow-outside)
    _allow_outside: bool = PrivateAttr(default=False)
    #: variables that may be sent as a key although not named like one (--allow-env)
    _allow_env: frozenset[str] = PrivateAttr(default=frozenset())
    #: hosts a key may go to although no provider of it lives there (--allow-key-for)
    _allow_key_for: tuple[str, ...] = PrivateAttr(default=())

    @field_validator("metrics", mode="before")
    @classmethod
    def _short_metrics(cls, value: Any) -> Any:
        """``- text_quality`` is short for ``- use: text_quality``."""
        if isinstance(value, list):
            return [{"use": v} if isinstance(v, str) else v for v in value]
        return value

    @field_validator("judge", mode="before")
    @classmethod
    def _short_judge(cls, value: Any) -> Any:
        """``judge: mock`` is short for ``judge: {spec: mock}``."""
        return {"spec": value} if isinstance(value, str) else value

    @property
    def base(self) -> Path:
        return self._base

    def data_path(self) -> Path:
        return _resolve_file(_inside(self.base, self.data, "data", self._allow_outside), "data")

    def output_dir(self) -> Path:
        return _inside(self.base, self.output, "output", self._allow_outside)

    def build_metrics(self) -> list[Any]:
        built = []
        for i, entry in enumerate(self.metrics):
            built.append(
                entry.build(
                    self.base,
                    i,
                    allow_outside=self._allow_outside,
                    allow_env=self._allow_env,
                    allow_key_for=self._allow_key_for,
                )
            )
        names = [m.name for m in built]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ConfigError(
                f"metrics: the name(s) {', '.join(dupes)} appear twice; give each a 'name'"
            )
        return built

    @property
    def allowed_env(self) -> frozenset[str]:
        """Variables the user allowed as keys on the command line (``--allow-env``)."""
        return self._allow_env

    @property
    def allowed_key_hosts(self) -> tuple[str, ...]:
        """Hosts the user let a key go to on the command line (``--allow-key-for``)."""
        return self._allow_key_for

    def build_judge(self) -> Judge | None:
        if self.judge is None:
            return None
        return self.judge.build(
            self.base,
            allow_outside=self._allow_outside,
            allow_env=self._allow_env,
            allow_key_for=self._allow_key_for,
        )


def _spec_name(entry: JudgeConfig) -> str:
    """A model's default run name from its spec: 'openai:gpt-4o-mini' -> 'gpt-4o-mini'."""
    if entry.model:
        base = entry.model
    elif entry.spec.startswith(("http://", "https://")):
        base = entry.spec
    else:
        base = entry.spec.partition(":")[2] or entry.spec
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", base).strip("-.")[:64] or "model"


_KEY_ENV = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(_API_KEY|_TOKEN|_KEY)$", re.IGNORECASE)


def check_key_env(name: str, allow_env: Collection[str] = ()) -> None:
    """Refuse to send a variable as a key unless its name looks like one or the user allowed it.

    A run config is code someone else may have written: without this rule, a shared config
    could send any environment variable (a database password, a cloud token) as the bearer
    token to an endpoint of its choosing.
    """
    if _KEY_ENV.match(name) or name in allow_env:
        return
    raise ConfigError(
        f"judge.api_key_env names {name!r}, which does not look like an API key variable "
        "(*_API_KEY, *_TOKEN or *_KEY), so it is not sent; if you trust this config and mean "
        f"it, run again with --allow-env {name}"
    )


def load_config(
    path: str | Path,
    *,
    allow_outside: bool = False,
    allow_env: Collection[str] = (),
    allow_key_for: Collection[str] = (),
) -> RunConfig:
    """Read and validate a config file; errors name the file and the offending key.

    Paths in the config are read relative to its folder and must stay inside it, unless
    ``allow_outside`` (the CLI's ``--allow-outside``). A key named by ``judge.api_key_env``
    goes only to its provider's hosts, or to a host in ``allow_key_for`` ("host",
    "host:port" or a URL; the CLI's ``--allow-key-for``).
    """
    path = Path(path)
    text = _read_text(path, "config")
    try:
        raw = json.loads(text) if path.suffix == ".json" else load_yaml(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{path}: not valid JSON: line {exc.lineno}: {exc.msg}") from None
    except YamlError as exc:
        raise ConfigError(f"{path}: not valid YAML: {exc}") from None
    if not isinstance(raw, dict):
        raise ConfigError(f"{path}: a run config is a mapping with 'data' and 'metrics'")
    try:
        config = RunConfig.model_validate(raw)
    except ValidationError as exc:
        raise ConfigError(f"{path}: {explain(exc, RunConfig)}") from None
    config._base = path.parent
    config._allow_outside = allow_outside
    config._allow_env = frozenset(allow_env)
    if isinstance(allow_key_for, str):
        allow_key_for = [allow_key_for]
    config._allow_key_for = tuple(allow_key_for)
    return config


_PY_HINTS = (
    (re.compile(r"needs model='\.\.\.'"), "needs judge.model"),
    (re.compile(r"\(or pass api_key=\.\.\.\)"), "(or name another variable in judge.api_key_env)"),
    (re.compile(r"with model='\.\.\.'"), "with judge.model"),
    (re.compile(r", or use Judge\('mock'\) to run offline"), ", or use judge: mock to run offline"),
)


def as_config_keys(message: str) -> str:
    """A judge error written for Python callers, retold with the config's keys."""
    for pattern, replacement in _PY_HINTS:
        message = pattern.sub(replacement, message)
    return message


def _resolve_file(path: Path, what: str) -> Path:
    try:
        found = path.is_file()
    except OSError as exc:  # a name too long, a loop of links: one line, never a traceback
        text = str(path) if len(str(path)) <= 120 else str(path)[:80] + "…"
        raise ConfigError(f"{what}: {text!r} cannot be read ({exc.strerror or exc})") from None
    if not found:
        raise ConfigError(f"{what}: no file at {path}")
    return path


def _read_text(path: Path, what: str) -> str:
    try:
        return _resolve_file(path, what).read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ConfigError(f"{what}: {path} is not UTF-8 text") from None


def _inside(base: Path, path: str, key: str, allow_outside: bool) -> Path:
    """``path`` from the config, kept inside the config's folder (see :mod:`rubriclab.files`)."""
    from ..files import PathOutsideError, resolve_inside

    try:
        return resolve_inside(
            path, base, key=key, allow_outside=allow_outside, allow_hint="--allow-outside"
        )
    except PathOutsideError as exc:
        raise ConfigError(str(exc)) from None
