"""The mock's pairwise answers follow the responses' content, so both orders (A/B, B/A) agree."""

from __future__ import annotations

import json
import random
from typing import Any

import pandas as pd
import pytest

import rubriclab as rl
from rubriclab import schemas
from rubriclab.critique import critique_variables, template_for
from rubriclab.data import Case
from rubriclab.judges import mockpair
from rubriclab.judges.mock import mock_answer
from rubriclab.judges.mockdata import SchemaFiller
from rubriclab.judges.mockpair import find_pair

CHECKLIST = rl.Rubric.checklist(["Is it correct?", "Is it polite?", "Is it short?"])
ANALYTIC = rl.Rubric.analytic(
    {
        "accuracy": {"levels": {1: "wrong", 2: "partly right", 3: "right"}},
        "clarity": {"levels": {1: "unclear", 2: "clear enough", 3: "clear"}},
    }
)
MIRROR = {"A": "B", "B": "A", "tie": "tie"}
CHOICE_MIRROR = dict(zip(schemas.PAIRWISE_CHOICES, reversed(schemas.PAIRWISE_CHOICES), strict=True))
OTHER_SIDE = {"candidate": "baseline", "baseline": "candidate", "tie": "tie"}


def pairs_frame(rows: int) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "prompt": [f"Question {i}: what is {i} + {i}?" for i in range(rows)],
            "response": [f"It is {2 * i}." if i % 3 else f"Maybe {i}." for i in range(rows)],
            "baseline_model_response": [f"Perhaps {i}, or {2 * i}." for i in range(rows)],
        }
    )


def ask(rubric: rl.Rubric, a: str, b: str, prompt: str = "What is 2 + 2?") -> dict[str, Any]:
    """The mock's parsed answer to the built-in pairwise prompt with A and B in those slots."""
    variables = critique_variables(Case(id="0", index=0, prompt=prompt), rubric)
    variables.update(response_a=a, response_b=b, checklist=rubric.is_checklist)
    text = template_for("critique_pairwise").render(variables)
    fmt = schemas.response_format("vs_pairwise", schemas.pairwise_schema(rubric))
    answer: dict[str, Any] = json.loads(mock_answer([{"role": "user", "content": text}], fmt))
    return answer


def assert_mirrored(first: dict[str, Any], second: dict[str, Any]) -> None:
    for name, entry in first["criteria"].items():
        other = second["criteria"][name]
        assert (other["a"], other["b"]) == (entry["b"], entry["a"]), name
        assert other["winner"] == MIRROR[entry["winner"]], name
    assert second["overall"]["choice"] == CHOICE_MIRROR[first["overall"]["choice"]]


# -- over a frame, through evaluate -----------------------------------------------------------------


@pytest.mark.parametrize("rubric", [CHECKLIST, ANALYTIC], ids=["checklist", "analytic"])
def test_both_orders_agree_but_for_a_few_close_calls_leaning_to_slot_a(rubric: rl.Rubric) -> None:
    data = pairs_frame(40)
    metric = rl.metrics.PairwiseRubricMetric(rubric=rubric, name="vs")
    t = rl.evaluate(data, [metric], judge="mock").table
    assert t["vs/error"].isna().all()
    flips = int((~t["vs/swap_consistent"].astype(bool)).sum())
    assert 0 < flips <= len(data) // 5  # a plausible judge, not one with pure position bias
    for criteria, sides in zip(t["vs/criteria"], t["vs/candidate_criteria"], strict=True):
        for c in criteria:
            if not c["swap_consistent"]:  # a close call: slot A named in both orders
                assert (c["winner_candidate_first"], c["winner_baseline_first"]) == (
                    "candidate",
                    "baseline",
                )
                assert c["winner"] == "tie"
        assert all(s["consistent"] for s in sides)  # each response's level is the same in both
    assert set(t["vs/score"]) - {0.0}, "the mock never prefers either response"


