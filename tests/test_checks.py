"""Code checks inside a rubric: evaluated locally, never sent to the judge, scored like any
other criterion. The judge is the fake server on 127.0.0.1, so what is (not) sent is read off
the wire."""

from __future__ import annotations

import json
from typing import Any

import pandas as pd
import pytest

import rubriclab as rl
from rubriclab import checks
from rubriclab.rubric import CodeCheck, Criterion, Rubric, RubricError


def _judge(server: Any) -> rl.Judge:
    return rl.Judge(server.url, model="judge-model", max_retries=0)


def _mixed() -> Rubric:
    accuracy = Criterion(
        name="accuracy",
        description="Are the policy facts right?",
        levels=[
            rl.Level(score=1, descriptor="wrong"),
            rl.Level(score=2, descriptor="partly right"),
            rl.Level(score=3, descriptor="all right"),
        ],
        weight=3,
        critical=2,
    )
    return Rubric(
        criteria=[
            Criterion.check("regex", r"\b30 days\b", name="window_rule", weight=2),
            accuracy,
            Criterion.check("max_words", 12, name="brevity_rule"),
            Criterion.yes_no("Is the tone polite?", name="tone"),
        ],
        pass_mark=0.7,
    )


# what the judge answers per response (accuracy level, tone)
_ANSWERS = {"accepted within 30 days": (3, "YES"), "whenever": (2, "YES"), "Refunds": (1, "NO")}


def _responder(body: dict[str, Any]) -> str:
    prompt = body["messages"][-1]["content"]
    prompt = prompt if isinstance(prompt, str) else json.dumps(prompt)
    for key, (accuracy, tone) in _ANSWERS.items():
        if key in prompt:
            return json.dumps(
                {
                    "criteria": {
                        "accuracy": {"evidence": "-", "level": accuracy},
                        "tone": {"evidence": "-", "level": tone},
                    },
                    "rationale": "ok",
                }
            )
    raise AssertionError("unexpected prompt")


def _frame() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "prompt": ["How long do I have to send it back?"] * 3,
            "response": [
                "Returns are accepted within 30 days.",
                "You can return it whenever you like, no problem at all, any time you want really.",
                "Refunds within 30 days only.",
            ],
        }
    )


def test_two_code_checks_and_two_judged_send_only_the_judged_and_score_all_four(
    fake_judge: Any,
) -> None:
    fake_judge.responder = _responder
    metric = rl.metrics.RubricMetric(rubric=_mixed(), name="policy")
    t = rl.evaluate(_frame(), [metric], judge=_judge(fake_judge)).table

    assert len(fake_judge.requests) == 3  # one call per row, for the judged criteria only
    for body in fake_judge.requests:
        prompt = body["messages"][-1]["content"]
        schema = json.dumps(body["response_format"])
        assert "accuracy" in prompt and "tone" in prompt
        assert "window_rule" not in prompt and "brevity_rule" not in prompt
        assert "30 days\\b" not in prompt and "at most 12 words" not in prompt
        assert '"accuracy"' in schema and '"tone"' in schema
        assert "window_rule" not in schema and "brevity_rule" not in schema

    # by hand: weights window 2, accuracy 3 (levels 1-3), short 1, tone 1; positive sum 7
    # row 0: window YES, short YES (6 words), accuracy 3, tone YES -> 7/7
    # row 1: no "30 days", 16 words, accuracy 2 (half), tone YES -> (1.5 + 1) / 7, below 70%
    # row 2: window YES, short YES (5 words), accuracy 1 (below critical 2), tone NO -> 3/7
    # (scores are kept to 12 decimals: scoring.py's rule for every rubric)
    assert t["policy/score"].tolist() == [1.0, round(2.5 / 7, 12), round(3 / 7, 12)]
    assert t["policy/verdict"].tolist() == [
        "pass",
        "fail (score below pass mark)",
        "fail (accuracy below 2)",
    ]
    rows = {c["name"]: c for c in t["policy/criteria"][1]}
    names = [c["name"] for c in t["policy/criteria"][1]]
    assert names == ["window_rule", "accuracy", "brevity_rule", "tone"]
    assert rows["window_rule"]["level"] == 0 and rows["window_rule"]["checked_by"] == "code"
    assert rows["window_rule"]["reasoning"] == "checked by code: no match for /\\b30 days\\b/"
    assert rows["window_rule"]["check"] == "regex /\\b30 days\\b/"
    assert rows["brevity_rule"]["reasoning"] == "checked by code: 16 words, over 12"
    assert rows["accuracy"]["level"] == 2 and "checked_by" not in rows["accuracy"]


