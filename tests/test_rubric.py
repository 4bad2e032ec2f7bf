"""The rubric model: constructors, validation that names the problem, YAML/JSON round trips."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

import rubriclab as rl
from rubriclab.rubric import RubricError, RubricWarning


def support_rubric() -> rl.Rubric:
    """The lesson's support-reply rubric, as the demo ships it (built with Rubric.analytic)."""
    from rubriclab.demo import support_rubric as lesson_rubric

    return lesson_rubric()


def test_yes_no_criterion_has_no_yes_levels_and_critical_means_must_be_yes() -> None:
    c = rl.Criterion.yes_no("Does the response state the deadline (August 15th)?", critical=True)
    assert [(lv.score, lv.descriptor) for lv in c.levels] == [(0, "NO"), (1, "YES")]
    assert c.is_yes_no and c.critical == 1
    assert c.question.startswith("Does the response")


def test_checklist_assigns_positional_ids_and_keeps_given_names() -> None:
    r = rl.Rubric.checklist(
        ["Is it short?", rl.Criterion.yes_no("Is it kind?", name="kind"), "Is it true?"]
    )
    assert r.names == ["q1", "kind", "q3"]
    assert r.is_checklist


def test_analytic_reads_like_the_lesson_and_sorts_levels() -> None:
    r = rl.Rubric.analytic({"x": {"levels": {3: "c", 1: "a", 2: "b"}}})
    assert r["x"].scores == [1, 2, 3]
    assert r["x"].descriptor(2) == "b"
    assert support_rubric()["accuracy"].critical == 2


