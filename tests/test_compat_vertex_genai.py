"""Issue 32: the adaptive-rubric workflow of Vertex's GenAI client over real HTTP (the fake
judge server) and on the mock: rubric groups, shared rubrics across candidates, row errors,
async, guidelines, custom rubric prompts and the views."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import rubriclab as rl
from rubriclab.compat.vertex.genai import Client, types
from rubriclab.result import RowErrorWarning
from rubriclab.testing import FakeJudgeServer, default_responder

PROMPTS = ["Explain technical debt with a garden analogy.", "How many socks for a matching pair?"]


def _is_generation(body: dict[str, Any]) -> bool:
    fmt = body.get("response_format") or {}
    return str(fmt.get("json_schema", {}).get("name", "")).endswith("_rubric")


def _user_text(body: dict[str, Any]) -> str:
    parts = []
    for m in body.get("messages") or []:
        c = m.get("content")
        parts.append(c if isinstance(c, str) else json.dumps(c))
    return "\n".join(parts)


@pytest.fixture
def client(fake_judge: FakeJudgeServer) -> Client:
    return Client(judge=rl.Judge(fake_judge.url, model="judge-model"))


def test_generate_rubrics_then_judge_with_the_group_over_http(
    client: Client, fake_judge: FakeJudgeServer
) -> None:
    """The rubric group written by generate_rubrics is what evaluate judges with: every
    verdict's rubric text is one of that case's rubrics, and no rubric is written again."""
    data = client.evals.generate_rubrics(
        src=pd.DataFrame({"prompt": PROMPTS}),
        rubric_group_name="general_quality_rubrics",
        predefined_spec_name=types.RubricMetric.GENERAL_QUALITY,
    )
    df = data.eval_dataset_df
    assert df is not None
    groups = df["rubric_groups"].tolist()
    assert all(isinstance(g["general_quality_rubrics"][0], types.Rubric) for g in groups)
    assert df["rubric_generation_error"].isna().all()
    generated = sum(_is_generation(r) for r in fake_judge.requests)
    assert generated == len(PROMPTS)

    answers = client.evals.run_inference(model=lambda p: f"answer: {p}", src=data)
    result = client.evals.evaluate(
        dataset=answers,
        metrics=[types.RubricMetric.GENERAL_QUALITY(rubric_group_name="general_quality_rubrics")],
    )
    assert sum(_is_generation(r) for r in fake_judge.requests) == generated  # none written again
    assert {r["model"] for r in fake_judge.requests} == {"judge-model"}
    for i, case in enumerate(result.eval_case_results or []):
        res = (case.response_candidate_results or [])[0].metric_results["general_quality_v1"]  # type: ignore[index]
        texts = {r.text for r in groups[i]["general_quality_rubrics"]}
        assert (
            res.rubric_verdicts and {v.evaluated_rubric.text for v in res.rubric_verdicts} == texts
        )  # type: ignore[union-attr]
        assert all(isinstance(v.verdict, bool) for v in res.rubric_verdicts)
        assert res.score is not None and 0.0 <= res.score <= 1.0
    critiques = [r for r in fake_judge.requests if not _is_generation(r)]
    first_rubric = groups[0]["general_quality_rubrics"][0].text
    assert any(first_rubric in _user_text(r) for r in critiques)


def test_adaptive_rubrics_are_written_once_and_shared_by_candidates(
    fake_judge: FakeJudgeServer,
) -> None:
    """Two candidates, default metric (GENERAL_QUALITY, adaptive): one rubric per prompt,
    the same for both, even from a judge that writes a different rubric at every call.
    Control: evaluating each candidate on its own gives them different rubrics."""
    written = [0]

    def respond(body: dict[str, Any]) -> Any:
        if _is_generation(body):
            written[0] += 1
            return json.dumps({"questions": [{"question": f"Check number {written[0]}?"}]})
        return default_responder(body)

    fake_judge.responder = respond
    client = Client(judge=rl.Judge(fake_judge.url, model="judge-model", cache=False))
    a = types.EvaluationDataset(
        eval_dataset_df=pd.DataFrame({"prompt": PROMPTS, "response": ["short", "two"]}),
        candidate_name="a",
    )
    b = types.EvaluationDataset(
        eval_dataset_df=pd.DataFrame({"prompt": PROMPTS, "response": ["a longer answer", "3"]}),
        candidate_name="b",
    )

    def rubric_texts(result: types.EvaluationResult, k: int) -> list[list[str]]:
        return [
            [
                v.evaluated_rubric.text  # type: ignore[union-attr]
                for v in (case.response_candidate_results or [])[k]
                .metric_results["general_quality_v1"]  # type: ignore[index]
                .rubric_verdicts
                or []
            ]
            for case in result.eval_case_results or []
        ]

    result = client.evals.evaluate(dataset=[a, b])
    assert written[0] == len(PROMPTS)
    assert rubric_texts(result, 0) == rubric_texts(result, 1)
    stats = (result.win_rates or {})["general_quality_v1"]
    assert sum(stats.win_rates or []) + (stats.tie_rate or 0) == pytest.approx(1.0)
    assert result.metadata and result.metadata.candidate_names == ["a", "b"]

    alone_a = client.evals.evaluate(dataset=a)
    alone_b = client.evals.evaluate(dataset=b)
    assert written[0] == 3 * len(PROMPTS)
    assert rubric_texts(alone_a, 0) != rubric_texts(alone_b, 0)


def test_failed_rubric_generation_is_that_rows_error(
    client: Client, fake_judge: FakeJudgeServer
) -> None:
    """A prompt whose rubric cannot be read: empty group, the reason on the row, and evaluate
    reports an error for it (never a 0), while the other row is judged."""

    def respond(body: dict[str, Any]) -> Any:
        if _is_generation(body) and "socks" in _user_text(body):
            return "I would rather not."
        return default_responder(body)

    fake_judge.responder = respond
    data = client.evals.generate_rubrics(
        src=pd.DataFrame({"prompt": PROMPTS, "response": ["r1", "r2"]}),
        rubric_group_name="g",
        predefined_spec_name="general_quality_v1",
    )
    df = data.eval_dataset_df
    assert df is not None
    assert df["rubric_groups"][1]["g"] == [] and df["rubric_generation_error"][1]
    with pytest.warns(RowErrorWarning, match="1 of 2 rows failed"):
        result = client.evals.evaluate(
            dataset=data, metrics=[types.RubricMetric.GENERAL_QUALITY(rubric_group_name="g")]
        )
    cases = result.eval_case_results or []
    bad = (cases[1].response_candidate_results or [])[0].metric_results["general_quality_v1"]  # type: ignore[index]
    good = (cases[0].response_candidate_results or [])[0].metric_results["general_quality_v1"]  # type: ignore[index]
    assert bad.score is None and "no rubrics in group 'g'" in (bad.error_message or "")
    assert good.score is not None and good.error_message is None
    summary = (result.summary_metrics or [])[0]
    assert (summary.num_cases_valid, summary.num_cases_error) == (1, 1)
    assert summary.mean_score == good.score  # the failed row is left out, not a 0


def test_failed_judge_call_is_that_rows_error(client: Client, fake_judge: FakeJudgeServer) -> None:
    """A critique call that fails (401) is an error on its row; the run goes on."""
    from rubriclab.testing import ServerReply

    def respond(body: dict[str, Any]) -> Any:
        if not _is_generation(body) and "socks" in _user_text(body):
            return ServerReply(status=401, body={"error": {"message": "bad key"}})
        return default_responder(body)

    fake_judge.responder = respond
    df = pd.DataFrame({"prompt": PROMPTS, "response": ["r1", "r2"]})
    with pytest.warns(RowErrorWarning, match="1 of 2 rows failed"):
        result = client.evals.evaluate(dataset=df, metrics=[types.RubricMetric.TEXT_QUALITY])
    rows = [
        (c.response_candidate_results or [])[0].metric_results["text_quality_v1"]  # type: ignore[index]
        for c in result.eval_case_results or []
    ]
    assert rows[0].score is not None
    assert rows[1].score is None and "401" in (rows[1].error_message or "")


def test_async_client(fake_judge: FakeJudgeServer) -> None:
    """``client.aio.evals`` gives the same result as ``client.evals``."""
    client = Client(judge=rl.Judge(fake_judge.url, model="judge-model"))
    df = pd.DataFrame({"prompt": PROMPTS})

    async def run() -> types.EvaluationResult:
        ds = await client.aio.evals.run_inference(model=lambda p: p.upper(), src=df)
        return await client.aio.evals.evaluate(
            dataset=ds, metrics=[types.RubricMetric.INSTRUCTION_FOLLOWING]
        )

    result = asyncio.run(run())
    sync = client.evals.evaluate(
        dataset=client.evals.run_inference(model=lambda p: p.upper(), src=df),
        metrics=[types.RubricMetric.INSTRUCTION_FOLLOWING],
    )
    assert result.summary_metrics == sync.summary_metrics
    with pytest.raises(NotImplementedError, match="servers"):
        asyncio.run(client.aio.evals.create_evaluation_run())


def test_guidelines_reach_the_rubric_prompt(client: Client, fake_judge: FakeJudgeServer) -> None:
    """``metric_spec_parameters={"guidelines": [...]}`` goes into the rubric-writing prompt."""
    client.evals.generate_rubrics(
        src=pd.DataFrame({"prompt": PROMPTS[:1]}),
        rubric_group_name="g",
        predefined_spec_name=types.RubricMetric.TEXT_QUALITY,
        metric_spec_parameters={"guidelines": ["The response must be in Japanese."]},
    )
    sent = [_user_text(r) for r in fake_judge.requests if _is_generation(r)]
    assert sent and "The response must be in Japanese." in sent[0]


def test_custom_rubric_prompt_on_the_mock() -> None:
    """``generate_rubrics(prompt_template=...)``: your prompt, Vertex's ``{"questions": ...}``
    reply format; the mock answers it offline and says it is a mock."""
    client = Client(judge="mock")
    data = client.evals.generate_rubrics(
        src=pd.DataFrame({"prompt": PROMPTS}),
        rubric_group_name="mine",
        prompt_template=(
            "Write yes/no rubrics for <user_prompt>{prompt}</user_prompt> as "
            '```json {{"questions": [...]}}```'
        ),
    )
    df = data.eval_dataset_df
    assert df is not None
    rubrics = df["rubric_groups"][0]["mine"]
    assert rubrics and all("mock" in r.text.lower() for r in rubrics)
    result = client.evals.evaluate(
        dataset=client.evals.run_inference(model=lambda p: "ok", src=data),
        metrics=[types.Metric(name="general_quality_v1", rubric_group_name="mine")],
    )
    assert (result.summary_metrics or [])[0].num_cases_valid == len(PROMPTS)


def test_eval_cases_and_show(capsys: pytest.CaptureFixture[str]) -> None:
    """A dataset of ``EvalCase``s (with its own rubric group) is judged; ``show`` renders
    rubriclab's views per candidate and the win rates (text, outside a notebook)."""
    group = types.RubricGroup(rubrics=[types.Rubric.of("Does it give a number?", rubric_id="n")])
    cases = [
        types.EvalCase(prompt=p, responses=[r], rubric_groups={"g": group})
        for p, r in zip(PROMPTS, ["<b>bold</b>", "3"], strict=True)
    ]
    other = [types.EvalCase(prompt=p, responses=["x"], rubric_groups={"g": group}) for p in PROMPTS]
    client = Client(judge="mock")
    result = client.evals.evaluate(
        dataset=[
            types.EvaluationDataset(eval_cases=cases),
            types.EvaluationDataset(eval_cases=other),
        ],
        metrics=[types.RubricMetric.GENERAL_QUALITY(rubric_group_name="g")],
    )
    verdicts = (
        result.eval_case_results[0]
        .response_candidate_results[0]
        .metric_results["general_quality_v1"]
        .rubric_verdicts
    )  # type: ignore[index]
    assert [v.evaluated_rubric.text for v in verdicts or []] == ["Does it give a number?"]  # type: ignore[union-attr]
    assert len(result.results) == 2 and all(isinstance(r, rl.EvalResult) for r in result.results)
    # the group's rubric is the metric's own rubric column, as rubriclab's views expect
    assert "general_quality_v1/rubric" in result.results[0].table.columns
    result.show()
    shown = capsys.readouterr().out
    assert "wins" in shown and "ties" in shown
    assert not result.win_rate_frame().empty


