"""RubricEditor: edits validated by the rubric models, written back, and reverted when bad."""

from __future__ import annotations

import copy

import pandas as pd
import pytest

from rubriclab.alignment import Change
from rubriclab.rubric import Criterion, Rubric
from rubriclab.widgets import RubricEditor
from tests._view_data import SUPPORT, XSS, record_comms


def _cases() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "prompt": ["When is the deadline?", "What is the refund window?"],
            "rubric": [
                Rubric.checklist(["States August 15th?", "Mentions late fees?"]),
                Rubric.checklist(["Says 30 days?"], pass_mark=0.5),
            ],
        }
    )


def test_a_valid_edit_lands_in_the_rubric_and_the_dataframe() -> None:
    cases = _cases()
    editor = RubricEditor(cases)
    value = copy.deepcopy(editor.value)
    value["criteria"][0]["description"] = "Does it state the deadline (August 15th)?"
    editor.set_state({"value": value})
    assert editor.rubric.criteria[0].description == "Does it state the deadline (August 15th)?"
    assert (
        cases.at[0, "rubric"].criteria[0].description == "Does it state the deadline (August 15th)?"
    )
    assert isinstance(cases.at[0, "rubric"], Rubric)
    assert editor.error is None
    assert editor.revision == 1


def test_an_invalid_edit_is_reverted_in_the_browser_too(monkeypatch: pytest.MonkeyPatch) -> None:
    comms = record_comms(monkeypatch)
    cases = _cases()
    editor = RubricEditor(cases)
    comm = comms[-1]
    good = copy.deepcopy(editor.value)
    bad = copy.deepcopy(editor.value)
    bad["criteria"][1]["weight"] = "heavy"
    editor.set_state({"value": bad})
    # the kernel keeps the last good rubric and says which criterion and field is wrong
    assert editor.value == good
    assert editor.rubric == cases.at[0, "rubric"]
    assert editor.rubric.criteria[1].weight == 1.0
    assert editor.error is not None
    assert editor.error["message"].startswith("criterion 'q2' (#2) weight:")
    assert editor.error["path"] == ["criteria", 1, "weight"]
    # ...and the browser is told explicitly: an update with the good value follows the echo
    sent = comm.updates("value")
    assert sent and sent[-1] == good
    assert comm.updates("error")[-1]["path"] == ["criteria", 1, "weight"]
    # the next good edit clears the error
    fixed = copy.deepcopy(editor.value)
    fixed["criteria"][1]["weight"] = 2
    editor.set_state({"value": fixed})
    assert editor.error is None and cases.at[0, "rubric"].criteria[1].weight == 2


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (
            lambda v: v["criteria"][0].update(critical=5),
            "critical level 5 is not one of its levels",
        ),
        (lambda v: v["criteria"].clear(), "at least one criterion"),
        (lambda v: v["criteria"][1].update(name="q1"), "'q1' appears twice"),
        (lambda v: v["criteria"][0]["levels"][1].update(descriptor="  "), "descriptor is empty"),
        (lambda v: v["criteria"][0]["levels"][1].update(score=0), "level score 0 appears twice"),
        (lambda v: v.update(pass_mark=150), "pass_mark must be a fraction"),
        (lambda v: v["criteria"][0].update(colour="red"), "Extra inputs are not permitted"),
    ],
)
def test_every_kind_of_bad_edit_is_refused_with_the_models_message(edit, message) -> None:  # type: ignore[no-untyped-def]
    editor = RubricEditor(_cases())
    before = copy.deepcopy(editor.value)
    value = copy.deepcopy(editor.value)
    edit(value)
    editor.set_state({"value": value})
    assert message in editor.error["message"]
    assert editor.value == before


