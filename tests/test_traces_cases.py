"""Evaluating traces: one row per span or per trace, rubric metrics on runs, the tree view.

Judge calls go to the fake judge server on 127.0.0.1 (or the offline mock where only the row
layout matters), over the fixture traces: an OTLP/GenAI agent run with tool calls, a nested
LLM call and a failing tool, and the small example run shipped in the package.
"""

from __future__ import annotations

import json
import re
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import rubriclab as rl
from rubriclab.metrics import TemplateMetric
from rubriclab.testing import FakeJudgeServer
from rubriclab.traces import TREE_KEYS, Trace, example_trace, load_traces
from rubriclab.widgets.trace_view import trace_tree_html

FIXTURES = Path(__file__).parent / "fixtures" / "traces"
OTLP_FILE = FIXTURES / "agent_run_otlp.json"

SPAN_METRIC = TemplateMetric(name="step", prompt_template="Step {{ input_span.name }}")
TRACE_METRIC = TemplateMetric(
    name="run",
    prompt_template="Answer: {{ input_trace.final_answer }}",
    expected_variables=["input_trace"],
)


@pytest.fixture(scope="module")
def lisbon() -> Trace:
    return load_traces(OTLP_FILE)[0]


@pytest.fixture(scope="module")
def mock() -> rl.Judge:
    return rl.Judge("mock")


def _judge(server: FakeJudgeServer) -> rl.Judge:
    return rl.Judge(server.url, model="judge-model", max_retries=0, cache=False)


def _prompt(body: dict[str, Any]) -> str:
    return str(body["messages"][0]["content"])


# -- rows per span and per trace ----------------------------------------------------------------


def test_partition_span_gives_one_row_per_span_with_ids(lisbon: Trace, mock: rl.Judge) -> None:
    weather = example_trace()
    result = rl.evaluate([lisbon, weather], metrics=[SPAN_METRIC], judge=mock, partition="span")
    t = result.table
    assert len(t) == len(lisbon.spans) + len(weather.spans) == 12
    expected = [(tr.trace_id, s.span_id) for tr in (lisbon, weather) for s in tr.walk()]
    assert list(zip(t["trace_id"], t["span_id"], strict=True)) == expected
    assert list(t.index) == [f"{a}/{b}" for a, b in expected]
    first = t.iloc[0]
    assert (first["name"], first["kind"], first["depth"]) == (
        "invoke_agent travel_assistant",
        "AGENT",
        0,
    )
    assert pd.isna(first["parent_id"])
    assert list(t.columns[:3]) == ["name", "input_preview", "output_preview"]
    nested = t[t["depth"] == 2]
    assert nested["kind"].tolist() == ["LLM"]  # the LLM call made inside the search tool
    failed = t[t["status"] == "error"]
    assert failed["name"].tolist() == ["execute_tool search_web"]
    assert failed["output_preview"].iloc[0].startswith("error: TimeoutError")
    assert t["step/score"].notna().all()
    assert result.meta["partition"] == "span"


def test_partition_trace_gives_one_row_per_trace(lisbon: Trace, mock: rl.Judge) -> None:
    weather = example_trace()
    result = rl.evaluate([lisbon, weather], metrics=[TRACE_METRIC], judge=mock, partition="trace")
    t = result.table
    assert list(t.index) == [lisbon.trace_id, weather.trace_id]
    assert t["trace_id"].tolist() == [lisbon.trace_id, weather.trace_id]
    assert t["span_id"].isna().all()  # the whole run is judged, not one span
    assert t["spans"].tolist() == [8, 4]
    assert t["error_spans"].tolist() == [1, 0]
    assert t["name"].tolist() == ["invoke_agent travel_assistant", "invoke_agent weather_helper"]
    assert (
        t.loc[weather.trace_id, "input_preview"] == "Do I need an umbrella in Paris this afternoon?"
    )
    assert t.loc[lisbon.trace_id, "output_preview"].startswith("Pack light summer clothes")
    assert len(t.loc[lisbon.trace_id, "output_preview"]) <= 120  # a preview, not the text
    assert t["run/score"].notna().all()