def test_mismatched_candidates_and_missing_responses_are_clear(client: Client) -> None:
    """Candidates must hold the same prompts; a dataset without responses says what to run."""
    a = pd.DataFrame({"prompt": PROMPTS, "response": ["1", "2"]})
    b = pd.DataFrame({"prompt": PROMPTS[::-1], "response": ["1", "2"]})
    with pytest.raises(ValueError, match="row 0: candidate 'candidate_2' has a different prompt"):
        client.evals.evaluate(dataset=[a, b], metrics=["exact_match"])
    with pytest.raises(ValueError, match="run_inference"):
        client.evals.evaluate(dataset=pd.DataFrame({"prompt": PROMPTS}))
    with pytest.raises(ValueError, match="generate_rubrics"):
        client.evals.evaluate(
            dataset=a, metrics=[types.RubricMetric.GENERAL_QUALITY(rubric_group_name="nope")]
        )
    with pytest.raises(NotImplementedError, match="parse_and_reduce_fn"):
        client.evals.evaluate(
            dataset=a,
            metrics=[
                types.LLMMetric(
                    name="q", prompt_template="Rate: {response}", parse_and_reduce_fn=len
                )
            ],
        )
    with pytest.raises(NotImplementedError, match="agents"):
        _ = types.RubricMetric.MULTI_TURN_TASK_SUCCESS
    with pytest.raises(AttributeError, match="GENERAL_QUALITY"):
        _ = types.RubricMetric.NO_SUCH_METRIC
    with pytest.raises(NotImplementedError, match="gsutil"):
        client.evals.run_inference(model="m", src="gs://bucket/prompts.jsonl")


