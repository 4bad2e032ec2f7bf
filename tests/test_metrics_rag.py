"""RAG metrics (``rl.metrics.rag``) over a small refund-policy set whose unsupported claims are
known, judged by scripted judges on the fake judge server: the honest one (reads the prompt
and answers as a careful judge would) and a yes-man (calls every claim supported, quoting the
claim itself), the negative control the quote check must catch."""

from __future__ import annotations

import json
import re
from typing import Any

import pandas as pd
import pytest

import rubriclab as rl
from rubriclab.metrics.rag import context_passages
from rubriclab.testing import FakeJudgeServer

POLICY = [
    "Refunds are available within 30 days of purchase.",
    "Shipping is free on orders over $50.",
    "Our stores open at 9am.",
]


def _between(text: str, tag: str) -> str:
    match = re.search(rf"<{tag}>\n?(.*?)\n?</{tag}>", text, re.S)
    return match.group(1).strip() if match else ""


def _passages(prompt: str) -> list[str]:
    return [p.strip() for p in re.findall(r'<passage id="\d+">\n(.*?)\n</passage>', prompt, re.S)]


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in re.split(r"(?<=\.)\s+", text) if s.strip()]


def _where(sentence: str, passages: list[str]) -> int:
    core = sentence.rstrip(".").lower()
    for i, p in enumerate(passages, start=1):
        if core in p.lower():
            return i
    return 0


def honest(body: dict[str, Any]) -> str:
    """A careful scripted judge: a claim is supported when a passage holds its words; one that
    says 90 days where a passage says 30 is contradicted; a passage or statement is relevant
    when it is about refunds."""
    prompt = str(body["messages"][0]["content"])
    name = body["response_format"]["json_schema"]["name"]
    passages = _passages(prompt)
    if name == "rag_claims":
        claims = []
        for claim in _sentences(_between(prompt, "answer")):
            at = _where(claim, passages)
            if at:
                claims.append(_item("claim", claim, "SUPPORTED", at, claim.rstrip(".")))
            elif "90 days" in claim:
                claims.append(_item("claim", claim, "CONTRADICTED", 1, "within 30 days"))
            else:
                claims.append(_item("claim", claim, "UNSUPPORTED", 0, ""))
        return json.dumps({"claims": claims, "rationale": "checked claim by claim"})
    if name == "rag_passages":
        verdicts = {
            f"p{i}": {
                "reasoning": "about refunds" if "refund" in p.lower() else "not about refunds",
                "evidence": p if "refund" in p.lower() else "",
                "verdict": "RELEVANT" if "refund" in p.lower() else "IRRELEVANT",
            }
            for i, p in enumerate(passages, start=1)
        }
        return json.dumps({"passages": verdicts, "rationale": "by topic"})
    if "<reference_answer>" in prompt:
        out = []
        for s in _sentences(_between(prompt, "reference_answer")):
            at = _where(s, passages)
            verdict = "ATTRIBUTED" if at else "NOT_ATTRIBUTED"
            out.append(_item("statement", s, verdict, at, s.rstrip(".") if at else ""))
        return json.dumps({"statements": out, "rationale": "reference checked"})
    statements = [
        {
            "statement": s,
            "reasoning": "on the question" if "refund" in s.lower() else "off topic",
            "verdict": "RELEVANT" if "refund" in s.lower() else "IRRELEVANT",
        }
        for s in _sentences(_between(prompt, "answer"))
    ]
    return json.dumps({"statements": statements, "rationale": "statement by statement"})


def yes_man(body: dict[str, Any]) -> str:
    """Every claim SUPPORTED, its 'evidence' the claim itself (what a lazy judge writes)."""
    prompt = str(body["messages"][0]["content"])
    claims = [_item("claim", c, "SUPPORTED", 1, c) for c in _sentences(_between(prompt, "answer"))]
    return json.dumps({"claims": claims, "rationale": "all good"})


def _item(key: str, text: str, verdict: str, passage: int, evidence: str) -> dict[str, Any]:
    return {
        key: text,
        "reasoning": f"{verdict.lower()} by passage {passage}",
        "passage": passage,
        "evidence": evidence,
        "verdict": verdict,
    }


Q = "What is your refund policy?"
DATA = pd.DataFrame(
    {
        "prompt": [Q] * 4,
        "response": [
            # control: every claim is in the context
            "Refunds are available within 30 days of purchase. Shipping is free on orders over $50.",
            # one claim the context does not hold
            "Refunds are available within 30 days of purchase. Refunds are paid in cash.",
            # one claim the context contradicts
            "Refunds are available within 90 days.",
            # two unsupported claims
            "You can return items at any time. Refunds include a bonus voucher.",
        ],
        "context": [POLICY, POLICY, POLICY, POLICY],
        "reference": ["Refunds are available within 30 days of purchase. Refunds need a receipt."]
        * 4,
    }
)