def test_traces_are_detected_without_partition_and_judged_per_trace(mock: rl.Judge) -> None:
    result = rl.evaluate([example_trace()], metrics=[TRACE_METRIC], judge=mock)
    assert len(result.table) == 1
    assert result.meta["partition"] == "trace"


def test_a_trace_file_is_read_when_a_partition_is_given(mock: rl.Judge) -> None:
    result = rl.evaluate(str(OTLP_FILE), metrics=[SPAN_METRIC], judge=mock, partition="span")
    assert len(result.table) == 8


def test_openinference_traces_give_the_same_rows(lisbon: Trace, mock: rl.Judge) -> None:
    oi = load_traces(FIXTURES / "agent_run_openinference.json")[0]
    result = rl.evaluate(oi, metrics=[SPAN_METRIC], judge=mock, partition="span")
    assert result.table["kind"].tolist() == [s.kind for s in lisbon.walk()]
    assert result.table["depth"].tolist() == [lisbon.depth(s) for s in lisbon.walk()]


# -- clear errors before any call ------------------------------------------------------------------


def test_partition_and_expected_variable_must_agree(fake_judge: FakeJudgeServer) -> None:
    with pytest.raises(ValueError, match=r"binds 'input_span'.*pass partition='span'"):
        rl.evaluate(
            example_trace(), metrics=[SPAN_METRIC], judge=_judge(fake_judge), partition="trace"
        )
    with pytest.raises(
        ValueError, match=r"binds 'input_trace'.*expected_variables=\['input_span'\]"
    ):
        rl.evaluate(
            example_trace(), metrics=[TRACE_METRIC], judge=_judge(fake_judge), partition="span"
        )
    assert fake_judge.requests == []


@pytest.mark.parametrize(
    ("data", "partition", "error", "fragment"),
    [
        ("trace", "step", ValueError, "partition must be 'span' or 'trace'"),
        ("frame", "span", TypeError, "this is a DataFrame"),
        ("twice", "span", ValueError, "is given twice"),
    ],
)
def test_bad_trace_input_is_a_clear_error(
    mock: rl.Judge, data: str, partition: str, error: type[Exception], fragment: str
) -> None:
    trace = example_trace()
    value: Any = {
        "trace": trace,
        "frame": trace.to_dataframe(),
        "twice": [trace, trace],
    }[data]
    with pytest.raises(error, match=re.escape(fragment)):
        rl.evaluate(value, metrics=[SPAN_METRIC], judge=mock, partition=partition)


# -- rubric metrics over traces ---------------------------------------------------------------------


def _checklist_judge(body: dict[str, Any]) -> str:
    """Says YES when the judged response mentions an umbrella."""
    prompt = _prompt(body)
    response = re.search(r"<response>\n?(.*?)\n?</response>", prompt, re.S)
    text = response.group(1) if response else ""
    verdict = "YES" if "umbrella" in text.lower() else "NO"
    ids = list(
        body["response_format"]["json_schema"]["schema"]["properties"]["verdicts"]["properties"]
    )
    return json.dumps(
        {
            "verdicts": {i: {"reasoning": f"read: {text[:30]}", "verdict": verdict} for i in ids},
            "rationale": "checked the response",
        }
    )


def test_rubric_metric_judges_the_runs_question_and_final_answer(
    fake_judge: FakeJudgeServer,
) -> None:
    fake_judge.responder = _checklist_judge
    weather = example_trace()
    metric = rl.metrics.RubricMetric(
        name="umbrella",
        rubric=rl.Rubric.checklist(["Does the answer say whether to take an umbrella?"]),
    )
    result = rl.evaluate(weather, metrics=[metric], judge=_judge(fake_judge), partition="trace")
    (body,) = fake_judge.requests
    prompt = _prompt(body)
    assert "Do I need an umbrella in Paris this afternoon?" in prompt  # the run's question
    assert weather.final_answer is not None and weather.final_answer in prompt
    row = result.table.iloc[0]
    assert row["umbrella/score"] == 1.0
    assert row["umbrella/criteria"][0]["label"] == "YES"