NOTEBOOK = Path(__file__).resolve().parent.parent / "notebooks" / "vertex_genai.ipynb"
OFFICIAL_IMPORT = "from vertexai import Client, types"


@pytest.mark.slow
def test_official_notebook_runs_on_a_real_endpoint(
    fake_judge: FakeJudgeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """notebooks/vertex_genai.ipynb (Google's quick-start, import changed) over HTTP: the
    responses are asked of ``gemini-2.5-flash`` on the judge's endpoint, rubrics and verdicts of
    the judge model, and nothing says mock. (CI also runs it on the mock with nbval.)"""
    import nbformat
    from nbclient import NotebookClient

    monkeypatch.setenv("RUBRICLAB_JUDGE", "ollama:judge-model")
    monkeypatch.setenv("OLLAMA_BASE_URL", fake_judge.url)
    nb = nbformat.read(NOTEBOOK, as_version=4)
    sources = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    assert OFFICIAL_IMPORT not in sources
    assert "from rubriclab.compat.vertex.genai import Client, types" in sources
    NotebookClient(
        nb, timeout=300, resources={"metadata": {"path": str(NOTEBOOK.parent)}}
    ).execute()
    errors = [o for c in nb.cells for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert not errors, errors
    models = [r["model"] for r in fake_judge.requests]
    assert models.count("gemini-2.5-flash") == 5  # one response per prompt
    assert set(models) == {"gemini-2.5-flash", "judge-model"}
    assert sum(_is_generation(r) for r in fake_judge.requests) == 5  # an adaptive rubric each
    text = json.dumps([c.get("outputs", []) for c in nb.cells])
    assert "MOCK judge" not in text  # the result views say which judge made them


def test_llm_metric_with_your_own_prompt_over_http(
    client: Client, fake_judge: FakeJudgeServer
) -> None:
    """``types.LLMMetric``: your template rendered per row (with the output instruction added),
    the judge's ``Score:`` and ``Explanation:`` read back; an answer with no score is that
    row's error, not a 0."""

    def respond(body: dict[str, Any]) -> Any:
        text = _user_text(body)
        if "Rate: r1" in text:
            return "Score: 4\nExplanation: clear enough"
        return "I cannot rate this."

    fake_judge.responder = respond
    df = pd.DataFrame({"prompt": ["p1", "p2"], "response": ["r1", "r2"]})
    metric = types.LLMMetric(name="quality", prompt_template="Rate: {response}")
    with pytest.warns(RowErrorWarning):
        result = client.evals.evaluate(dataset=df, metrics=[metric])
    sent = [_user_text(r) for r in fake_judge.requests]
    assert any("Rate: r1" in t and "Score: <" in t for t in sent)
    rows = [
        (c.response_candidate_results or [])[0].metric_results["quality"]  # type: ignore[index]
        for c in result.eval_case_results or []
    ]
    assert (rows[0].score, rows[0].explanation) == (4.0, "clear enough")
    assert rows[0].raw_output == ["Score: 4\nExplanation: clear enough"]
    assert rows[1].score is None and "no score" in (rows[1].error_message or "")
    summary = (result.summary_metrics or [])[0]
    assert (summary.num_cases_valid, summary.num_cases_error, summary.mean_score) == (1, 1, 4.0)


def test_metric_prompt_builder_runs_on_the_mock() -> None:
    """A ``MetricPromptBuilder`` prompt as an LLMMetric: the mock picks a rating from its
    rating scores (and says it is the mock)."""
    builder = types.MetricPromptBuilder(
        criteria={"clarity": "The response is easy to follow."},
        rating_scores={"1": "clear", "0": "unclear"},
    )
    result = Client(judge="mock").evals.evaluate(
        dataset=pd.DataFrame({"prompt": PROMPTS, "response": ["a", "b"]}),
        metrics=[types.LLMMetric(name="clarity", prompt_template=builder)],
    )
    for case in result.eval_case_results or []:
        res = (case.response_candidate_results or [])[0].metric_results["clarity"]  # type: ignore[index]
        assert res.score in (0.0, 1.0) and "mock" in (res.explanation or "")


def test_client_keeps_no_key() -> None:
    """Vertex code passes ``api_key=``/credentials: they are dropped, never stored or shown."""
    client = Client(project="p", location="l", api_key="sk-secret-123", credentials=object())
    assert "sk-secret-123" not in repr(client)
    assert "sk-secret-123" not in repr(vars(client))
    assert "sk-secret-123" not in repr(
        [vars(v) for v in vars(client).values() if hasattr(v, "__dict__")]
    )


def test_bad_input_is_one_plain_line() -> None:
    """A typo or a wrong type in Vertex's types: one line naming the type and the field, no
    pydantic wording or links."""
    cases = [
        (
            lambda: types.EvalCase(promt="x"),
            "types.EvalCase: unknown key 'promt' (did you mean 'prompt'?)",
        ),
        (
            lambda: types.EvaluationDataset.model_validate({"eval_cases": [{"prompt": 3}]}),
            "types.EvaluationDataset: eval_cases[0].prompt: expected text or a Content, got int",
        ),
        (
            lambda: types.EvaluationDataset(eval_dataset_df="data.csv"),
            "eval_dataset_df must be a pandas DataFrame, got str",
        ),
    ]
    for make, message in cases:
        with pytest.raises(ValueError) as info:
            make()
        text = str(info.value)
        assert message in text and "\n" not in text
        assert "pydantic" not in text.lower() and "validation error" not in text.lower()