def test_the_editor_applies_the_negative_weight_rule_of_the_model() -> None:
    editor = RubricEditor(SUPPORT)
    value = copy.deepcopy(editor.value)
    value["criteria"][0]["weight"] = -2  # a scale criterion cannot be a penalty
    editor.set_state({"value": value})
    assert "only a yes/no criterion may be a penalty" in editor.error["message"]
    assert editor.error["path"][:2] == ["criteria", 0]
    value = copy.deepcopy(editor.value)
    value["criteria"][1]["weight"] = -1  # a yes/no question can: points off when YES
    editor.set_state({"value": value})
    assert editor.error is None and editor.rubric["deadline"].weight == -1


def test_add_delete_reorder_and_canonical_values_come_back() -> None:
    editor = RubricEditor(SUPPORT)
    value = copy.deepcopy(editor.value)
    value["criteria"].reverse()
    value["criteria"].append(
        {
            "name": "q3",
            "description": "Polite?",
            "levels": [{"score": 1, "descriptor": "YES"}, {"score": 0, "descriptor": "NO"}],
            "weight": 1,
            "critical": None,
            "category": None,
        }
    )
    value["pass_mark"] = 80  # people type percentages
    editor.set_state({"value": value})
    assert editor.rubric.names == ["deadline", "accuracy", "q3"]
    assert editor.rubric.pass_mark == pytest.approx(0.8)
    assert editor.value["pass_mark"] == pytest.approx(0.8)  # canonical form sent back
    assert [lv["score"] for lv in editor.value["criteria"][2]["levels"]] == [0, 1]
    value = copy.deepcopy(editor.value)
    del value["criteria"][0]
    editor.set_state({"value": value})
    assert editor.rubric.names == ["accuracy", "q3"]


def test_navigating_a_column_of_rubrics_case_by_case() -> None:
    cases = _cases()
    editor = RubricEditor(cases)
    assert editor.count == 2 and editor.heading == "prompt: When is the deadline?"
    editor.set_state({"index": 1})
    assert editor.value["criteria"][0]["description"] == "Says 30 days?"
    assert editor.heading == "prompt: What is the refund window?"
    value = copy.deepcopy(editor.value)
    value["criteria"][0]["description"] = "Says 30 days from delivery?"
    editor.set_state({"value": value})
    assert cases.at[1, "rubric"].criteria[0].description == "Says 30 days from delivery?"
    assert cases.at[0, "rubric"].criteria[0].description == "States August 15th?"
    assert [r.criteria[0].description for r in editor.rubrics] == [
        "States August 15th?",
        "Says 30 days from delivery?",
    ]


def test_rubrics_stored_as_dicts_or_json_and_missing_ones() -> None:
    frame = pd.DataFrame({"rubric": [SUPPORT.to_dict(), SUPPORT.to_json(), None]})
    editor = RubricEditor(frame)
    assert editor.rubric == SUPPORT
    editor.set_state({"index": 1})
    assert editor.rubric == SUPPORT
    with pytest.raises(ValueError, match="row 2 has no rubric in column 'rubric'"):
        editor.set_state({"index": 2})
    with pytest.raises(KeyError, match="no 'rubric' column"):
        RubricEditor(pd.DataFrame({"prompt": ["x"]}))
    with pytest.raises(TypeError, match="RubricEditor edits a Rubric"):
        RubricEditor(42)


def test_static_forms_escape_rubric_text() -> None:
    rubric = Rubric(criteria=[Criterion.yes_no(XSS[3], name="x")])
    editor = RubricEditor(rubric)
    bundle, _ = editor._repr_mimebundle_()
    assert "<iframe" not in bundle["text/html"] and "&lt;iframe" in bundle["text/html"]
    assert bundle["text/plain"].splitlines()[0] == "Rubric: 1 criteria, pass mark none"


def test_opening_at_a_later_case() -> None:
    editor = RubricEditor(_cases(), index=1)
    assert editor.index == 1
    assert editor.rubric.criteria[0].description == "Says 30 days?"
    with pytest.raises(IndexError, match="there are 2 rubrics"):
        RubricEditor(_cases(), index=2)