@pytest.fixture
def server() -> Any:
    with FakeJudgeServer(honest) as s:
        yield s


def _judge(server: FakeJudgeServer) -> rl.Judge:
    return rl.Judge(server.url, model="fake", max_retries=0)


def test_faithfulness_flags_the_known_unsupported_claims_and_passes_the_control(
    server: FakeJudgeServer,
) -> None:
    result = rl.evaluate(DATA, [rl.metrics.FAITHFULNESS], judge=_judge(server))
    t = result.table
    assert t["faithfulness/score"].tolist() == [1.0, 0.5, 0.0, 0.0]
    assert t["faithfulness/passed"].tolist() == [True, False, False, False]
    assert t.loc[1, "faithfulness/verdict"] == "fail (1 of 2 claims unsupported)"
    claims = t.loc[1, "faithfulness/criteria"]
    assert [(c["question"], c["label"], c["level"]) for c in claims] == [
        ("Refunds are available within 30 days of purchase.", "SUPPORTED", 1),
        ("Refunds are paid in cash.", "UNSUPPORTED", 0),
    ]
    assert claims[0]["evidence"] == "Refunds are available within 30 days of purchase"
    assert claims[0]["passage"] == 1
    contradicted = t.loc[2, "faithfulness/criteria"][0]
    assert (contradicted["label"], contradicted["evidence"]) == ("CONTRADICTED", "within 30 days")
    assert t["faithfulness/error"].isna().all()


def test_a_yes_man_judge_is_caught_by_the_quote_check_and_the_control_still_passes(
    server: FakeJudgeServer,
) -> None:
    server.responder = yes_man
    t = rl.evaluate(DATA, [rl.metrics.FAITHFULNESS], judge=_judge(server)).table
    # the judge said SUPPORTED to everything; only claims whose quote is in the context count
    assert t["faithfulness/score"].tolist() == [1.0, 0.5, 0.0, 0.0]
    flagged = t.loc[1, "faithfulness/criteria"][1]
    assert flagged["level"] == 0
    assert flagged["label"] == "UNSUPPORTED (the quoted evidence is not in the context)"


def test_context_relevance_precision_and_recall(server: FakeJudgeServer) -> None:
    metrics = [
        rl.metrics.CONTEXT_RELEVANCE,
        rl.metrics.CONTEXT_PRECISION,
        rl.metrics.CONTEXT_RECALL,
    ]
    ranked_last = DATA.head(2).assign(context=[POLICY, list(reversed(POLICY))])
    t = rl.evaluate(ranked_last, metrics, judge=_judge(server)).table
    assert t["context_relevance/score"].tolist() == pytest.approx([1 / 3, 1 / 3])
    # the one relevant passage first gives precision 1; last of three gives 1/3
    assert t["context_precision/score"].tolist() == pytest.approx([1.0, 1 / 3])
    assert [c["label"] for c in t.loc[0, "context_relevance/criteria"]] == [
        "RELEVANT",
        "IRRELEVANT",
        "IRRELEVANT",
    ]
    # the reference's second statement (a receipt) is not in the context
    assert t["context_recall/score"].tolist() == [0.5, 0.5]
    recall = t.loc[0, "context_recall/criteria"]
    assert [(c["question"], c["label"]) for c in recall] == [
        ("Refunds are available within 30 days of purchase.", "ATTRIBUTED"),
        ("Refunds need a receipt.", "NOT_ATTRIBUTED"),
    ]
    # relevance and precision ask the same question: one call per row serves both
    assert server.calls == 2 * 2


def test_answer_relevance_counts_statements_on_the_question(server: FakeJudgeServer) -> None:
    t = rl.evaluate(DATA.head(2), [rl.metrics.ANSWER_RELEVANCE], judge=_judge(server)).table
    assert t["answer_relevance/score"].tolist() == [0.5, 1.0]


def test_rows_without_context_or_reference_carry_their_error_not_a_zero(
    server: FakeJudgeServer,
) -> None:
    df = pd.DataFrame(
        {
            "prompt": [Q, Q],
            "response": ["Refunds are available within 30 days of purchase.", "Yes."],
            "context": ["Refunds are available within 30 days of purchase.", None],
            "reference": [None, "Refunds need a receipt."],
        }
    )
    metrics = [rl.metrics.FAITHFULNESS, rl.metrics.CONTEXT_RECALL]
    with pytest.warns(UserWarning, match="no context in this row"):
        t = rl.evaluate(df, metrics, judge=_judge(server)).table
    assert t.loc[0, "faithfulness/score"] == 1.0  # a plain text context is one passage
    assert t.loc[1, "faithfulness/error"].startswith("no context in this row")
    assert pd.isna(t.loc[1, "faithfulness/score"])
    assert t.loc[0, "context_recall/error"].startswith("no reference in this row")
    assert server.calls == 1


