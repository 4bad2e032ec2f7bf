"""Judge text -> typed results: the shapes judges really write, and nothing but ParseError."""

from __future__ import annotations

import json
import pickle
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rubriclab.parse import (
    IdMismatch,
    ParseError,
    extract_json,
    match_ids,
    parse_choice,
    parse_result_score,
    parse_verdict,
)

# --- extract_json: where judges put their JSON -----------------------------------------


@pytest.mark.parametrize("lang", ["json", "JSON", "Json", "", "jsonc"])
def test_json_in_a_fence_of_any_case_with_prose_around(lang: str) -> None:
    text = (
        f'Here is my assessment.\n```{lang}\n{{"q1": {{"verdict": "yes"}}}}\n```\nHope this helps!'
    )
    assert extract_json(text) == {"q1": {"verdict": "yes"}}


def test_unfenced_json_inside_prose() -> None:
    text = 'After careful thought, my answer is {"score": 0.8, "rationale": "grounded"} — done.'
    assert extract_json(text, expect=dict) == {"score": 0.8, "rationale": "grounded"}


def test_the_last_fence_of_the_expected_kind_wins() -> None:
    # judges that reason first write drafts; the answer they end on is the answer
    text = (
        "```json\n[1, 2]\n```\nActually, in the required shape:\n"
        '```json\n{"a": 1}\n```\n```json\n{"a": 2}\n```'
    )
    assert extract_json(text, expect=dict) == {"a": 2}
    assert extract_json(text, expect=list) == [1, 2]
    assert extract_json(text) == {"a": 2}  # an object beats a stray array


def test_a_strict_block_beats_an_earlier_block_that_needs_repair() -> None:
    text = '```json\n{"a": 1,}\n```\n```json\n{"a": 2}\n```'
    assert extract_json(text) == {"a": 2}


def test_a_fence_that_is_not_json_is_skipped() -> None:
    text = '```python\nprint("hi")\n```\nResult:\n{"ok": true}'
    assert extract_json(text) == {"ok": True}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"a": 1, "b": [1, 2,],}', {"a": 1, "b": [1, 2]}),
        ("{'a': 'single quotes'}", {"a": "single quotes"}),
        ("{a: 1, b: 2}", {"a": 1, "b": 2}),
        ('{"ok": True, "missing": None, "no": False}', {"ok": True, "missing": None, "no": False}),
        ('{\n  // the verdict\n  "v": "yes" /* final */\n}', {"v": "yes"}),
    ],
)
def test_near_json_is_repaired_only_after_strict_parsing_fails(
    text: str, expected: dict[str, Any]
) -> None:
    assert extract_json(text, expect=dict) == expected


@pytest.mark.parametrize(
    "text",
    [
        '```json\n{"q1": {"verdict": "yes"}, "q2": {"verdict": "no", "reason": "cut of',
        '{"criteria": {"quality": {"reasoning": "flawless", "score": 1',
        '{"rationale": "fine", "score": 0',
        '[{"id": "q1", "verdict": "YES"}, {"id": "q2", "verd',
    ],
)
def test_a_cut_off_answer_is_never_completed_by_repair(text: str) -> None:
    # repair is for syntax noise; a missing tail would be a guessed verdict (0 from "score": 0...)
    with pytest.raises(ParseError, match="stops before it is closed") as info:
        extract_json(text)
    assert info.value.raw == text


@pytest.mark.parametrize(
    "text",
    [
        '{"verdicts": {"q1": {"verdict": "YES"}, "q1": {"verdict": "NO"}}}',
        '```json\n{"q1": "YES", "q1": "NO"}\n```',
        'Here: {"score": 1, "score": 0} done',
    ],
)
def test_a_key_given_twice_with_different_values_is_unreadable(text: str) -> None:
    with pytest.raises(ParseError, match="twice with different values"):
        extract_json(text)


def test_an_identical_repeat_is_merged() -> None:
    assert extract_json('{"q1": "YES", "q1": "YES"}') == {"q1": "YES"}