# -- proposed changes (rl.align's): apply or reject each ---------------------------------------
def _proposals() -> list[Change]:
    rewritten = Criterion(name="q1", description=f"Does it give the date (August 15th)? {XSS[1]}")
    return [
        Change(
            "rewrite", "q1", "States August 15th?", rewritten.question, True, proposal=rewritten
        ),
        Change("pass_mark", "overall", "none", "50%", True, proposal=0.5),
        Change("example", None, "", "row 3: 'x' (q1=1)", True),
        Change("rewrite", "q9", "Gone?", "Still gone?", False, proposal=Criterion(name="q9")),
    ]


def test_a_proposal_applied_changes_the_rubric_and_the_grid(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    comms = record_comms(monkeypatch)
    cases = _cases()
    editor = RubricEditor(cases, proposals=_proposals())
    comm = comms[-1]
    shown = editor.proposals
    assert [p["status"] for p in shown] == ["open", "open", "not applicable", "not applicable"]
    assert shown[0]["before"] == "States August 15th?"
    assert shown[0]["after"].endswith(XSS[1])  # text: the view writes it as text, never HTML
    assert "belong to the metric" in shown[2]["why"]
    assert shown[3]["why"] == "criterion 'q9' is no longer in the rubric"
    # the browser's Apply button sends a message; the edit goes the same way as a grid edit
    editor._on_proposal_msg(editor, {"type": "rl:proposal", "index": 0, "action": "apply"}, [])
    assert editor.rubric.criteria[0].description.startswith("Does it give the date")
    assert editor.rubric.criteria[0].weight == 1.0
    assert cases.at[0, "rubric"].criteria[0].description.startswith("Does it give the date")
    assert editor.value["criteria"][0]["description"].startswith("Does it give the date")
    assert comm.updates("value")[-1]["criteria"][0]["description"].startswith("Does it give")
    assert editor.proposals[0]["status"] == "applied"
    assert editor.revision == 1
    editor.apply(1)
    assert editor.rubric.pass_mark == 0.5
    assert editor.proposals[1]["status"] == "applied"
    with pytest.raises(ValueError, match="already applied"):
        editor.apply(1)
    with pytest.raises(ValueError, match="no longer in the rubric"):
        editor.apply(3)


def test_a_rejected_proposal_is_dropped_and_the_rubric_unchanged() -> None:
    editor = RubricEditor(Rubric.checklist(["States August 15th?", "Mentions late fees?"]))
    editor.propose(_proposals())
    before = editor.rubric
    editor._on_proposal_msg(editor, {"type": "rl:proposal", "index": 0, "action": "reject"}, [])
    assert editor.rubric is before
    assert editor.proposals[0]["status"] == "rejected"
    assert editor.revision == 0
    # a message with an unknown action or index changes nothing
    editor._on_proposal_msg(editor, {"type": "rl:proposal", "index": 1, "action": "drop"}, [])
    editor._on_proposal_msg(editor, {"type": "rl:proposal", "index": 99, "action": "apply"}, [])
    assert editor.proposals[1]["status"] == "open"
    assert editor.rubric is before


def test_a_criterion_edited_away_makes_its_proposal_not_applicable() -> None:
    editor = RubricEditor(Rubric.checklist(["States August 15th?", "Mentions late fees?"]))
    editor.propose(_proposals())
    value = copy.deepcopy(editor.value)
    value["criteria"][0]["name"] = "date"  # renamed: the proposal's target is gone
    editor.set_state({"value": value})
    assert editor.rubric.criteria[0].name == "date"
    assert editor.proposals[0]["status"] == "not applicable"
    assert editor.proposals[0]["why"] == "criterion 'q1' is no longer in the rubric"
    with pytest.raises(ValueError, match="cannot be applied"):
        editor.apply(0)
    assert editor.rubric.criteria[0].description == "States August 15th?"


def test_propose_an_alignment_takes_the_changes_it_kept() -> None:
    with pytest.raises(TypeError, match=r"rl\.align"):
        RubricEditor(Rubric.checklist(["A?"]), proposals="rewrite q1")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="not an alignment Change"):
        RubricEditor(Rubric.checklist(["A?"]), proposals=[{"kind": "rewrite"}])  # type: ignore[list-item]
