"""Vertex AI's GenAI evaluation client (``client.evals``) over rubriclab, on any judge.

``from vertexai import Client, types`` becomes
``from rubriclab.compat.vertex.genai import Client, types``; ``Client(project=..., location=...)``
keeps working and judges with the session judge (``rl.set_judge`` / ``RUBRICLAB_JUDGE``), or
pass ``Client(judge="openai:gpt-4o-mini")``. Then, as in Vertex::

    data = client.evals.generate_rubrics(src=df, rubric_group_name="gq",
                                         predefined_spec_name=types.RubricMetric.GENERAL_QUALITY)
    ds = client.evals.run_inference(model="gemini-2.5-flash", src=data)   # or a function
    result = client.evals.evaluate(dataset=[ds, other_ds],
                                   metrics=[types.RubricMetric.GENERAL_QUALITY(rubric_group_name="gq")])
    result.show()

Where we differ, on purpose: prebuilt metrics are rubriclab's adaptive-rubric metrics with our
own prompt texts; a bare model name is asked on the judge's own endpoint; a failed call is an
error on its row (``error_message``), never a 0; with several candidates adaptive rubrics are
written once per prompt and shared; ``result.results`` holds rubriclab's full result per
candidate. Agent engines, server-side runs/sets/metrics and GCS/BigQuery raise
NotImplementedError naming what to use instead.

Inside: ``cases`` (data types), ``metricspec`` (metric types and configs), ``outcomes``
(result types), ``convert`` (datasets and rubric groups to rubriclab's), ``resolve`` (metrics
to rubriclab metrics), ``inference`` (``generate_rubrics``, ``run_inference``), ``engine``
(``evaluate``), ``tally`` (per-row results, summaries, win rates), ``evals`` and ``client``
(the surface), ``types`` (Vertex's ``types`` module).
"""

from __future__ import annotations

from . import types as types
from .client import AsyncClient, Client

__all__ = ["AsyncClient", "Client", "types"]
