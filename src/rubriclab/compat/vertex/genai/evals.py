"""``client.evals`` (sync) and ``client.aio.evals`` (async): Vertex's method names and
arguments, over :mod:`.engine`. What needs Vertex's servers raises NotImplementedError naming
what to use instead."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ....judges.sync import run_sync
from . import engine, inference
from .cases import EvaluationDataset
from .metricspec import EvalRunInferenceConfig, EvaluateMethodConfig, PrebuiltMetric
from .outcomes import EvaluationResult

if TYPE_CHECKING:
    from ....judges import Judge

__all__ = ["SERVER_SIDE", "AsyncEvals", "Evals"]

_RUNS = (
    "evaluation runs live on Vertex's servers; run client.evals.evaluate(...) locally and keep "
    "the result (result.results[0].save(path))"
)
_SETS = (
    "evaluation sets and items live on Vertex's servers; keep your cases in a DataFrame or a "
    "local JSONL file and pass it to client.evals.evaluate"
)
_METRICS = (
    "registered metrics live on Vertex's servers; describe the metric in code "
    "(types.RubricMetric.<NAME>, types.Metric(custom_function=...))"
)
_EXPERIMENTS = "evaluation experiments live on Vertex's servers; save results locally instead"
#: Vertex's evals methods that need its servers, and what to use instead
SERVER_SIDE: dict[str, str] = {
    "batch_evaluate": "batch evaluation runs on Vertex's servers; use client.evals.evaluate "
    "(large files: rl.evaluate(path, metrics, output=...) streams them)",
    "evaluate_instances": "evaluate_instances calls Vertex's evaluation service directly; use "
    "client.evals.evaluate",
    "create_evaluation_run": _RUNS,
    "get_evaluation_run": _RUNS,
    "create_evaluation_set": _SETS,
    "get_evaluation_set": _SETS,
    "create_evaluation_item": _SETS,
    "get_evaluation_item": _SETS,
    "create_evaluation_metric": _METRICS,
    "get_evaluation_metric": _METRICS,
    "list_evaluation_metrics": _METRICS,
    "delete_evaluation_metric": _METRICS,
    "create_evaluation_experiment": _EXPERIMENTS,
    "get_evaluation_experiment": _EXPERIMENTS,
    "list_evaluation_experiments": _EXPERIMENTS,
    "delete_evaluation_experiment": _EXPERIMENTS,
    "update_evaluation_experiment": _EXPERIMENTS,
    "generate_conversation_scenarios": "conversation scenarios are generated for Vertex agent "
    "engines; write the scenarios as rows of a DataFrame",
    "generate_loss_clusters": "loss analysis runs on Vertex's servers; use "
    "result.results[0].failure_clusters(metric) where available, or rl.compare",
}


def _server_side(name: str) -> Callable[..., Any]:
    def refuse(*_args: Any, **_kwargs: Any) -> Any:
        raise NotImplementedError(
            f"client.evals.{name} is not offered by rubriclab's Vertex client: {SERVER_SIDE[name]}"
        )

    return refuse


class AsyncEvals:
    """``client.aio.evals``: the same methods, awaitable."""

    def __init__(self, judge: Judge | str | None) -> None:
        self._judge = judge

    async def generate_rubrics(
        self,
        *,
        src: Any,
        rubric_group_name: str,
        prompt_template: str | None = None,
        generator_model_config: Mapping[str, Any] | None = None,
        rubric_content_type: Any = None,
        rubric_type_ontology: Sequence[str] | None = None,
        predefined_spec_name: str | PrebuiltMetric | None = None,
        metric_spec_parameters: Mapping[str, Any] | None = None,
        metric: Any = None,
        config: Any = None,
    ) -> EvaluationDataset:
        """Rubrics per prompt, under ``rubric_groups[rubric_group_name]``.

        ``predefined_spec_name`` (``types.RubricMetric.GENERAL_QUALITY`` or
        ``"general_quality_v1"``) uses our rubric writer for that metric;
        ``metric_spec_parameters={"guidelines": [...]}`` adds guidelines to it.
        ``prompt_template`` (``{prompt}``) asks your own prompt; the reply is read as Vertex's
        ``{"questions": [...]}`` JSON (``generator_model_config={"autorater_model": ...}``
        picks the model). ``rubric_content_type`` and ``rubric_type_ontology`` are accepted and
        not used. A row whose generation fails has no rubrics and says why in
        ``rubric_generation_error``.
        """
        return await inference.agenerate_rubrics(
            src,
            rubric_group_name,
            judge=self._judge,
            prompt_template=prompt_template,
            generator_model_config=generator_model_config,
            predefined_spec_name=predefined_spec_name,
            metric_spec_parameters=metric_spec_parameters,
            metric=metric,
        )

    async def run_inference(
        self,
        *,
        src: Any,
        model: Judge | str | Callable[[str], Any] | None = None,
        agent: Any = None,
        location: str | None = None,
        config: EvalRunInferenceConfig | Mapping[str, Any] | None = None,
    ) -> EvaluationDataset:
        """Responses for every prompt. ``model``: a bare model name (asked on the client's
        judge endpoint, e.g. Gemini's OpenAI-compatible one), a judge spec
        (``"openai:gpt-4o-mini"``) or a Python function of the prompt. A failed row keeps its
        error in ``response_error``."""
        return await inference.arun_inference(
            src, model, judge=self._judge, agent=agent, config=config
        )

    async def evaluate(
        self,
        *,
        dataset: Any,
        metrics: Sequence[Any] | None = None,
        location: str | None = None,
        config: EvaluateMethodConfig | Mapping[str, Any] | None = None,
        **kwargs: Any,
    ) -> EvaluationResult:
        """Judge one dataset or a list (one per candidate: win rates and ties) with
        ``metrics`` (default ``[types.RubricMetric.GENERAL_QUALITY]``: adaptive rubrics)."""
        unknown = sorted(set(kwargs) - {"agent_info"})
        if unknown:
            raise TypeError(f"evaluate() got unexpected argument(s): {', '.join(unknown)}")
        return await engine.aevaluate(
            dataset, metrics, judge=self._judge, config=config, agent_info=kwargs.get("agent_info")
        )

    def __getattr__(self, name: str) -> Any:
        if name in SERVER_SIDE:
            return _server_side(name)
        raise AttributeError(f"client.aio.evals has no method {name!r}")


class Evals:
    """``client.evals``: generate_rubrics, run_inference and evaluate (see :class:`AsyncEvals`)."""

    def __init__(self, judge: Judge | str | None) -> None:
        self._aio = AsyncEvals(judge)

    def generate_rubrics(self, **kwargs: Any) -> EvaluationDataset:
        """Rubrics per prompt (see :meth:`AsyncEvals.generate_rubrics`)."""
        return run_sync(self._aio.generate_rubrics(**kwargs))

    def run_inference(self, **kwargs: Any) -> EvaluationDataset:
        """Responses per prompt (see :meth:`AsyncEvals.run_inference`)."""
        return run_sync(self._aio.run_inference(**kwargs))

    def evaluate(self, **kwargs: Any) -> EvaluationResult:
        """Judge the dataset(s) (see :meth:`AsyncEvals.evaluate`)."""
        return run_sync(self._aio.evaluate(**kwargs))

    def __getattr__(self, name: str) -> Any:
        if name in SERVER_SIDE:
            return _server_side(name)
        raise AttributeError(f"client.evals has no method {name!r}")