def test_rubric_metric_per_span_judges_each_steps_input_and_output(
    fake_judge: FakeJudgeServer,
) -> None:
    fake_judge.responder = _checklist_judge
    weather = example_trace()
    metric = rl.metrics.RubricMetric(
        name="umbrella", rubric=rl.Rubric.checklist(["Does the output mention an umbrella?"])
    )
    result = rl.evaluate(weather, metrics=[metric], judge=_judge(fake_judge), partition="span")
    t = result.table.set_index("kind")
    # agent and final LLM say "take an umbrella"; the tool returns weather data; the first LLM
    # only asks for a tool call, judged as its requested call
    assert t["umbrella/score"].tolist() == [1.0, 0.0, 0.0, 1.0]
    prompts = [_prompt(b) for b in fake_judge.requests]
    assert any('calls get_weather({"city": "Paris"' in p for p in prompts)
    assert any('get_weather({"city": "Paris"' in p and "light rain" in p for p in prompts)


def test_pairwise_metric_on_traces_reports_the_missing_baseline_per_row(mock: rl.Judge) -> None:
    metric = rl.metrics.PairwiseRubricMetric(
        name="vs_baseline", rubric=rl.Rubric.checklist(["Is the answer grounded?"])
    )
    result = rl.evaluate(example_trace(), metrics=[metric], judge=mock, partition="trace")
    assert result.table["vs_baseline/error"].tolist() == ["no baseline response to compare against"]


# -- the trace tree column and its HTML ----------------------------------------------------------


def test_each_row_carries_its_trace_tree_as_plain_json(
    lisbon: Trace, mock: rl.Judge, tmp_path: Path
) -> None:
    result = rl.evaluate(lisbon, metrics=[SPAN_METRIC], judge=mock, partition="span")
    t = result.table
    tree = t["trace_tree"].iloc[3]
    assert [tuple(node) for node in tree] == [TREE_KEYS] * 8
    assert [n["span_id"] for n in tree] == [s.span_id for s in lisbon.walk()]
    assert [n["depth"] for n in tree] == [0, 1, 1, 1, 1, 1, 2, 1]
    assert t["span_id"].iloc[3] in {n["span_id"] for n in tree}
    assert json.loads(json.dumps(tree)) == tree
    for path in (tmp_path / "r.jsonl", tmp_path / "r.parquet"):
        back = rl.load_result(result.save(path))
        assert back.table["trace_tree"].tolist() == t["trace_tree"].tolist()
        assert back.table["span_id"].tolist() == t["span_id"].tolist()
        assert back.metric("step").kind == "template"


def test_results_over_traces_summarise_and_render_like_any_other(mock: rl.Judge) -> None:
    result = rl.evaluate(example_trace(), metrics=[SPAN_METRIC], judge=mock, partition="span")
    summary = result.summary.loc["step"]
    assert (summary["n"], summary["errors"], summary["kind"]) == (4, 0, "template")
    assert result.is_mock and "(MOCK judge)" in repr(result)
    assert result.table["step/rationale"].str.startswith("[mock judge]").all()
    html = result._repr_mimebundle_()["text/html"]
    assert "execute_tool get_weather" in html  # the span names show in the static table
    assert "Do I need an umbrella in Paris" in html


def _trace_named(names: list[str]) -> Trace:
    t0 = datetime(2025, 6, 12, 9, 0, tzinfo=timezone.utc)
    spans = [
        {
            "trace_id": "t1",
            "span_id": f"s{i}",
            "parent_id": f"s{i - 1}" if i else None,
            "name": name,
            "kind": "TOOL" if i else "AGENT",
            "start": (t0 + timedelta(seconds=i)).isoformat(),
            "end": (t0 + timedelta(seconds=i + 1)).isoformat(),
            "status": "error" if i == 1 else "ok",
        }
        for i, name in enumerate(names)
    ]
    return Trace.from_spans(spans)


def test_trace_tree_html_escapes_names_and_marks_the_judged_span(mock: rl.Judge) -> None:
    evil = '<img src=x onerror="alert(1)">'
    trace = _trace_named(["agent <b>run</b>", evil, "ok step"])
    result = rl.evaluate(trace, metrics=[SPAN_METRIC], judge=mock, partition="span")
    row = result.table.iloc[1]
    html = trace_tree_html(row["trace_tree"], highlight=row["span_id"])
    assert "<img" not in html and "<b>" not in html
    assert "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;" in html
    assert html.count("rl-span-judged") == 1
    judged = re.search(r'<li class="[^"]*rl-span-judged[^"]*"[^>]*>(.*?)</li>', html)
    assert judged is not None and "alert(1)" in judged.group(1) and "judged" in judged.group(1)
    assert 'data-span-id="s1"' in html
    assert html.index("agent &lt;b&gt;run") < html.index("onerror") < html.index("ok step")
    assert "padding-left:2.50em" in html  # depth 2 is indented twice