def test_valid_json_is_never_touched_by_repair() -> None:
    # json-repair would "fix" this string's contents; strict parsing returns it exactly.
    text = '{"text": "a,} b // not a comment ,]"}'
    assert extract_json(text) == {"text": "a,} b // not a comment ,]"}


@pytest.mark.parametrize(
    "text",
    [
        "The response is good. Verdict: yes.",
        "hello world",
        "42",
        '"just a string"',
        "{hello",  # json-repair would call this ['hello']
        "",
        "   \n ",
    ],
)
def test_prose_never_becomes_an_object(text: str) -> None:
    with pytest.raises(ParseError) as info:
        extract_json(text, expect=dict)
    assert info.value.raw == text


def test_a_bare_scalar_is_only_accepted_when_it_is_the_whole_reply() -> None:
    assert extract_json("42") == 42
    assert extract_json(" true ") is True
    with pytest.raises(ParseError):
        extract_json("The score is 42")


def test_parse_error_keeps_the_full_raw_text_and_a_short_message() -> None:
    raw = "no json here " * 100
    with pytest.raises(ParseError) as info:
        extract_json(raw)
    err = info.value
    assert err.raw == raw
    assert err.reason == "no readable JSON object or array found in the judge output"
    assert len(str(err)) < 400
    assert isinstance(err, ValueError)
    again = pickle.loads(pickle.dumps(err))
    assert (again.reason, again.raw) == (err.reason, err.raw)


def test_non_text_is_a_parse_error_not_a_crash() -> None:
    for value in (None, 3, b"{}"):
        with pytest.raises(ParseError, match="not text"):
            extract_json(value)  # type: ignore[arg-type]


def test_deeply_nested_input_is_a_parse_error() -> None:
    with pytest.raises(ParseError):
        extract_json("[" * 100_000, expect=dict)


# --- verdicts, scores, choices ------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Reasoning...\nVerdict: [[YES]]", True),
        ("**Verdict:** No", False),
        ("Verdict: yes.", True),
        ("verdict - NO", False),
        ("Final verdict: **yes**", True),
        ("Instructions said Verdict: [[YES|NO]].\nThinking...\nVerdict: [[NO]]", False),
        ("Verdict: [[YES]]\nOn reflection...\nVerdict: [[NO]]", False),
        ("All good. [[YES]]", True),
    ],
)
def test_parse_verdict(text: str, expected: bool) -> None:
    assert parse_verdict(text) is expected


@pytest.mark.parametrize("text", ["Verdict: [[YES|NO]]", "maybe", "Verdict: unclear", ""])
def test_parse_verdict_refuses_to_guess(text: str) -> None:
    with pytest.raises(ParseError, match="no verdict found"):
        parse_verdict(text)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Feedback: clear and correct. [RESULT] 4", 4),
        ("[RESULT]: 3/5", 3),
        ("**[RESULT]** (2)", 2),
        ("[RESULT] 1\n...\n[RESULT] 5", 5),
        ("[result] 5.0", 5),
    ],
)
def test_parse_result_score(text: str, expected: int) -> None:
    assert parse_result_score(text) == expected


def test_parse_result_score_checks_the_scale() -> None:
    with pytest.raises(ParseError, match="outside the scale 1-5"):
        parse_result_score("[RESULT] 7", scale=(1, 5))
    with pytest.raises(ParseError, match=r"no '\[RESULT\] <score>' marker"):
        parse_result_score("The score is 4")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Choice: A", "A"),
        ("Winner: Response B", "B"),
        ("**Verdict:** tie", "tie"),
        ("Final answer: [[B]]", "B"),
        ("I pick [[C]]", "tie"),
        ("Output [[A|B|C]] ... so [[A]]", "A"),
        ("Preference: both equal", "tie"),
    ],
)
def test_parse_choice(text: str, expected: str) -> None:
    assert parse_choice(text) == expected


def test_parse_choice_refuses_to_guess() -> None:
    with pytest.raises(ParseError, match="no pairwise choice"):
        parse_choice("Both have merits.")


# --- matching results to rubric ids -------------------------------------------------------