def test_pass_mark_accepts_percentages_as_people_write_them() -> None:
    assert rl.Rubric.checklist(["q?"], pass_mark=70).pass_mark == pytest.approx(0.7)
    assert rl.Rubric.checklist(["q?"], pass_mark=0.7).pass_mark == pytest.approx(0.7)
    assert rl.Rubric.checklist(["q?"], pass_mark="70%").pass_mark == pytest.approx(0.7)
    assert rl.Rubric.from_yaml("pass_mark: 70%\ncriteria: [Is it short]").pass_mark == 0.7
    with pytest.raises(RubricError, match="pass_mark"):
        rl.Rubric.checklist(["q?"], pass_mark=170)
    with pytest.raises(RubricError, match=r"^pass_mark must be a fraction like 0\.7"):
        rl.Rubric.checklist(["q?"], pass_mark="high")


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (
            lambda: rl.Rubric.checklist(["a?", rl.Criterion.yes_no("b?", name="q1")]),
            "'q1' appears twice",
        ),
        (
            lambda: rl.Criterion(
                name="tone",
                levels=[rl.Level(score=1, descriptor="x"), rl.Level(score=1, descriptor="y")],
            ),
            "criterion 'tone': level score 1 appears twice",
        ),
        (lambda: rl.Level(score=1, descriptor="  "), "descriptor is empty"),
        (
            lambda: rl.Rubric.analytic({"accuracy": {"levels": 3, "critical": 5}}),
            "criterion 'accuracy': critical level 5 is not one of its levels",
        ),
        (lambda: rl.Criterion(name="w", weight=math.inf), "weight must be a finite number"),
        (lambda: rl.Criterion(name="w", weight=math.nan), "weight must be a finite number"),
        (
            lambda: rl.Criterion(name="one", levels=[rl.Level(score=1, descriptor="x")]),
            "criterion 'one': needs at least two levels",
        ),
        (lambda: rl.Rubric(criteria=[]), "at least one criterion"),
        (lambda: rl.Rubric.checklist([rl.Criterion.yes_no("bad?", weight=-1)]), "positive weight"),
        (
            lambda: rl.Rubric.model_validate({"criteria": [{"name": "a", "colour": "red"}]}),
            "colour",
        ),
    ],
)
def test_bad_rubrics_are_refused_with_the_field_named(build: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        build()  # type: ignore[operator]


def test_yaml_and_json_round_trip_exactly(tmp_path: Path) -> None:
    r = support_rubric()
    assert rl.Rubric.from_yaml(r.to_yaml()) == r
    assert rl.Rubric.from_json(r.to_json()) == r
    path = tmp_path / "support.yaml"
    r.save(path)
    assert rl.Rubric.from_yaml(path) == r  # a Path is a file
    assert rl.Rubric.load(path) == r
    assert rl.Rubric.load(str(path)) == r
    jpath = tmp_path / "support.json"
    r.save(jpath)
    assert rl.Rubric.from_json(jpath.read_text()) == r


def test_short_yaml_forms_people_write_by_hand() -> None:
    text = """
pass_mark: 70
criteria:
  accuracy:
    weight: 0.4
    critical: 2
    levels: {1: wrong, 2: vague, 3: precise}
  tone:
    weight: 0.6
    levels: 3
"""
    with pytest.warns(RubricWarning, match="'levels: 3' gives levels without descriptors"):
        r = rl.Rubric.from_yaml(text)
    assert r.names == ["accuracy", "tone"]
    assert r["accuracy"].descriptor(3) == "precise"
    assert r.pass_mark == pytest.approx(0.7)
    checklist = rl.Rubric.from_yaml("- Is it short?\n- question: Is it polite?\n  critical: true\n")
    assert checklist.names == ["q1", "q2"] and checklist["q2"].critical == 1


def test_yaml_keeps_yes_no_on_off_as_words() -> None:
    r = rl.Rubric.from_yaml(
        "criteria:\n  answered:\n    levels: {1: no, 2: partly, 3: yes}\n"
        "  switch:\n    levels: {0: off, 1: on}\n"
    )
    assert [lv.descriptor for lv in r["answered"].levels] == ["no", "partly", "yes"]
    assert [lv.descriptor for lv in r["switch"].levels] == ["off", "on"]
    # YAML 1.2 still reads true/false as booleans: a critical yes/no item
    assert rl.Rubric.from_yaml("- question: Safe?\n  critical: true\n")["q1"].critical == 1


def test_negative_weights_have_one_meaning_in_yaml_too() -> None:
    penalty = rl.Rubric.from_yaml(
        "criteria:\n  - Is it correct?\n  - question: Is it rude?\n    weight: -1\n"
    )
    assert penalty.score({"q1": 1, "q2": 1}).value == 0.0  # correct but rude: 1 - 1 point
    with pytest.raises(ValueError, match="only a yes/no criterion may be a penalty"):
        rl.Rubric.from_yaml(
            "criteria:\n  quality:\n    weight: -1\n    levels: {1: bad, 2: ok, 3: good}\n"
        )


def test_the_two_common_rubric_mistakes_are_warned_about() -> None:
    with pytest.warns(RubricWarning, match="without descriptors"):
        rl.Rubric.analytic({"tone": {"levels": 3}})
    with pytest.warns(RubricWarning, match="has 7 levels"):
        rl.Rubric.analytic({"tone": {"levels": {i: f"described {i}" for i in range(1, 8)}}})


def test_bad_yaml_names_the_line() -> None:
    with pytest.raises(RubricError, match="line 3"):
        rl.Rubric.from_yaml("criteria:\n  - name: a\n  - name: b: c\n")


def test_unknown_key_in_a_criterion_is_an_error_naming_it() -> None:
    with pytest.raises(RubricError) as info:
        rl.Rubric.from_yaml("criteria:\n  - name: a\n    wieght: 2\n")
    assert str(info.value) == "unknown key 'wieght' at criteria[0].wieght (did you mean 'weight'?)"


def test_lookup_by_name_lists_the_names_on_a_miss() -> None:
    with pytest.raises(KeyError, match="has: accuracy, completeness, tone, conciseness"):
        support_rubric()["accurracy"]


def test_from_yaml_text_never_opens_a_file(tmp_path: Path) -> None:
    path = tmp_path / "r.yaml"
    path.write_text("- Is it short?\n", encoding="utf-8")
    assert rl.Rubric.load(str(path)).names == ["q1"]  # a file is read by load (or a Path)
    assert rl.Rubric.from_yaml(path).names == ["q1"]
    for parse in (rl.Rubric.from_yaml, rl.Rubric.from_yaml_text):
        # text is text, whatever it ends in: never a file read (issue 25); the error says how
        with pytest.raises(
            rl.RubricError, match=r"looks like a file name; read files with Rubric.load"
        ):
            parse(str(path))
    assert rl.Rubric.from_yaml_text("- Is it short?\n").names == ["q1"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        # the mapping form keeps its key path, as the list form does
        (
            "criteria:\n  accuracy: {wieght: 1, levels: {1: a, 2: b}}\n",
            "unknown key 'wieght' at criteria.accuracy.wieght (did you mean 'weight'?)",
        ),
        (
            "criteria:\n  - {name: accuracy, wieght: 1}\n",
            "unknown key 'wieght' at criteria[0].wieght (did you mean 'weight'?)",
        ),
        (
            "criteria:\n  accuracy: {weight: heavy, levels: {1: a, 2: b}}\n",
            "criteria.accuracy.weight: expected a number, got 'heavy'",
        ),
        (
            "criteria:\n  - {name: accuracy, weight: heavy}\n",
            "criteria[0].weight: expected a number, got 'heavy'",
        ),
        (
            "criteria:\n  accuracy: {critical: 5, levels: {1: a, 2: b}}\n",
            "criteria.accuracy: criterion 'accuracy': critical level 5 is not one of its levels",
        ),
        (
            "criteria:\n  - name: a\n    levels: [{score: x, descriptor: d}, {score: 2, descriptor: e}]\n",
            "criteria[0].levels[0].score: expected a whole number, got 'x'",
        ),
        (
            "criteria:\n  a:\n    levels: [{score: x, descriptor: d}, {score: 2, descriptor: e}]\n",
            "criteria.a.levels[0].score: expected a whole number, got 'x'",
        ),
        ("pass_mark: high\ncriteria: [Is it short]\n", "pass_mark must be a fraction like 0.7"),
        (
            "pass_mark: high\ncriteria:\n  a: {levels: {1: x, 2: y}}\n",
            "pass_mark must be a fraction like 0.7",
        ),
        (
            "pasmark: 0.7\ncriteria: [Is it short]\n",
            "unknown key 'pasmark' (did you mean 'pass_mark'?)",
        ),
        (
            "pasmark: 0.7\ncriteria:\n  a: {levels: {1: x, 2: y}}\n",
            "unknown key 'pasmark' (did you mean 'pass_mark'?)",
        ),
        ("criteria: []\n", "rubric: a rubric needs at least one criterion"),
        (
            "criteria:\n  a: 3\n",
            "criteria.a: expected a mapping (weight, levels, critical ...), got 3",
        ),
    ],
)
def test_rubric_errors_are_one_line_in_the_users_keys(text: str, message: str) -> None:
    with pytest.raises(RubricError) as info:
        rl.Rubric.from_yaml(text)
    told = str(info.value)
    assert told.startswith(message), told
    assert "\n" not in told
    for leak in ("pydantic", "type=", "validation error for", "Value error", "input_value"):
        assert leak not in told
    error = info.value  # no chained pydantic text under it either
    assert error.__cause__ is None and (error.__context__ is None or error.__suppress_context__)