def test_swapping_the_two_columns_swaps_the_winner() -> None:
    """The same two prompts, asked the other way round: every verdict mirrors, and stands."""
    data = pairs_frame(30)
    swapped = data.assign(
        response=data["baseline_model_response"], baseline_model_response=data["response"]
    )
    metric = rl.metrics.PairwiseRubricMetric(rubric=CHECKLIST, name="vs")
    one = rl.evaluate(data, [metric], judge="mock").table
    two = rl.evaluate(swapped, [metric], judge="mock").table
    assert (one["vs/score"] != 0).any() and one["vs/swap_consistent"].mean() >= 0.8
    assert two["vs/score"].tolist() == [-s + 0.0 for s in one["vs/score"]]
    assert two["vs/swap_consistent"].tolist() == one["vs/swap_consistent"].tolist()
    for mine, theirs in zip(one["vs/criteria"], two["vs/criteria"], strict=True):
        assert [OTHER_SIDE[c["winner"]] for c in mine] == [c["winner"] for c in theirs]
    assert one["vs/candidate_score"].tolist() == two["vs/baseline_score"].tolist()


def test_mock_judges_of_a_panel_do_not_all_agree() -> None:
    metric = rl.metrics.PairwiseRubricMetric(rubric=CHECKLIST, name="vs")
    scores = [
        rl.evaluate(pairs_frame(20), [metric], judge=f"mock:{name}").table["vs/score"].tolist()
        for name in ("a", "b")
    ]
    assert scores[0] != scores[1]


# -- one prompt, both orders ------------------------------------------------------------------------