def test_match_ids_from_a_mapping_in_rubric_order() -> None:
    judged = {"q2": {"verdict": "no"}, " q1 ": {"verdict": "yes"}}
    assert list(match_ids(judged, ["q1", "q2"]).items()) == [
        ("q1", {"verdict": "yes"}),
        ("q2", {"verdict": "no"}),
    ]


def test_match_ids_from_a_list_with_ids() -> None:
    judged = [{"id": "accuracy", "level": 3}, {"id": "tone", "level": 2}]
    out = match_ids(judged, ["tone", "accuracy"])
    assert out == {"tone": {"id": "tone", "level": 2}, "accuracy": {"id": "accuracy", "level": 3}}


def test_echoed_question_text_is_never_used_to_match() -> None:
    judged = [{"question": "Does it state the deadline?", "verdict": "yes"}]
    with pytest.raises(ParseError, match="result #1 has no 'id' field"):
        match_ids(judged, ["q1"])
    with pytest.raises(IdMismatch) as info:
        match_ids({"Does it state the deadline?": "yes"}, ["q1"])
    assert info.value.unknown == ["Does it state the deadline?"]
    assert info.value.missing == ["q1"]


def test_match_ids_reports_missing_unknown_and_duplicates_together() -> None:
    raw = '[{"id":"q1"},{"id":"q1"},{"id":"q9"}]'
    with pytest.raises(IdMismatch) as info:
        match_ids(json.loads(raw), ["q1", "q2", "q3"], raw=raw)
    err = info.value
    assert (err.missing, err.unknown, err.duplicates) == (["q2", "q3"], ["q9"], ["q1"])
    assert err.raw == raw
    assert "missing ids: q2, q3; unknown ids: q9; ids given more than once: q1" in str(err)
    again = pickle.loads(pickle.dumps(err))
    assert isinstance(again, IdMismatch)
    assert again.missing == ["q2", "q3"]


def test_match_ids_rejects_other_shapes() -> None:
    with pytest.raises(ParseError, match="must be an object keyed by id"):
        match_ids("q1: yes", ["q1"])  # type: ignore[arg-type]


# --- fuzz -------------------------------------------------------------------------------

json_scalars = st.none() | st.booleans() | st.integers(-(10**6), 10**6) | st.text(max_size=20)
json_values = st.recursive(
    json_scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
# Prose judges write around their JSON: no brackets, backticks or quotes of its own.
prose = st.text(
    alphabet=st.characters(blacklist_characters="{}[]`\"'", blacklist_categories=("Cs",)),
    max_size=60,
)


def dumps_trailing_commas(value: Any) -> str:
    """JSON with a trailing comma in every non-empty object and array."""
    if isinstance(value, dict):
        if not value:
            return "{}"
        items = "".join(f"{json.dumps(k)}: {dumps_trailing_commas(v)}, " for k, v in value.items())
        return "{" + items + "}"
    if isinstance(value, list):
        if not value:
            return "[]"
        return "[" + "".join(f"{dumps_trailing_commas(v)}, " for v in value) + "]"
    return json.dumps(value)


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=400), st.sampled_from([None, dict, list]))
def test_arbitrary_text_raises_nothing_but_parse_error(text: str, expect: Any) -> None:
    for parser in (
        lambda t: extract_json(t, expect=expect),
        parse_verdict,
        parse_result_score,
        parse_choice,
    ):
        try:
            parser(text)
        except ParseError as exc:
            raw = exc.raw
            assert raw == text


@settings(max_examples=200)
@given(st.text(alphabet="{}[]:,\"'` \n0123456789abtruefalsnjo/*", max_size=200))
def test_json_like_noise_raises_nothing_but_parse_error(text: str) -> None:
    try:
        value = extract_json(text, expect=dict)
    except ParseError:
        return
    assert isinstance(value, dict)


@settings(max_examples=200)
@given(
    st.dictionaries(st.text(max_size=8), json_values, min_size=1, max_size=5),
    prose,
    prose,
    st.sampled_from(["```json\n{}\n```", "```JSON\n{}\n```", "{}", "```\n{}"]),
)
def test_round_trip_through_fences_and_prose(
    value: dict[str, Any], before: str, after: str, wrapper: str
) -> None:
    body = wrapper.replace("{}", json.dumps(value, ensure_ascii=False))
    assert extract_json(f"{before}\n{body}\n{after}", expect=dict) == value


