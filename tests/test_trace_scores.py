"""Scores back onto traces: OTLP JSON with ``gen_ai.evaluation.result`` span events, read back by
``load_traces``; MLflow feedback assessments in a local MLflow store, queried back through MLflow.

Judge calls go to the fake judge server on 127.0.0.1 (the offline mock where only the layout
matters).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import rubriclab as rl
from rubriclab.metrics import TemplateMetric
from rubriclab.result.trace_scores import EVENT_NAME
from rubriclab.testing import FakeJudgeServer
from rubriclab.traces import Span, Trace, example_trace, load_traces

FIXTURES = Path(__file__).parent / "fixtures" / "traces"
OTLP_FILE = FIXTURES / "agent_run_otlp.json"

STEP = TemplateMetric(name="step", prompt_template="Step {{ input_span.name }}")
HOSTILE = '<img src=x onerror=alert(1)> {{ 7*7 }} "quoted" \\n'


def _judge(server: FakeJudgeServer) -> rl.Judge:
    return rl.Judge(server.url, model="judge-model", max_retries=0, cache=False)


def _by_span_name(body: dict[str, Any]) -> str:
    """Scores a step by its name: tools 0.9, everything else 0.2; the reason is hostile text."""
    prompt = str(body["messages"][0]["content"])
    name = re.search(r"Step (.*)", prompt)
    step = name.group(1) if name else ""
    score = 0.9 if "weather" in step or "tram" in step else 0.2
    return json.dumps({"score": score, "rationale": f"{HOSTILE} for {step}"})


def _events(span: Span) -> list[dict[str, Any]]:
    return [dict(e.attributes) for e in span.events if e.name == EVENT_NAME]


def test_span_scores_land_on_the_spans_they_judged(
    fake_judge: FakeJudgeServer, tmp_path: Path
) -> None:
    fake_judge.responder = _by_span_name
    traces = load_traces(OTLP_FILE)
    result = rl.evaluate(traces, [STEP], judge=_judge(fake_judge), partition="span")
    out = result.write_trace_scores(traces, tmp_path / "scored.json")
    [back] = load_traces(out)
    [original] = traces
    assert [s.span_id for s in back.walk()] == [s.span_id for s in original.walk()]
    scores = result.table.set_index("span_id")["step/score"].to_dict()
    assert len(set(scores.values())) == 2  # a negative control: the scores differ by span
    for before, after in zip(original.walk(), back.walk(), strict=True):
        # the span itself is unchanged: kind, content, its own events
        assert (after.kind, after.input_text, after.output_text) == (
            before.kind,
            before.input_text,
            before.output_text,
        )
        assert [e.name for e in after.events][: len(before.events)] == [
            e.name for e in before.events
        ]
        [event] = _events(after)
        assert event["gen_ai.evaluation.name"] == "step"
        assert event["gen_ai.evaluation.score.value"] == scores[before.span_id]
        # model text is written as a string, never interpreted
        assert event["gen_ai.evaluation.explanation"] == f"{HOSTILE} for {before.name}"
        assert after.attributes["rubriclab.evaluation.step.score"] == scores[before.span_id]


def test_trace_scores_go_on_the_root_span_only(tmp_path: Path) -> None:
    weather = example_trace()
    metric = TemplateMetric(
        name="run",
        prompt_template="Answer: {{ input_trace.final_answer }}",
        expected_variables=["input_trace"],
    )
    result = rl.evaluate(weather, [metric], judge="mock", partition="trace")
    [back] = load_traces(result.write_trace_scores(weather, tmp_path / "t.json"))
    root = back.roots()[0]
    [event] = _events(root)
    assert event["gen_ai.evaluation.score.value"] == result.table["run/score"].iloc[0]
    assert all(not _events(s) for s in back.walk() if s.span_id != root.span_id)


def test_a_failed_judge_call_is_written_as_an_error_never_a_score(
    fake_judge: FakeJudgeServer, tmp_path: Path
) -> None:
    fake_judge.responder = lambda body: "not json at all"
    weather = example_trace()
    result = rl.evaluate(weather, [STEP], judge=_judge(fake_judge), partition="span")
    [back] = load_traces(result.write_trace_scores(weather, tmp_path / "e.json"))
    for span in back.walk():
        [event] = _events(span)
        assert event["error.type"] == "rubriclab.judge_error"
        assert "gen_ai.evaluation.score.value" not in event
        assert "rubriclab.evaluation.step.error" in span.attributes


def test_traces_that_were_not_judged_are_refused_by_id(tmp_path: Path) -> None:
    result = rl.evaluate(load_traces(OTLP_FILE), [STEP], judge="mock", partition="span")
    with pytest.raises(ValueError, match="not in the traces given"):
        result.write_trace_scores(example_trace(), tmp_path / "x.json")
    table = rl.evaluate(
        __import__("pandas").DataFrame({"prompt": ["a"], "response": ["b"]}),
        [rl.metrics.RubricMetric(name="q", rubric=rl.Rubric.checklist(["Ok?"]))],
        judge="mock",
    )
    with pytest.raises(ValueError, match="not judged over traces"):
        table.write_trace_scores(example_trace(), tmp_path / "y.json")


# -- MLflow assessments ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def mlflow_traces(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Any, list[Trace]]]:
    """An agent run traced by MLflow's own tracing API into a local sqlite store, read back with
    ``mlflow.search_traces`` and loaded as rubriclab traces."""
    mlflow = pytest.importorskip("mlflow")
    root = tmp_path_factory.mktemp("mlflow")
    mlflow.set_tracking_uri(f"sqlite:///{root / 'mlflow.db'}")
    mlflow.create_experiment("rubriclab-trace-scores", artifact_location=(root / "a").as_uri())
    mlflow.set_experiment("rubriclab-trace-scores")

    @mlflow.trace(span_type="TOOL")
    def get_weather(city: str) -> str:
        return f"light rain in {city}"

    @mlflow.trace(span_type="AGENT")
    def agent(question: str) -> str:
        return f"Take an umbrella: {get_weather('Paris')}"

    agent("Do I need an umbrella in Paris?")
    mlflow.flush_trace_async_logging()
    found = mlflow.search_traces(return_type="list")
    yield mlflow, load_traces(found)
    mlflow.set_experiment(experiment_id="0")  # the default experiment, as other tests expect
    mlflow.set_tracking_uri(None)


def test_scores_become_mlflow_assessments_on_the_trace(
    mlflow_traces: tuple[Any, list[Trace]],
) -> None:
    mlflow, traces = mlflow_traces
    metric = TemplateMetric(
        name="answer_quality",
        prompt_template="Answer: {{ input_trace.final_answer }}",
        expected_variables=["input_trace"],
    )
    result = rl.evaluate(traces, [metric], judge="mock", partition="trace")
    ids = result.log_feedback_to_mlflow(traces)
    assert len(ids) == 1
    stored = mlflow.get_trace(mlflow.search_traces(return_type="list")[0].info.trace_id)
    [assessment] = [a for a in stored.info.assessments if a.name == "answer_quality"]
    assert assessment.value == result.table["answer_quality/score"].iloc[0]
    assert assessment.rationale == result.table["answer_quality/rationale"].iloc[0]
    assert assessment.source.source_type == "LLM_JUDGE"


def test_span_scores_become_assessments_on_their_spans(
    mlflow_traces: tuple[Any, list[Trace]],
) -> None:
    mlflow, traces = mlflow_traces
    result = rl.evaluate(traces, [STEP], judge="mock", partition="span")
    ids = result.log_feedback_to_mlflow(traces)
    assert len(ids) == len(traces[0].spans)
    stored = mlflow.get_trace(mlflow.search_traces(return_type="list")[0].info.trace_id)
    on_spans = {a.span_id: a.value for a in stored.info.assessments if a.name == "step"}
    expected = result.table.set_index("span_id")["step/score"].to_dict()
    assert on_spans == expected


def test_traces_not_from_mlflow_are_refused(tmp_path: Path) -> None:
    pytest.importorskip("mlflow")
    weather = example_trace()
    result = rl.evaluate(weather, [STEP], judge="mock", partition="span")
    with pytest.raises(ValueError, match="none of these traces came from MLflow"):
        result.log_feedback_to_mlflow(weather)


# -- a copy of the original OTLP document -------------------------------------------------------

EXAMPLE_OTLP = Path(rl.__file__).parent / "examples" / "agent_trace_otlp.json"
_CAMEL = re.compile(r"(?<=[a-z])([A-Z])")


def _snake_keys(value: Any) -> Any:
    """An OTLP JSON document with snake_case keys (``resource_spans``, ``string_value``), as some
    exporters write it."""
    if isinstance(value, list):
        return [_snake_keys(v) for v in value]
    if isinstance(value, dict):
        return {_CAMEL.sub(r"_\1", k).lower(): _snake_keys(v) for k, v in value.items()}
    return value


def _without_scores(value: Any) -> Any:
    """The document minus what scoring adds: evaluation events and rubriclab.evaluation.*
    attributes (on spans only; resources and scopes must come back untouched)."""
    if isinstance(value, list):
        return [_without_scores(v) for v in value]
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            if key == "events":
                kept = [e for e in item if e.get("name") != EVENT_NAME]
                if not kept and len(kept) < len(item):
                    continue  # a span without events gained the key for its scores only
                item = kept
            if key == "attributes" and ("spanId" in value or "span_id" in value):
                item = [kv for kv in item if not kv["key"].startswith("rubriclab.evaluation.")]
            out[key] = _without_scores(item)
        return out
    return value


def _evaluated_span_ids(document: dict[str, Any]) -> set[str]:
    spans = [
        span
        for rs in document.get("resourceSpans", document.get("resource_spans", []))
        for ss in rs.get("scopeSpans", rs.get("scope_spans", []))
        for span in ss["spans"]
    ]
    return {
        span.get("spanId", span.get("span_id"))
        for span in spans
        if any(e.get("name") == EVENT_NAME for e in span.get("events", []))
    }


def _trace_metric() -> TemplateMetric:
    return TemplateMetric(
        name="run",
        prompt_template="Answer: {{ input_trace.final_answer }}",
        expected_variables=["input_trace"],
    )


@pytest.mark.parametrize("keys", ["camelCase", "snake_case"])
def test_the_scored_file_is_the_original_document_plus_the_events(
    tmp_path: Path, keys: str
) -> None:
    document = json.loads(OTLP_FILE.read_text("utf-8"))
    if keys == "snake_case":
        document = _snake_keys(document)
    source = tmp_path / "run.json"
    source.write_text(json.dumps(document), "utf-8")
    result = rl.evaluate(load_traces(source), [_trace_metric()], judge="mock", partition="trace")
    out = result.write_trace_scores(source, tmp_path / "scored.json")
    scored = json.loads(out.read_text("utf-8"))
    # resource (service.name ...), scope, every span field: as they came
    assert _without_scores(scored) == document
    [back] = load_traces(out)
    root = back.roots()[0]
    assert _evaluated_span_ids(scored) == {root.span_id}
    [event] = _events(root)
    assert event["gen_ai.evaluation.name"] == "run"
    assert event["gen_ai.evaluation.score.value"] == result.table["run/score"].iloc[0]
    assert all(not _events(s) for s in back.walk() if s is not root)


def test_json_lines_stay_json_lines_and_a_rerun_replaces_its_events(tmp_path: Path) -> None:
    documents = [
        json.loads(OTLP_FILE.read_text("utf-8")),
        json.loads(EXAMPLE_OTLP.read_text("utf-8")),
    ]
    source = tmp_path / "runs.jsonl"
    source.write_text("".join(json.dumps(d) + "\n" for d in documents), "utf-8")
    traces = load_traces(source)
    assert len(traces) == 2
    result = rl.evaluate(traces, [STEP], judge="mock", partition="span")
    out = result.write_trace_scores(source, tmp_path / "scored.jsonl")
    lines = out.read_text("utf-8").splitlines()
    assert len(lines) == 2
    assert [_without_scores(json.loads(line)) for line in lines] == documents
    # every span was judged, each once; the reader sees the events on their spans
    scores = result.table.set_index("span_id")["step/score"].to_dict()
    for trace in load_traces(out):
        for span in trace.walk():
            [event] = _events(span)
            assert event["gen_ai.evaluation.score.value"] == scores[span.span_id]
    # scoring the scored file again replaces the metric's events instead of adding copies
    again = result.write_trace_scores(out, tmp_path / "again.jsonl")
    assert again.read_text("utf-8") == out.read_text("utf-8")


def test_an_already_parsed_export_is_copied_too(tmp_path: Path) -> None:
    document = json.loads(OTLP_FILE.read_text("utf-8"))
    result = rl.evaluate(document, [_trace_metric()], judge="mock", partition="trace")
    scored = json.loads(result.write_trace_scores(document, tmp_path / "d.json").read_text("utf-8"))
    assert _without_scores(scored) == document
    assert "events" not in str(_without_scores(scored)["resourceSpans"][0]["resource"])


# -- the trace view shows the scores on the spans they judged -----------------------------------


def test_the_explanation_puts_each_rows_scores_on_its_span(
    fake_judge: FakeJudgeServer, tmp_path: Path
) -> None:
    from rubriclab.widgets import Explanation

    fake_judge.responder = _by_span_name
    traces = load_traces(OTLP_FILE)
    result = rl.evaluate(traces, [STEP], judge=_judge(fake_judge), partition="span")
    view = Explanation(result, index=0)
    expected = result.table.set_index("span_id")["step/score"].to_dict()
    spans = view.case["trace"]["spans"]
    # every span of the trace carries its own row's score, not only the row on show
    assert {s["span_id"]: [c["score"] for c in s["scores"]] for s in spans} == {
        k: [v] for k, v in expected.items()
    }
    why = spans[0]["scores"][0]["explanation"]
    assert why.startswith(HOSTILE)
    html = view.static_html()
    assert "<img src=x" not in html and "&lt;img src=x onerror=alert(1)&gt;" in html
    assert html.count('class="rl-span-score"') == len(spans)


def test_a_trace_rows_scores_go_on_the_root_and_a_files_events_are_shown(tmp_path: Path) -> None:
    from rubriclab.widgets import Explanation

    result = rl.evaluate(load_traces(OTLP_FILE), [_trace_metric()], judge="mock", partition="trace")
    [root, *rest] = Explanation(result).case["trace"]["spans"]
    assert [s["metric"] for s in root["scores"]] == ["run"]
    assert all(not s["scores"] for s in rest)
    # judged again over the scored file: the file's earlier scores show beside the new ones
    scored = result.write_trace_scores(OTLP_FILE, tmp_path / "scored.json")
    step = rl.evaluate(load_traces(scored), [STEP], judge="mock", partition="span")
    [root, *rest] = Explanation(step).case["trace"]["spans"]
    assert [(s["metric"], s.get("from_trace", False)) for s in root["scores"]] == [
        ("step", False),
        ("run", True),
    ]
    assert root["scores"][1]["score"] == result.table["run/score"].iloc[0]
    assert all([s["metric"] for s in span["scores"]] == ["step"] for span in rest)
    # a fresh trace (no events) shows only the result's own scores: the control
    fresh = rl.evaluate(load_traces(OTLP_FILE), [STEP], judge="mock", partition="span")
    [root, *_] = Explanation(fresh).case["trace"]["spans"]
    assert [s["metric"] for s in root["scores"]] == ["step"]