def test_trace_tree_html_without_a_judged_span_or_tree() -> None:
    tree = [
        {
            "span_id": "a",
            "parent_id": None,
            "name": "root",
            "kind": "AGENT",
            "status": "ok",
            "duration_ms": 1500.0,
            "depth": 0,
        }
    ]
    plain = trace_tree_html(tree)
    assert "rl-span-judged" not in plain and "1.50 s" in plain
    assert "(judged span zz is not in this tree)" in trace_tree_html(tree, highlight="zz")
    assert "no trace tree" in trace_tree_html(None)
    assert "no trace tree" in trace_tree_html([])
    frame_value = pd.Series([tree]).iloc[0]
    assert trace_tree_html(frame_value, highlight="a").count("rl-span-judged") == 1


def test_the_explanation_shows_the_trace_tree_with_the_judged_span(mock: rl.Judge) -> None:
    from rubriclab.widgets import Explanation

    evil = '<img src=x onerror="alert(1)">'
    trace = _trace_named(["agent run", evil, "ok step"])
    result = rl.evaluate(trace, metrics=[SPAN_METRIC], judge=mock, partition="span")
    view = Explanation(result, index=1)
    payload = view.case["trace"]
    assert payload["highlight"] == "s1"
    assert [s["name"] for s in payload["spans"]] == ["agent run", evil, "ok step"]
    assert [s["depth"] for s in payload["spans"]] == [0, 1, 2]
    assert "trace_tree" not in [f["name"] for f in view.case["fields"]]
    html = view.static_html()
    assert html.count("rl-span-judged") == 1
    assert "<img" not in html and "&lt;img src=x" in html
    # rows judged without traces have no tree
    plain = rl.evaluate(
        pd.DataFrame({"prompt": ["p"], "response": ["r"]}),
        [rl.metrics.RubricMetric(name="q", rubric=rl.Rubric.checklist(["A?"]))],
        judge=mock,
    )
    assert Explanation(plain).case["trace"] is None


# -- the data adapter on its own (no judge) ---------------------------------------------------------


def test_trace_cases_binds_each_rows_span_or_trace_for_templates(lisbon: Trace) -> None:
    from rubriclab.traces import trace_cases

    spans = trace_cases([lisbon], "span")
    assert len(spans.cases) == len(spans.table) == len(lisbon.spans)
    assert [c.id for c in spans.cases] == list(spans.table.index)
    assert [c.bound["input_span"] for c in spans.cases if c.bound] == lisbon.walk()
    assert spans.meta == {"partition": "span", "traces": [lisbon.trace_id]}

    runs = trace_cases(OTLP_FILE, "trace")
    (case,) = runs.cases
    assert case.bound is not None and case.bound["input_trace"].trace_id == lisbon.trace_id
    assert case.response == lisbon.final_answer  # rubric metrics judge the final answer
    assert runs.table.index.name == "trace_row"


def test_partition_follows_the_template_metrics_and_rubric_metrics_judge_either() -> None:
    from rubriclab.traces import check_partition, default_partition, is_traces

    rubric_metric = rl.metrics.RubricMetric(rubric=rl.Rubric.checklist(["Helpful?"]), name="h")
    assert default_partition([SPAN_METRIC]) == "span"
    assert default_partition([TRACE_METRIC]) == "trace"
    assert default_partition([SPAN_METRIC, TRACE_METRIC]) == "trace"
    assert default_partition([rubric_metric]) == "trace"
    check_partition([rubric_metric, SPAN_METRIC], "span")
    with pytest.raises(ValueError, match="partition='span'"):
        check_partition([SPAN_METRIC], "trace")
    assert is_traces(example_trace()) and is_traces([example_trace()])
    assert not is_traces([]) and not is_traces(pd.DataFrame({"a": [1]}))