def test_an_answer_missing_a_passage_is_asked_again_then_kept_as_the_rows_error(
    server: FakeJudgeServer,
) -> None:
    server.responder = lambda body: json.dumps(
        {"passages": {"p1": {"reasoning": "r", "evidence": "", "verdict": "RELEVANT"}}}
    )
    with pytest.warns(UserWarning, match="no verdict for passage"):
        t = rl.evaluate(DATA.head(1), [rl.metrics.CONTEXT_RELEVANCE], judge=_judge(server)).table
    assert "no verdict for passage(s) p2, p3" in t.loc[0, "context_relevance/error"]
    assert pd.isna(t.loc[0, "context_relevance/score"])
    assert server.calls == 2


def test_the_drill_down_shows_each_claim_and_its_evidence_as_text(
    server: FakeJudgeServer,
) -> None:
    df = DATA.head(2).assign(response=[DATA.loc[0, "response"], "Refunds are paid in <b>cash</b>."])
    result = rl.evaluate(df, [rl.metrics.FAITHFULNESS], judge=_judge(server))
    html = rl.Explanation(result, 1)._repr_mimebundle_()[0]["text/html"]
    assert "Refunds are paid in &lt;b&gt;cash&lt;/b&gt;." in html
    assert "<b>cash</b>" not in html
    assert "UNSUPPORTED" in html
    html0 = rl.Explanation(result, 0)._repr_mimebundle_()[0]["text/html"]
    assert 'italic;">Shipping is free on orders over $50</div>' in html0  # the quoted evidence


def test_context_passages_reads_lists_and_text() -> None:
    assert context_passages('["a", "b", ""]') == ["a", "b"]
    assert context_passages('[{"text": "a", "source": "x"}]') == ["a"]
    assert context_passages("[not json") == ["[not json"]
    assert context_passages("one passage") == ["one passage"]
    assert context_passages(None) == []


def test_rag_metrics_in_a_run_config(tmp_path: Any) -> None:
    from rubriclab.run_config import ConfigError, load_config

    path = tmp_path / "run.yaml"
    path.write_text(
        "data: d.csv\nmetrics:\n  - faithfulness\n  - use: context_recall\n    name: recall\n"
    )
    built = load_config(path).build_metrics()
    assert [(type(m).__name__, m.name, m.aspect) for m in built] == [
        ("RagMetric", "faithfulness", "faithfulness"),
        ("RagMetric", "recall", "context_recall"),
    ]
    path.write_text("data: d.csv\nmetrics:\n  - use: faithfulness\n    pairwise: true\n")
    with pytest.raises(ConfigError, match=r"metrics\[0\].pairwise does not apply"):
        load_config(path).build_metrics()


def test_the_offline_mock_answers_by_word_overlap_and_says_it_is_a_mock() -> None:
    result = rl.evaluate(DATA.head(2), [rl.metrics.FAITHFULNESS], judge="mock")
    assert result.is_mock
    t = result.table
    assert t["faithfulness/score"].tolist() == [1.0, 0.5]  # "paid in cash" is in no passage
    claims = t.loc[1, "faithfulness/criteria"]
    assert all(c["reasoning"].startswith("(mock)") for c in claims)
    wrong = rl.evaluate(DATA.iloc[[2]], [rl.metrics.FAITHFULNESS], judge="mock").table
    assert wrong["faithfulness/score"].tolist() == [0.0]  # "90 days": a number no passage says


def test_a_quote_is_found_whatever_its_case_spacing_and_elisions_but_never_invented() -> None:
    from rubriclab.metrics.rag import _find_quote

    passages = ["Our stores open at 9am.", "Refunds are available within 30 days of purchase."]
    assert _find_quote("refunds are  AVAILABLE within 30 days", passages, 0) == 2
    assert _find_quote("Refunds are available ... of purchase", passages, 1) == 2
    assert _find_quote("of purchase ... Refunds are available", passages, 2) is None  # order
    assert _find_quote("Refunds are available within 90 days", passages, 2) is None
    assert _find_quote("...", passages, 2) is None


def test_the_plain_text_explanation_names_each_claim_and_quotes_its_evidence(
    server: FakeJudgeServer,
) -> None:
    """``Explanation``'s text form (what a terminal, a log or a CI job shows) says which claim
    failed, not only 'claim 2: UNSUPPORTED'."""
    result = rl.evaluate(DATA.head(2), [rl.metrics.FAITHFULNESS], judge=_judge(server))
    text = rl.Explanation(result, 1)._repr_mimebundle_()[0]["text/plain"]
    lines = text.splitlines()
    at = lines.index("  - claim 1: 1 SUPPORTED")
    assert lines[at + 1 : at + 3] == [
        "      Refunds are available within 30 days of purchase.",
        '      evidence: "Refunds are available within 30 days of purchase"',
    ]
    unsupported = lines.index("  - claim 2: 0 UNSUPPORTED")
    assert lines[unsupported + 1] == "      Refunds are paid in cash."