@settings(max_examples=200)
@given(
    st.dictionaries(
        st.text(
            alphabet=st.characters(blacklist_characters="`", blacklist_categories=("Cs",)),
            max_size=8,
        ),
        st.recursive(
            st.none()
            | st.booleans()
            | st.integers(-1000, 1000)
            | st.text(
                alphabet=st.characters(blacklist_characters="`", blacklist_categories=("Cs",)),
                max_size=20,
            ),
            lambda inner: (
                st.lists(inner, max_size=3)
                | st.dictionaries(st.text(alphabet="abcxyz_", max_size=5), inner, max_size=3)
            ),
            max_leaves=8,
        ),
        min_size=1,
        max_size=5,
    ),
    prose,
)
def test_round_trip_with_trailing_commas(value: dict[str, Any], before: str) -> None:
    # A fence cannot contain its own delimiter, so values here carry no backticks.
    text = f"{before}\n```json\n{dumps_trailing_commas(value)}\n```\nThat is all."
    assert extract_json(text, expect=dict) == value


@settings(max_examples=100)
@given(st.lists(json_values, min_size=1, max_size=5), prose)
def test_round_trip_of_arrays(value: list[Any], before: str) -> None:
    assert extract_json(f"{before} {json.dumps(value)}", expect=list) == value


# --- extract_json: the last answer is the answer ---------------------------------------

_DRAFT_YES = '{"verdicts": {"q1": {"verdict": "YES"}, "q2": {"verdict": "YES"}}}'
_FINAL_NO = '{"verdicts": {"q1": {"verdict": "NO"}, "q2": {"verdict": "NO"}}}'


@pytest.mark.parametrize(
    "text",
    [
        # drafts in fences, inline, or one of each: the final verdict comes last
        f"Draft:\n```json\n{_DRAFT_YES}\n```\nOn reflection both fail.\n```json\n{_FINAL_NO}\n```",
        f"<think>First guess {_DRAFT_YES} but no, re-reading it...</think>\n{_FINAL_NO}",
        f"```json\n{_DRAFT_YES}\n```\nWait, that is wrong. Final answer: {_FINAL_NO}",
        f"Draft {_DRAFT_YES}. Final:\n```json\n{_FINAL_NO}\n```\nDone.",
        # the final needs repair (a trailing comma, Python words): still the final
        f"Draft {_DRAFT_YES}\nFinal: " + _FINAL_NO.replace("}}}", "},}}"),
        f"Draft {_DRAFT_YES}\nFinal: " + _FINAL_NO.replace('"NO"', "'NO'"),
    ],
)
def test_a_reasoning_judges_final_verdict_wins_over_its_draft(text: str) -> None:
    assert extract_json(text, expect=dict) == json.loads(_FINAL_NO)


def test_one_answer_with_prose_braces_after_it_is_still_the_answer() -> None:
    # negative control: prose braces and a stray list after the answer are not later answers
    text = f"{_FINAL_NO}\nI checked the set {{a, b}} of claims, see [note] and [1]."
    assert extract_json(text, expect=dict) == json.loads(_FINAL_NO)
    assert extract_json(text) == json.loads(_FINAL_NO)


def test_a_cut_off_final_answer_never_lets_the_draft_win() -> None:
    tail = '{"verdicts": {"q1": {"verdict": "NO"}, "q2": {"verd'
    text = f"Draft:\n```json\n{_DRAFT_YES}\n```\nFinal: {tail}"
    with pytest.raises(ParseError, match="earlier draft is never taken") as info:
        extract_json(text, expect=dict)
    assert info.value.raw == text


def test_two_answers_that_both_need_repair_give_the_last() -> None:
    text = "Draft {'verdict': 'YES',} ... final {\"verdict\": 'NO',}"
    assert extract_json(text, expect=dict) == {"verdict": "NO"}
