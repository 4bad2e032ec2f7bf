"""Vertex AI's rubric-evaluation API over rubriclab's engine: change the imports, keep the code.

``from vertexai.preview.evaluation import (...)`` becomes
``from rubriclab.compat.vertex import (...)``; the cloud set-up (``vertexai.init``, buckets)
goes away, and the judge is the session judge (``rl.set_judge(...)`` or ``RUBRICLAB_JUDGE``),
so any OpenAI-compatible model, a local one, or the offline mock can do the judging.

Where we differ from Vertex, on purpose:

* **Unreadable judge text is an error, not a 0.** Vertex scores a critique it cannot parse as
  0 (and a rubric it cannot parse as empty). Here the row's ``{metric}/score`` is None (NaN in
  the table) and ``{metric}/error`` says why; the raw text stays in ``{metric}/raw_outputs``.
  Means and win rates leave such rows out and count them as errors.
* **Pairwise order** is Vertex's by default: one order, Response A = baseline, Response B =
  candidate. ``AutoraterConfig(flip_enabled=True)`` asks each sample in both orders too: a
  winner stands only when both orders agree (else a tie, ``{metric}/swap_consistent`` False),
  and of two agreeing strengths the milder is kept (Vertex's service instead flips half of
  the samples).
* ``output_uri_prefix`` is a local folder; ``gs://`` prefixes warn and keep results in memory.
* ``evaluate(model="gemini-2.5-flash")`` sends that model name to the judge's own endpoint
  (a judge spec such as ``"openai:gpt-4o-mini"`` or a Python function works too).
* Predefined metrics use our own prompts (same formats, same ``rb_*`` names), and
  ``notebook_utils`` shows our widgets, which escape model text.
* ``metrics_table`` and ``summary_metrics`` have Vertex's columns, order and keys; a
  ``{metric}/error`` column (and ``{metric}/errors`` count) appears only when a row failed.
  Our other columns and statistics (``{metric}/criteria``, swap consistency, rates ...) are
  on ``eval_result.result``, a :class:`rubriclab.EvalResult`, for views, saving and calibration.
* Importing this package changes nothing global. With ``rl.Judge("mock")`` the Vertex layer
  teaches the mock its formats only for the calls it sends (:mod:`.mock`).

Inside: ``utils`` and ``notebook_utils`` are Vertex's modules of those names; ``config`` and
``metrics`` describe what is judged; ``calls`` (which judge, what pace), ``rows`` (row to
messages), ``generation`` (rubrics), ``critique`` (verdicts to columns) and ``task``
(``EvalTask``) run it; ``formats`` and ``classic`` read judge text; ``prompts`` holds the
predefined metrics' prompts; ``runnable`` runs agents; ``mock`` (and ``mockclassic``, for
classic metrics) is the offline mock's formats.
"""

from __future__ import annotations

from . import notebook_utils as notebook_utils
from . import utils as utils
from .config import AutoraterConfig, CustomOutputConfig, RubricGenerationConfig
from .metric_prompt_template import PairwiseMetricPromptTemplate, PointwiseMetricPromptTemplate
from .metric_prompt_template_examples import MetricPromptTemplateExamples
from .metrics import (
    CustomMetric,
    PairwiseMetric,
    PointwiseMetric,
    PredefinedRubricMetrics,
    RubricBasedMetric,
)
from .prompt_template import PromptTemplate
from .rouge import Rouge
from .task import EvalResult, EvalTask
from .trajectory import TrajectorySingleToolUse

__all__ = [
    "AutoraterConfig",
    "CustomMetric",
    "CustomOutputConfig",
    "EvalResult",
    "EvalTask",
    "MetricPromptTemplateExamples",
    "PairwiseMetric",
    "PairwiseMetricPromptTemplate",
    "PointwiseMetric",
    "PointwiseMetricPromptTemplate",
    "PredefinedRubricMetrics",
    "PromptTemplate",
    "Rouge",
    "RubricBasedMetric",
    "RubricGenerationConfig",
    "TrajectorySingleToolUse",
    "notebook_utils",
    "utils",
]