@pytest.mark.parametrize("rubric", [CHECKLIST, ANALYTIC], ids=["checklist", "analytic"])
def test_b_then_a_is_the_mirror_of_a_then_b(
    rubric: rl.Rubric, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(mockpair, "LEAN_SHARE", 0.0)  # no close call leans to slot A
    rng = random.Random(7)
    for i in range(30):
        a = " ".join(rng.choice(["fine", "wrong", "It is 4.", "four"]) for _ in range(i % 5 + 1))
        b = f"Answer {i}: 4"
        assert_mirrored(ask(rubric, a, b), ask(rubric, b, a))
    assert ask(rubric, "same", "same")["overall"]["choice"] == "tie"


def test_on_a_close_call_a_leaning_mock_names_slot_a_in_both_orders(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(mockpair, "LEAN_SHARE", 1.0)  # every pair leans
    first, second = ask(CHECKLIST, "Yes.", "Yes."), ask(CHECKLIST, "Yes.", "Yes.")
    assert first == second  # same input, same answer
    for entry in first["criteria"].values():
        assert entry["a"] == entry["b"] and entry["winner"] == "A"
    assert first["overall"]["choice"] == "A better"


def test_levels_are_valid_and_the_winner_is_the_higher_level() -> None:
    for i in range(20):
        answer = ask(ANALYTIC, f"It is {i}.", f"Maybe {i}.")
        for entry in answer["criteria"].values():
            assert {entry["a"], entry["b"]} <= {1, 2, 3}
            want = "A" if entry["a"] > entry["b"] else "B" if entry["a"] < entry["b"] else None
            assert want is None or entry["winner"] == want
        assert answer["overall"]["choice"] in schemas.PAIRWISE_CHOICES


# -- finding the two responses ----------------------------------------------------------------------


def test_responses_that_quote_the_tags_are_still_found_whole() -> None:
    a = "I would write </response_A> here, and <response_A> there."
    b = "Mine ends with </response_B> and then more.\n</response_A>\n<response_B> too"
    text = f"Prompt <x>\n<response_A>\n{a}\n</response_A>\n\n<response_B>\n{b}\n</response_B>\n"
    pair = find_pair(text)
    assert pair is not None and (pair.a, pair.b) == (a, b)
    assert pair.shared == "Prompt <x>\n"


@pytest.mark.parametrize(
    "text",
    [
        "no tags at all",
        "<response_A>only A</response_A>",
        "<response_A>A</response_A> text between <response_B>B</response_B>",
        "<response_B>B first</response_B><response_A>A</response_A>",
    ],
)
def test_a_prompt_without_the_two_tagged_responses_keeps_the_plain_schema_answer(
    text: str,
) -> None:
    assert find_pair(text) is None
    schema = schemas.pairwise_schema(CHECKLIST)
    value = SchemaFiller(schema, random.Random(3), text).fill()
    before = json.dumps(value)
    mockpair.judge_pair(value, SchemaFiller(schema, random.Random(3), text), text, "mock")
    assert json.dumps(value) == before


def test_a_schema_with_no_winner_fields_is_left_as_filled() -> None:
    text = "<response_A>\nx\n</response_A>\n<response_B>\ny\n</response_B>"
    schema = schemas.checklist_schema(CHECKLIST)
    value = SchemaFiller(schema, random.Random(1), text).fill()
    before = json.dumps(value)
    mockpair.judge_pair(value, SchemaFiller(schema, random.Random(1), text), text, "mock")
    assert json.dumps(value) == before


def test_hostile_text_in_the_responses_gets_an_answer_not_an_error() -> None:
    many = "</response_A> " * 2000
    for a, b in [("\ud800 lone surrogate", "ok"), (many, "<response_B>" * 50), ("", "")]:
        first, second = ask(CHECKLIST, a, b), ask(CHECKLIST, b, a)
        assert set(first["criteria"]) == set(CHECKLIST.names)
        assert second["overall"]["choice"] in schemas.PAIRWISE_CHOICES


# -- the answer that says more --------------------------------------------------------------------

QUICKSTART = pd.DataFrame(  # the README quickstart's rows, as written there
    {
        "prompt": [
            "Can I get my money back for the blender I bought last week?",
            "I opened the box but never used the kettle. Can I return it?",
            "How long does shipping take?",
        ],
        "response": [
            "Yes. Within 30 days of delivery you get a full refund to your original payment method.",
            "No, opened items can't be returned.",
            "Standard shipping takes 3-5 business days; express takes 1-2.",
        ],
        "baseline_model_response": ["Sure.", "Maybe, ask the store.", "It depends."],
    }
)


def _readme_support() -> rl.Rubric:
    return rl.Rubric.analytic(
        {
            "accuracy": {
                "weight": 0.4,
                "critical": 2,
                "levels": {1: "error", 2: "vague", 3: "precise"},
            },
            "completeness": {"weight": 0.3, "levels": {1: "misses", 2: "partly", 3: "every part"}},
            "tone": {"weight": 0.2, "levels": {1: "rude", 2: "stiff", 3: "warm"}},
            "conciseness": {"weight": 0.1, "levels": {1: "padded", 2: "long", 3: "needed"}},
        },
        pass_mark=0.7,
    )


@pytest.mark.parametrize("rubric", [_readme_support(), CHECKLIST], ids=["readme", "checklist"])
def test_the_mock_prefers_the_answer_that_says_more_in_either_column(rubric: rl.Rubric) -> None:
    """Issue 26: on the README's quickstart the mock preferred "Sure." as often as the full
    answer. It follows the answers' share of words now, whichever column holds the longer one
    (the negative control: the same rows swapped), never the slot."""
    metric = rl.metrics.PairwiseRubricMetric(rubric=rubric, name="vs")
    one = rl.evaluate(QUICKSTART, [metric], judge="mock").table["vs/score"].tolist()
    # rows 0 and 2: 16 and 9 words against one or two; row 1 is 6 words against 4, a close
    # call the mock may tie, but the four-word "Maybe, ask the store." never wins it
    assert one[0] > 0 and one[2] > 0 and one[1] >= 0, one
    swapped = QUICKSTART.assign(
        response=QUICKSTART["baseline_model_response"],
        baseline_model_response=QUICKSTART["response"],
    )
    two = rl.evaluate(swapped, [metric], judge="mock").table["vs/score"].tolist()
    assert two == [-s + 0.0 for s in one]
    # a wider sample: longer candidate answers win far more often than they lose
    rows = 60
    longer = pd.DataFrame(
        {
            "prompt": [f"Question {i}?" for i in range(rows)],
            "response": [
                f"Answer {i}: the full reply, with the steps and the reason." for i in range(rows)
            ],
            "baseline_model_response": [f"Answer {i}." for i in range(rows)],
        }
    )
    scores = rl.evaluate(longer, [metric], judge="mock").table["vs/score"]
    assert (scores > 0).mean() >= 0.8 and (scores < 0).mean() <= 0.05


def test_answers_of_one_length_split_their_wins() -> None:
    """The control: with no difference in length the mock has no favourite column."""
    rows = 120
    same = pd.DataFrame(
        {
            "prompt": [f"Question {i}?" for i in range(rows)],
            "response": [f"Reply {i} alpha" for i in range(rows)],
            "baseline_model_response": [f"Reply {i} beta" for i in range(rows)],
        }
    )
    metric = rl.metrics.PairwiseRubricMetric(rubric=CHECKLIST, name="vs")
    scores = rl.evaluate(same, [metric], judge="mock").table["vs/score"]
    wins, losses = int((scores > 0).sum()), int((scores < 0).sum())
    assert wins + losses >= rows // 3
    assert abs(wins - losses) <= 0.3 * (wins + losses), (wins, losses)
