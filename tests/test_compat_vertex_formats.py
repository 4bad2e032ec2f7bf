"""Vertex-format judge replies: the shapes Vertex's templates ask for, and the drift judges show."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rubriclab.compat.vertex.formats import (
    RATINGS,
    parse_pairwise,
    parse_pointwise,
    parse_rubric_score,
    parse_rubrics,
    parse_sxs_rating,
)
from rubriclab.parse import ParseError

# --- rubric generation -----------------------------------------------------------------

# The seed's generation prompt shows this schema, trailing commas included; judges copy it.
SEED_SHAPED_REPLY = """After three iterations, here are the final rubrics.
```json
{
"questions": [
"Does the summary state that the Q3 goal is to launch 'Phoenix'?",
"Does the summary give the August 15th code-completion deadline?",
"Is the summary free of information not in the transcript?",
],
}
```
I hope these help."""


def test_questions_from_a_fenced_object_with_trailing_commas() -> None:
    rubric = parse_rubrics(SEED_SHAPED_REPLY)
    assert rubric.questions == [
        "Does the summary state that the Q3 goal is to launch 'Phoenix'?",
        "Does the summary give the August 15th code-completion deadline?",
        "Is the summary free of information not in the transcript?",
    ]
    assert rubric.extra == {}
    assert rubric.raw == SEED_SHAPED_REPLY


def test_extra_keys_are_returned_for_new_columns() -> None:
    reply = '```json\n{"description": "A dented rear bumper.", "questions": ["Q1?", "Q2?"]}\n```'
    rubric = parse_rubrics(reply)
    assert rubric.questions == ["Q1?", "Q2?"]
    assert rubric.extra == {"description": "A dented rear bumper."}


@pytest.mark.parametrize(
    "reply",
    [
        '["Q1?", "Q2?"]',
        'Rubric:\n```JSON\n["Q1?", "Q2?", ""]\n```',
        '[{"question": "Q1?"}, {"question": "Q2?"}]',
        '{"Questions": ["Q1?", "Q2?"]}',
        # a draft, then the final block: the last answer is the answer
        '```json\n{"questions": ["X?"]}\n```\nprose after\n```json\n{"questions": ["Q1?", "Q2?"]}\n```',
    ],
)
def test_questions_from_plain_lists_and_variants(reply: str) -> None:
    assert parse_rubrics(reply).questions == ["Q1?", "Q2?"]


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        ("I cannot produce rubrics for this prompt.", "no readable JSON"),
        ('{"rubric_count": 3}', "no 'questions' list"),
        ('{"questions": []}', "no rubric questions"),
        ('{"questions": [1, 2]}', "rubric item #1 is not a question"),
    ],
)
def test_unreadable_rubrics_raise_with_raw_text(reply: str, reason: str) -> None:
    with pytest.raises(ParseError, match=reason) as info:
        parse_rubrics(reply)
    assert info.value.raw == reply


# --- pointwise ---------------------------------------------------------------------------

POINTWISE = """<question>
STEP 1: Does the summary give the deadline?
STEP 2: Look for a date.
STEP 3: It says August 15th.
STEP 4: Correct.
STEP 5: Yes.
Question: Does the summary give the August 15th deadline?
Verdict: [[YES]]
</question>
<question>
STEP 1: Is it under 50 words?
Question: Is the summary under 50 words?
Verdict: [[NO]]
</question>
<question>
Question: Is the summary free of harmful content?
Verdict: [[YES]]
</question>
"""


def test_pointwise_blocks_in_order_with_question_and_reasoning() -> None:
    result = parse_pointwise(POINTWISE)
    assert [(v.question, v.verdict) for v in result.verdicts] == [
        ("Does the summary give the August 15th deadline?", True),
        ("Is the summary under 50 words?", False),
        ("Is the summary free of harmful content?", True),
    ]
    assert result.verdicts[0].reasoning.startswith("STEP 1: Does the summary give the deadline?")
    assert result.score == pytest.approx(2 / 3)
    assert result.stated_score is None


def test_reply_starting_inside_the_first_block_and_unclosed_last_block() -> None:
    reply = POINTWISE.removeprefix("<question>\n").rstrip().removesuffix("</question>")
    assert [v.verdict for v in parse_pointwise(reply).verdicts] == [True, False, True]


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("Verdict: YES", True),
        ("Verdict: no", False),
        ("**Verdict:** [[No]]", False),
        ("Verdict: [YES]", True),
        ("verdict: **yes**", True),
    ],
)
def test_verdicts_without_double_brackets(line: str, expected: bool) -> None:
    reply = f"<question>\nQuestion: Q?\n{line}\n</question>"
    assert parse_pointwise(reply).verdicts[0].verdict is expected


def test_echoed_format_instruction_is_not_a_verdict() -> None:
    reply = "Output format: Verdict: [[YES|NO]]\n<question>\nQuestion: Q1?\nVerdict: [[NO]]\n</question>"
    result = parse_pointwise(reply)
    assert [(v.question, v.verdict) for v in result.verdicts] == [("Q1?", False)]


def test_stated_rubric_score_is_read() -> None:
    result = parse_pointwise(POINTWISE + "[[Rubric Score: 2/3]]")
    assert result.stated_score == (2, 3)
    assert parse_rubric_score("nothing") is None
    with pytest.raises(ParseError, match="not a valid score"):
        parse_rubric_score("[[Rubric Score: 4/3]]")


def test_verdicts_are_matched_to_rubric_questions_by_position() -> None:
    result = parse_pointwise(POINTWISE)
    rubric = ["deadline?", "short?", "safe?"]
    assert result.by_position(rubric) == {"deadline?": True, "short?": False, "safe?": True}
    with pytest.raises(ParseError, match="3 verdicts for 2 rubric questions"):
        result.by_position(rubric[:2])


@pytest.mark.parametrize("reply", ["", "The response is fine.", "Verdict: [[YES|NO]]"])
def test_pointwise_without_verdicts_is_an_error_not_a_zero(reply: str) -> None:
    with pytest.raises(ParseError, match="no verdicts found") as info:
        parse_pointwise(reply)
    assert info.value.raw == reply


# --- pairwise ----------------------------------------------------------------------------


def section(side: str, verdicts: list[bool], score: bool = True) -> str:
    blocks = "".join(
        f"<question>\nSTEP 1: ...\nQuestion: Q{i + 1}?\nVerdict: [[{'YES' if v else 'NO'}]]\n</question>\n"
        for i, v in enumerate(verdicts)
    )
    tail = f"[[Rubric Score: {sum(verdicts)}/{len(verdicts)}]]\n" if score else ""
    return f"[[Response {side} Answers:]]\n{blocks}{tail}"


def test_pairwise_sections_and_rating() -> None:
    reply = section("A", [True, False]) + section("B", [True, True]) + "[[SxS Rating: B > A]]"
    result = parse_pairwise(reply)
    assert [v.verdict for v in result.a.verdicts] == [True, False]
    assert [v.verdict for v in result.b.verdicts] == [True, True]
    assert (result.a.stated_score, result.b.stated_score) == ((1, 2), (2, 2))
    assert result.rating == "B>A"
    assert result.b_preference == 0.5
    assert result.winner == "B"


@pytest.mark.parametrize(
    ("rating", "canonical", "b_preference"),
    [
        ("B >> A", "B>>A", 1.0),
        ("B>A", "B>A", 0.5),
        ("A = B", "A=B", 0.0),
        ("B = A", "A=B", 0.0),
        ("A > B", "A>B", -0.5),
        ("A >> B", "A>>B", -1.0),
        ("A < B", "B>A", 0.5),
        ("A << B", "B>>A", 1.0),
        ("B < A", "A>B", -0.5),
        ("B << A", "A>>B", -1.0),
    ],
)
def test_every_sxs_rating_form(rating: str, canonical: str, b_preference: float) -> None:
    assert parse_sxs_rating(f"...\n[[SxS Rating: {rating}]]") == canonical
    assert parse_sxs_rating(f"SxS Rating: {rating}") == canonical
    assert RATINGS[canonical] == b_preference


def test_sections_in_either_order_without_scores() -> None:
    reply = section("B", [False], score=False) + section("A", [True], score=False)
    result = parse_pairwise(reply + "[[SxS Rating: A>>B]]")
    assert result.a.verdicts[0].verdict is True
    assert result.b.verdicts[0].verdict is False
    assert result.winner == "A"


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        (section("A", [True]) + section("B", [True]), "no '\\[\\[SxS Rating"),
        (section("A", [True]) + "[[SxS Rating: A = B]]", "no '\\[\\[Response B Answers:\\]\\]'"),
        (
            section("A", [True]) + "[[Response B Answers:]]\nnothing\n[[SxS Rating: A>B]]",
            "Response B section has no verdicts",
        ),
        (section("A", [True]) + section("B", [True]) + "[[SxS Rating: A > A]]", "with itself"),
    ],
)
def test_broken_pairwise_replies_are_errors(reply: str, reason: str) -> None:
    with pytest.raises(ParseError, match=reason) as info:
        parse_pairwise(reply)
    assert info.value.raw == reply


# --- fuzz -------------------------------------------------------------------------------


@settings(max_examples=300)
@given(st.text(max_size=400))
def test_arbitrary_text_raises_nothing_but_parse_error(text: str) -> None:
    for parser in (
        parse_rubrics,
        parse_pointwise,
        parse_pairwise,
        parse_sxs_rating,
        parse_rubric_score,
    ):
        try:
            parser(text)
        except ParseError as exc:
            raw = exc.raw
            assert raw == text


@settings(max_examples=200)
@given(st.lists(st.text(alphabet="<>/[]questionQVerdictYESNO:|ABxS=\n ", max_size=30), max_size=12))
def test_format_like_noise_raises_nothing_but_parse_error(pieces: list[str]) -> None:
    text = "".join(pieces)
    for parser in (parse_pointwise, parse_pairwise):
        try:
            parser(text)
        except ParseError as exc:
            reason = exc.reason
            assert reason  # only ParseError may escape, and it says why


@settings(max_examples=150)
@given(
    st.lists(st.booleans(), min_size=1, max_size=8),
    st.lists(st.booleans(), min_size=1, max_size=8),
    st.sampled_from(sorted(RATINGS)),
)
def test_generated_pairwise_replies_read_back_exactly(
    a: list[bool], b: list[bool], rating: str
) -> None:
    left, op, right = rating[0], rating[1:-1], rating[-1]
    reply = section("A", a) + section("B", b) + f"[[SxS Rating: {left} {op} {right}]]"
    result = parse_pairwise(reply)
    assert [v.verdict for v in result.a.verdicts] == a
    assert [v.verdict for v in result.b.verdicts] == b
    assert result.rating == rating
