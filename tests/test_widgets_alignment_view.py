"""AlignmentView: before/after per criterion, the gain in words, every change with its wording
as a word diff; all text escaped (rewrites come from a model)."""

from __future__ import annotations

import math

import pytest

import rubriclab as rl
from rubriclab.alignment import AlignFigures, Alignment, Change, Gain
from rubriclab.widgets._static.alignment import word_diff

RUBRIC = rl.Rubric(criteria=[rl.Criterion.yes_no("Is it detailed?", name="detail")])


def _alignment(gain: Gain, changes: list[Change]) -> Alignment:
    metric = rl.metrics.RubricMetric(rubric=RUBRIC, name="support")
    per = {"detail": {"exact": 0.5, "kappa": 0.1, "items": 10.0}}
    after = {"detail": {"exact": 0.9, "kappa": 0.8, "items": 10.0}}
    return Alignment(
        original=metric,
        metric=metric,
        before=AlignFigures(0.5, 0.1, 10, 10, per),
        after=AlignFigures(0.9, 0.8, 10, 10, after),
        gain=gain,
        changes=changes,
        train_rows=[0, 1],
        validation_rows=[2],
        test_rows=list(range(3, 13)),
        calls=42,
        max_calls=100,
        seed=0,
    )


def test_the_view_shows_the_gain_the_table_and_a_diff_with_text_escaped() -> None:
    hostile = "Does it have at least 20 words? <img src=x onerror=alert(1)>"
    change = Change("rewrite", "detail", "Is it detailed?", hostile, True, 0.9, 0.8)
    al = _alignment(Gain(0.7, (0.4, 0.9), 0.4, (0.2, 0.6)), [change])
    view = rl.AlignmentView(al)
    bundle = view._repr_mimebundle_()
    page = bundle["text/html"]
    assert "<img" not in page and "&lt;img src=x onerror=alert(1)&gt;" in page
    assert 'data-reliable="true"' in page and "reliable gain: kappa +0.70" in page
    assert "<del" in page and "<ins" in page and "detailed?" in page
    assert "50%" in page and "90%" in page and "0.10" in page and "0.80" in page
    assert "42 judge calls of 100" in page
    assert "[kept] rewrite · detail" in bundle["text/plain"]


def test_no_reliable_gain_is_said_in_words() -> None:
    al = _alignment(Gain(0.05, (-0.1, 0.2), 0.0, (-0.1, 0.1)), [])
    page = rl.AlignmentView(al).to_html()
    assert "no reliable gain" in page and 'data-reliable="false"' in page
    assert "No change was tried." in page
    assert "no reliable gain" in al.summary
    nan = _alignment(Gain(math.nan, (math.nan, math.nan), math.nan, (math.nan, math.nan)), [])
    assert not nan.gain.reliable


def test_word_diff_marks_words_removed_and_added() -> None:
    assert word_diff("Is it detailed?", "Is it long?") == [
        ("=", "Is it "),
        ("-", "detailed?"),
        ("+", "long?"),
    ]


def test_the_view_refuses_anything_but_an_alignment() -> None:
    with pytest.raises(ValueError, match=r"shows what rl\.align"):
        rl.AlignmentView("nope")  # type: ignore[arg-type]


def test_each_criterion_shows_its_kappa_gain_with_its_interval() -> None:
    per = {"detail": {"kappa": 0.7, "low": 0.3, "high": 0.95}}
    al = _alignment(Gain(0.7, (0.4, 0.9), 0.4, (0.2, 0.6), 0.001, per), [])
    page = rl.AlignmentView(al).to_html()
    assert "kappa gain [95%]" in page
    assert "+0.70 [+0.30, +0.95]" in page  # the criterion's own interval
    assert "+0.70 [+0.40, +0.90]" in page  # all criteria
    assert "+0.70 [+0.30, +0.95]" in repr(rl.AlignmentView(al))


def test_an_alignment_displays_itself_through_the_presentation_hook() -> None:
    hostile = "<script>alert(1)</script> at least 20 words?"
    change = Change("cut_points", "detail", "judge 1→1, 2→2", hostile, True, 0.9, 0.8)
    al = _alignment(Gain(0.7, (0.4, 0.9), 0.4, (0.2, 0.6), 0.001), [change])
    bundle = al._repr_mimebundle_()
    assert bundle["text/html"] == rl.AlignmentView(al).to_html()
    assert "<script>" not in bundle["text/html"] and "&lt;script&gt;" in bundle["text/html"]
    assert "cut points · detail" in bundle["text/plain"]
    assert bundle["text/plain"].startswith(al.summary)