def test_code_built_rubrics_and_assignments_fail_in_the_users_terms_too() -> None:
    cases = [
        (lambda: rl.Criterion(name="w", wieght=2), "unknown key 'wieght' (did you mean 'weight'?)"),
        (lambda: rl.Level(score="high", descriptor="x"), "score: expected a whole number"),
        (lambda: rl.Rubric(criteria="nope"), "criteria: expected a list"),
        (lambda: rl.Rubric.checklist([{"question": "a?", "wieght": 2}]), "did you mean 'weight'?"),
        (lambda: rl.Rubric.checklist([3]), "checklist items are questions (text) or criteria"),
        (lambda: rl.Criterion.yes_no(""), "a yes/no criterion needs a question"),
    ]
    for build, message in cases:
        with pytest.raises(RubricError) as info:
            build()
        assert message in str(info.value) and "pydantic" not in str(info.value)
    rubric = support_rubric()
    with pytest.raises(RubricError, match=r"^pass_mark must be a fraction"):
        rubric.pass_mark = "high"  # type: ignore[assignment]
    assert rubric.pass_mark == 0.7  # unchanged


def test_rubric_errors_read_under_a_config_path() -> None:
    with pytest.raises(RubricError) as info:
        rl.Rubric.from_yaml("criteria:\n  accuracy: {wieght: 1, levels: {1: a, 2: b}}\n")
    assert info.value.retold("metrics[0].rubric") == (
        "unknown key 'wieght' at metrics[0].rubric.criteria.accuracy.wieght "
        "(did you mean 'weight'?)"
    )