def test_a_code_only_rubric_makes_no_call_and_needs_no_judge(
    fake_judge: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("RUBRICLAB_JUDGE", raising=False)
    rubric = Rubric(
        criteria=[
            Criterion.check("contains", "30 days", name="window"),
            Criterion.check("not_contains", "whenever", name="no_vague", critical=True),
        ],
        pass_mark=1.0,
    )
    metric = rl.metrics.RubricMetric(rubric=rubric, name="policy")
    t = rl.evaluate(_frame(), [metric], judge=_judge(fake_judge)).table
    assert fake_judge.requests == []
    assert t["policy/score"].tolist() == [1.0, 0.0, 1.0]
    assert t["policy/verdict"].tolist() == ["pass", "fail (no_vague is NO)", "pass"]
    assert t["policy/rationale"][0] == "checked by code (no judge call)"
    # no judge at all: still runs, nothing to call
    t2 = rl.evaluate(_frame(), [metric]).table
    assert t2["policy/score"].tolist() == [1.0, 0.0, 1.0]


def test_a_raising_check_is_that_rows_error_with_the_exception_text(fake_judge: Any) -> None:
    fake_judge.responder = _responder

    def cites(response: str) -> bool:
        """Does it cite the policy page?"""
        if "whenever" in response:
            raise ValueError("cannot read this one")
        return "30 days" in response

    rubric = Rubric(
        criteria=[
            Criterion.check(cites, name="cites"),
            Criterion.yes_no("Is the tone polite?", name="tone"),
            Criterion(
                name="accuracy",
                levels=[rl.Level(score=s, descriptor=f"level {s}") for s in (1, 2, 3)],
            ),
        ]
    )
    t = rl.evaluate(
        _frame(), [rl.metrics.RubricMetric(rubric=rubric, name="m")], judge=_judge(fake_judge)
    ).table
    assert len(fake_judge.requests) == 2  # the failed row is not sent: it cannot be scored
    assert (
        t["m/error"][1]
        == "cites (checked by code): the check raised ValueError: cannot read this one"
    )
    assert pd.isna(t["m/score"][1])
    assert t["m/score"][0] == 1.0
    failed = t["m/criteria"][1][0]
    assert failed["checked_by"] == "code" and "cannot read this one" in failed["reasoning"]
    assert t["m/criteria"][0][0]["question"] == "Does it cite the policy page?"


def test_a_function_may_return_a_level_with_a_reason_and_read_the_row() -> None:
    def overlap(response: str, row: dict[str, Any]) -> tuple[int, str]:
        shared = set(response.split()) & set(str(row["reference"]).split())
        return min(3, len(shared)), f"{len(shared)} words shared"

    c = Criterion.check(overlap, name="overlap", levels={0: "none", 1: "a", 2: "b", 3: "c"})
    assert c.run_check("a b c d", {"reference": "a b x"}) == (2, "2 words shared")
    with pytest.raises(checks.CheckError, match="returned level 7"):
        Criterion.check(lambda r: 7, name="x", levels={0: "a", 1: "b"}).run_check("r")
    with pytest.raises(checks.CheckError, match="True/False for a criterion with levels"):
        Criterion.check(lambda r: True, name="x", levels={1: "a", 2: "b"}).run_check("r")


@pytest.mark.parametrize(
    ("kind", "arg", "response", "level", "reason"),
    [
        ("regex", r"\b30 days\b", "within 30 days.", 1, "matched '30 days'"),
        ("regex", r"\b30 days\b", "within 300 days.", 0, "no match for /\\b30 days\\b/"),
        ("contains", "refund", "a refund", 1, "contains 'refund'"),
        ("contains", "refund", "a Refund", 0, "no 'refund'"),
        ("not_contains", "guarantee", "we guarantee it", 0, "contains 'guarantee'"),
        ("not_contains", "guarantee", "we try", 1, "no 'guarantee'"),
        ("is_json", None, '{"a": 1}', 1, "valid JSON"),
        ("is_json", None, "{'a': 1}", 0, None),
        ("max_words", 3, "one two three", 1, "3 words (at most 3)"),
        ("max_words", 3, "one two three four", 0, "4 words, over 3"),
    ],
)
def test_builtin_kinds(kind: str, arg: Any, response: str, level: int, reason: str | None) -> None:
    got = Criterion.check(kind, arg, name="c").run_check(response)
    assert got.level == level
    if reason is not None:
        assert got.reason == reason


def test_json_schema_check_names_the_first_violation() -> None:
    schema = {
        "type": "object",
        "properties": {"days": {"type": "integer"}},
        "required": ["days"],
    }
    c = Criterion.check("json_schema", schema, name="shape")
    assert c.run_check('{"days": 30}').level == 1
    got = c.run_check('{"days": "thirty"}')
    assert got.level == 0 and "'thirty' is not of type 'integer'" in got.reason
    assert "(at days)" in got.reason
    assert c.run_check("thirty").level == 0
    with pytest.raises(RubricError, match="JSON schema is not valid"):
        Criterion.check("json_schema", {"type": "no-such-type"}, name="bad")


def test_a_backtracking_regex_runs_out_of_time_as_the_rows_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(checks, "REGEX_TIMEOUT", 0.05)
    c = Criterion.check("regex", r"(a|aa)+$", name="evil")
    with pytest.raises(checks.CheckError, match=r"ran over 0\.05 s"):
        c.run_check("a" * 60 + "b")
    assert c.run_check("aaaa").level == 1


def test_yaml_form_round_trips_and_refuses_anything_but_builtin_kinds() -> None:
    text = """
criteria:
  - name: window
    question: Does it state the 30-day window?
    code: {regex: '\\b30 days\\b'}
    weight: 2
  - name: short
    code: {max_words: 120}
  - name: tone
    question: Is it polite?
pass_mark: 0.7
"""
    rubric = Rubric.from_yaml(text)
    assert rubric["window"].code == CodeCheck(kind="regex", arg=r"\b30 days\b")
    assert [c.name for c in rubric.coded] == ["window", "short"]
    assert [c.name for c in rubric.judged] == ["tone"]
    again = Rubric.from_yaml(rubric.to_yaml())
    assert again == rubric
    assert again["window"].run_check("in 30 days").level == 1

    bad = text.replace("{max_words: 120}", "{python: os.system}")
    with pytest.raises(RubricError) as exc:
        Rubric.from_yaml(bad)
    message = str(exc.value)
    assert "criteria[1].code" in message
    assert "'python' is not a built-in check" in message
    assert "\n" not in message and "pydantic" not in message

    with pytest.raises(RubricError, match=r"criteria\[0\]\.code: regex '\(' does not compile"):
        Rubric.from_yaml("criteria:\n  - name: a\n    code: {regex: '('}\n")
    with pytest.raises(RubricError, match=r"criteria\[0\]\.code: a 'max_words' check needs"):
        Rubric.from_yaml("criteria:\n  - name: a\n    code: {max_words: many}\n")


def test_a_function_check_is_written_by_name_and_never_loaded_back() -> None:
    def polite(response: str) -> bool:
        return "please" in response

    rubric = Rubric(criteria=[Criterion.check(polite, name="polite")])
    text = rubric.to_yaml()
    assert "python:" in text and "polite" in text
    with pytest.raises(RubricError, match="'python' is not a built-in check"):
        Rubric.from_yaml(text)


def test_pairwise_metrics_refuse_code_checks_on_the_row(fake_judge: Any) -> None:
    rubric = Rubric(criteria=[Criterion.check("contains", "x", name="x"), Criterion.yes_no("ok?")])
    df = _frame().assign(baseline_model_response="b")
    metric = rl.metrics.PairwiseRubricMetric(rubric=rubric, name="pw")
    t = rl.evaluate(df, [metric], judge=_judge(fake_judge)).table
    assert fake_judge.requests == []
    assert "checked by code (x) are for pointwise metrics" in t["pw/error"][0]


def test_a_saved_result_loads_back_with_its_function_check_described_not_run(
    tmp_path: Any,
) -> None:
    def polite(response: str) -> bool:
        return "please" in response

    rubric = Rubric(
        criteria=[
            Criterion.check(polite, name="polite"),
            Criterion.check("contains", "30", name="days"),
        ]
    )
    df = pd.DataFrame({"prompt": ["p", "q"], "response": ["please, 30", "no"]})
    result = rl.evaluate(df, [rl.metrics.RubricMetric(rubric=rubric, name="m")])
    result.save(tmp_path / "saved")
    back = rl.load_result(tmp_path / "saved")
    assert back.table["m/score"].tolist() == [1.0, 0.0]
    loaded = back.metrics[0].rubric
    assert loaded is not None
    assert loaded["polite"].code == CodeCheck(kind="python", arg=polite.__qualname__)
    assert loaded["days"].run_check("in 30 days").level == 1
    with pytest.raises(checks.CheckError, match="names it but cannot run it"):
        loaded["polite"].run_check("please")
    with pytest.raises(RubricError, match="'python' is not a built-in check"):
        Rubric.from_dict(rubric.to_dict())  # a rubric file still never names a function


def test_the_rubric_editor_keeps_a_function_check_through_an_edit() -> None:
    from rubriclab.widgets import RubricEditor

    def polite(response: str) -> bool:
        return "please" in response

    rubric = Rubric(
        criteria=[Criterion.check(polite, name="polite"), Criterion.yes_no("ok?", name="ok")]
    )
    editor = RubricEditor(rubric)
    value = dict(editor.value)
    value["criteria"] = [dict(c) for c in value["criteria"]]
    value["criteria"][1]["description"] = "Is it correct?"
    editor.set_state({"value": value})
    assert editor.error is None
    assert editor.rubric["ok"].description == "Is it correct?"
    assert editor.rubric["polite"].code is not None
    assert editor.rubric["polite"].code.function is polite
    assert editor.rubric["polite"].run_check("please").level == 1


def test_is_json_and_json_schema_parse_a_rows_response_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    parses: list[str] = []
    real = json.loads

    def counting(text: str, *args: Any, **kwargs: Any) -> Any:
        parses.append(text)
        return real(text, *args, **kwargs)

    monkeypatch.setattr(checks.json, "loads", counting)
    schema = {"type": "object", "required": ["days"], "properties": {"days": {"type": "integer"}}}
    rubric = Rubric(
        criteria=[
            Criterion.check("is_json", name="json"),
            Criterion.check("json_schema", schema, name="shape"),
        ],
        pass_mark=1.0,
    )
    answers = ['{"days": 30}', '{"days": "thirty"}', "not json"]
    df = pd.DataFrame({"prompt": ["q"] * 3, "response": answers})
    t = rl.evaluate(df, [rl.metrics.RubricMetric(rubric=rubric, name="p")]).table
    assert sorted(parses) == sorted(answers)  # one parse per row, not one per JSON check
    assert t["p/score"].tolist() == [1.0, 0.5, 0.0]
    shape = [next(c for c in row if c["name"] == "shape") for row in t["p/criteria"]]
    assert shape[1]["reasoning"].startswith("checked by code: schema: 'thirty' is not of type")
    assert shape[2]["reasoning"].startswith("checked by code: not JSON (")
    # a check run on its own still parses for itself
    parses.clear()
    assert checks.builtin_runner("is_json", True)('{"a": 1}').level == 1
    assert parses == ['{"a": 1}']
