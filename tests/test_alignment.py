"""rl.align over the fake judge server answering as the simulated judge (real HTTP).

Each method must raise held-out kappa with an interval above 0 where the simulated judge is
misled, a shuffled-label control must report no reliable gain, and no test row may reach any
request before every choice is made, nor ever as an example or in an optimizer prompt.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import numpy as np
import pandas as pd
import pytest

import rubriclab as rl
from rubriclab.alignment import align, people_labels, split_rows
from rubriclab.testing import FakeJudgeServer, simulated_responder
from rubriclab.testing.simulated import alignment_demo, alignment_rubrics


@pytest.fixture(scope="module")
def server() -> Iterator[FakeJudgeServer]:
    with FakeJudgeServer(simulated_responder) as s:
        yield s


def _judge(server: FakeJudgeServer) -> rl.Judge:
    return rl.Judge(server.url, model="simulated", api_key="sk-test", max_retries=0)


def _text(body: dict[str, Any]) -> str:
    content = body["messages"][0]["content"]
    return content if isinstance(content, str) else " ".join(p.get("text", "") for p in content)


def _run(server: FakeJudgeServer, rubric: rl.Rubric, labels: pd.DataFrame, **kw: Any) -> Any:
    data, _ = alignment_demo()
    metric = rl.metrics.RubricMetric(rubric=rubric, name="support")
    return align(metric, data, labels, judge=_judge(server), progress=False, **kw)


def test_rewrites_alone_raise_held_out_kappa(server: FakeJudgeServer) -> None:
    vague, _ = alignment_rubrics()
    _, labels = alignment_demo()
    al = _run(server, vague, labels, methods=("rewrite",))
    assert al.gain.reliable, al.summary
    assert al.gain.kappa_interval[0] > 0
    kept = [c for c in al.kept if c.kind == "rewrite"]
    assert kept and all(c.validation is not None for c in kept)
    assert al.after.kappa > al.before.kappa
    # the aligned metric carries the new wording; the original is untouched
    assert al.metric.rubric.criteria != al.original.rubric.criteria
    assert al.original.rubric == vague
    assert "reliable gain" in al.summary and "no reliable gain" not in al.summary


def test_examples_alone_raise_held_out_kappa(server: FakeJudgeServer) -> None:
    vague, _ = alignment_rubrics()
    _, labels = alignment_demo()
    al = _run(server, vague, labels, methods=("examples",), k=6, pool=12)
    assert al.gain.reliable, al.summary
    examples = al.metric.examples
    assert examples and all(e.row in al.train_rows for e in examples)
    assert al.metric.rubric.criteria == vague.criteria  # wording unchanged by this method


def test_pass_mark_alone_raises_held_out_kappa_with_no_new_calls(
    server: FakeJudgeServer,
) -> None:
    _, clear = alignment_rubrics()  # levels right, pass mark (90%) stricter than people's
    _, labels = alignment_demo()
    al = _run(server, clear, labels, methods=("pass_mark",))
    assert al.gain.reliable, al.summary
    change = next(c for c in al.changes if c.kind == "pass_mark")
    assert change.kept and al.metric.rubric.pass_mark is not None
    assert al.metric.rubric.pass_mark < 0.9
    # each row judged once: the wording never changed, so the test rows' "after" is "before"
    per_split = len(al.train_rows) + len(al.validation_rows) + len(al.test_rows)
    assert al.calls <= per_split  # the calibration itself asked nothing


def _shuffled(labels: pd.DataFrame, seed: int) -> pd.DataFrame:
    """Each row gets another row's labels (a permutation drawn by ``seed``)."""
    rows = labels["row"].unique()
    mapping = dict(zip(rows, np.random.default_rng(seed).permutation(rows), strict=True))
    return labels.assign(row=labels["row"].map(mapping))


@pytest.mark.slow
def test_shuffled_label_control_over_ten_seeds(server: FakeJudgeServer) -> None:
    """The negative control is judged over seeds 0-9, each with its own shuffle and split, not
    on one seed: a "reliable gain" is a one-sided 2.5% test, so on nothing to learn about one run
    in 40 may still claim one. Ten runs with two or more would be a 2.6% event at that rate."""
    vague, _ = alignment_rubrics()
    data, labels = alignment_demo()
    metric = rl.metrics.RubricMetric(rubric=vague, name="support")
    judge = _judge(server)
    runs = [
        align(metric, data, _shuffled(labels, s), judge=judge, seed=s, progress=False)
        for s in range(10)
    ]
    claimed = [al.summary for al in runs if al.gain.reliable]
    assert len(claimed) <= 1, claimed
    for al in runs:
        assert al.gain.reliable or "no reliable gain" in al.summary
    assert abs(float(np.mean([al.gain.kappa for al in runs]))) < 0.1


def test_the_gain_test_keeps_its_false_positive_rate_on_shuffled_labels() -> None:
    """Arithmetic only (no judge): people's labels shuffled, the judge before is the simulated
    judge's length rule and after a judge that says YES to everything on one criterion (kappa
    exactly 0: the case that made the bootstrap interval alone claim gains about 6% of the time).
    Over 300 shuffles at most 12 may be called reliable (the 95th percentile of 300 tries at
    2.5%); the interval alone claimed 17."""
    from rubriclab.alignment.measure import gain
    from rubriclab.testing.simulated import words

    data, labels = alignment_demo()
    vague, _ = alignment_rubrics()
    truth = people_labels(labels, "support", vague, 120, pairwise=False).values
    rows = sorted(truth)
    claimed = 0
    for s in range(300):
        to = np.random.default_rng(1000 + s).permutation(rows)  # row r's labels go to row to[r]
        shuffled = {int(t): truth[r] for r, t in zip(rows, to, strict=True)}
        _, _, test = split_rows(rows, s, (0.4, 0.3, 0.3))
        before, after = {}, {}
        for r in test:
            y = int(len(words(data.response[r])) > 40)
            before[r] = {"detail": y, "refund": y, "tone": y, "overall": "pass" if y else "fail"}
            after[r] = {**before[r], "detail": 1, "overall": "pass"}
        claimed += gain(shuffled, before, after, test, n_boot=1_000).reliable
    assert claimed <= 12, f"{claimed} of 300 shuffles claimed a reliable gain"


def test_a_gain_the_swap_test_doubts_is_not_called_reliable() -> None:
    from rubriclab.alignment import Gain

    doubted = Gain(0.17, (0.07, 0.26), 0.1, (0.02, 0.2), p_value=0.06)
    assert not doubted.reliable
    assert doubted.words.startswith("no reliable gain") and "p = 0.060" in doubted.words
    assert Gain(0.17, (0.07, 0.26), 0.1, (0.02, 0.2), p_value=0.004).reliable


def test_no_test_row_reaches_a_prompt_before_the_choices_or_as_data(
    server: FakeJudgeServer,
) -> None:
    vague, _ = alignment_rubrics()
    data, labels = alignment_demo()
    server.reset()
    al = _run(server, vague, labels, k=6, pool=12)
    assert any(c.kind == "example" for c in al.kept) or any(c.kind == "rewrite" for c in al.kept)
    bodies = list(server.requests)
    assert bodies, "the server saw no requests"
    test_texts = [str(data.iloc[r]["response"]) for r in al.test_rows]
    other_texts = {str(data.iloc[r]["response"]) for r in (*al.train_rows, *al.validation_rows)}
    test_only = [t for t in test_texts if t not in other_texts]  # (an identical text is no leak)
    assert test_only
    first_test = None
    for i, body in enumerate(bodies):
        text = _text(body)
        examples = re.search(r"<examples>\n(.*?)\n</examples>", text, re.S)
        if examples:
            block = json.loads(examples.group(1))
            assert not any(e["response"] in test_only for e in block), f"request {i}"
        if "<disagreements>" in text:
            assert not any(t in text for t in test_only), f"optimizer request {i}"
            assert first_test is None, "an optimizer call after test rows were judged"
        own = re.search(r"<response>\n(.*?)\n</response>", text, re.S)
        for t in test_only:
            if t in text:
                assert own is not None and own.group(1) == t, f"request {i} shows a test row"
                if first_test is None:
                    first_test = i
    assert first_test is not None
    # after the first test-row request only test rows are judged: every choice came first
    for body in bodies[first_test:]:
        own = re.search(r"<response>\n(.*?)\n</response>", _text(body), re.S)
        assert own is not None and own.group(1) in test_texts


def test_re_run_costs_no_calls(server: FakeJudgeServer) -> None:
    vague, _ = alignment_rubrics()
    data, labels = alignment_demo()
    judge = _judge(server)
    metric = rl.metrics.RubricMetric(rubric=vague, name="support")
    first = align(metric, data, labels, judge=judge, progress=False)
    server.reset()
    again = align(metric, data, labels, judge=judge, progress=False)
    assert server.calls == 0
    assert again.calls == 0
    assert first.calls > 0
    assert again.after == first.after and again.metric == first.metric


def test_max_calls_bounds_spending(server: FakeJudgeServer) -> None:
    vague, _ = alignment_rubrics()
    data, labels = alignment_demo()
    metric = rl.metrics.RubricMetric(rubric=vague, name="support")
    server.reset()
    al = align(
        metric, data, labels, judge=_judge(server), max_calls=200, progress=False, k=6, pool=12
    )
    assert al.calls <= 200
    assert server.calls <= 200
    assert any("max_calls" in c.note for c in al.changes)
    with pytest.raises(ValueError, match="max_calls=50 is too small"):
        align(metric, data, labels, judge=_judge(server), max_calls=50, progress=False)


def test_split_is_once_by_seed_and_disjoint() -> None:
    rows = list(range(100))
    a = split_rows(rows, 3, (0.4, 0.3, 0.3))
    assert a == split_rows(rows, 3, (0.4, 0.3, 0.3))
    assert a != split_rows(rows, 4, (0.4, 0.3, 0.3))
    train, val, test = a
    assert not set(train) & set(val) and not set(val) & set(test) and not set(train) & set(test)
    assert sorted([*train, *val, *test]) == rows
    assert len(test) == 30 and len(val) == 30


def test_labels_latest_per_reviewer_then_majority() -> None:
    rubric = rl.Rubric(criteria=[rl.Criterion.yes_no("Q?", name="q")])
    t = pd.Timestamp("2026-01-01")
    labels = pd.DataFrame(
        [
            # row 0: ana says yes then no (latest: no); ben no; cy yes -> no wins 2:1
            {
                "row": 0,
                "metric": "m",
                "criterion": "q",
                "value": "yes",
                "reviewer": "ana",
                "time": t,
            },
            {
                "row": 0,
                "metric": "m",
                "criterion": "q",
                "value": "no",
                "reviewer": "ana",
                "time": t + pd.Timedelta(1, "h"),
            },
            {
                "row": 0,
                "metric": "m",
                "criterion": "q",
                "value": "no",
                "reviewer": "ben",
                "time": t,
            },
            {
                "row": 0,
                "metric": "m",
                "criterion": "q",
                "value": "yes",
                "reviewer": "cy",
                "time": t,
            },
            # row 1: a tie 1:1 goes to the most recent label
            {
                "row": 1,
                "metric": "m",
                "criterion": "q",
                "value": "fail",
                "reviewer": "ana",
                "time": t,
            },
            {
                "row": 1,
                "metric": "m",
                "criterion": "q",
                "value": "pass",
                "reviewer": "ben",
                "time": t + pd.Timedelta(1, "h"),
            },
            {
                "row": 1,
                "metric": "m",
                "criterion": "overall",
                "value": "pass",
                "reviewer": "ben",
                "time": t,
            },
            {
                "row": 1,
                "metric": "other",
                "criterion": "zzz",
                "value": "?",
                "reviewer": "ben",
                "time": t,
            },
        ]
    )
    people = people_labels(labels, "m", rubric, 2, pairwise=False)
    assert people.values == {0: {"q": 0}, 1: {"q": 1, "overall": "pass"}}


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"row": 7}, "labels row 7: the data has rows 0 to 1"),
        ({"criterion": "nope"}, "labels row 0: criterion 'nope' is not in metric 'm'"),
        ({"value": "maybe"}, "labels row 0, q: 'maybe' is not yes/no"),
        ({"metric": "x"}, "no labels for metric 'm' (labels name: x)"),
    ],
)
def test_bad_labels_are_one_line_errors(change: dict[str, Any], message: str) -> None:
    rubric = rl.Rubric(criteria=[rl.Criterion.yes_no("Q?", name="q")])
    row = {"row": 0, "metric": "m", "criterion": "q", "value": "yes", "reviewer": "a"}
    row.update(change)
    with pytest.raises(ValueError, match=re.escape(message)):
        people_labels(pd.DataFrame([row]), "m", rubric, 2, pairwise=False)


def test_align_refuses_a_metric_without_a_fixed_rubric() -> None:
    with pytest.raises(ValueError, match="fixed rubric"):
        align(rl.metrics.TEXT_QUALITY, pd.DataFrame({"response": ["x"]}), pd.DataFrame())


def test_pairwise_rewrites_raise_held_out_kappa(server: FakeJudgeServer) -> None:
    from rubriclab.testing.simulated import words

    data, _ = alignment_demo(n=121)
    vague, _ = alignment_rubrics()
    rules = {
        "detail": lambda t: len(words(t)) >= 25,
        "refund": lambda t: "refund" in t.lower(),
        "tone": lambda t: "thank you" in t.lower(),
    }
    pair = pd.DataFrame(
        {
            "prompt": data.prompt[:120],
            "response": data.response[:120].to_numpy(),
            "baseline_model_response": data.response[1:121].to_numpy(),
        }
    )
    labels = pd.DataFrame(
        [
            {
                "row": i,
                "metric": "pair",
                "criterion": name,
                "value": "candidate" if a > b else "baseline" if b > a else "tie",
                "reviewer": "ana",
            }
            for i, rec in pair.iterrows()
            for name, rule in rules.items()
            for a, b in [(rule(rec.response), rule(rec.baseline_model_response))]
        ]
    )
    metric = rl.metrics.PairwiseRubricMetric(rubric=vague, name="pair")
    al = align(metric, pair, labels, judge=_judge(server), methods=("rewrite",), progress=False)
    assert al.gain.reliable, al.summary
    assert any(c.kind == "rewrite" for c in al.kept)


def test_rows_without_a_response_are_disagreements_never_examples(
    server: FakeJudgeServer,
) -> None:
    vague, _ = alignment_rubrics()
    data, labels = alignment_demo()
    data = data.astype(object)
    blank = list(range(0, 120, 10))
    data.loc[blank, "response"] = None
    metric = rl.metrics.RubricMetric(rubric=vague, name="support")
    server.reset()
    al = align(metric, data, labels, judge=_judge(server), k=6, pool=12, progress=False)
    assert all(e.row not in blank for e in al.metric.examples)
    assert all("None" not in _text(b) and "nan" not in _text(b).split() for b in server.requests)
    for r in set(blank) & set(al.test_rows):  # no answer: never counted as agreement
        assert al.test_answers["after"][r] == {}
    assert al.gain.reliable, al.summary


# -- cut points for criteria with levels (arithmetic on answers already paid for) ----------------


def _levels_case(shuffle: int | None = None) -> tuple[pd.DataFrame, pd.DataFrame, rl.Rubric]:
    """The simulated judge reads a vague 1-3 criterion by length (1 below 40 words, 2 from 40);
    people give 1 below 40 words, 2 at 40-41 and 3 from 42: the judge is stingy with the top."""
    from rubriclab.testing.simulated import words

    data, _ = alignment_demo()
    rubric = rl.Rubric(
        criteria=[
            rl.Criterion(
                name="detail",
                description="How detailed is the response?",
                levels=[
                    rl.Level(score=1, descriptor="Thin"),
                    rl.Level(score=2, descriptor="Adequate"),
                    rl.Level(score=3, descriptor="Thorough"),
                ],
            ),
            rl.Criterion.yes_no("Does the response mention 'refund'?", name="refund"),
        ]
    )
    values = []
    for i, text in enumerate(data.response):
        n = len(words(text))
        refund = "yes" if "refund" in text.lower() else "no"
        values.append([(i, "detail", 1 if n < 40 else 2 if n < 42 else 3), (i, "refund", refund)])
    labels = pd.DataFrame(
        [
            {"row": r, "metric": "support", "criterion": c, "value": v, "reviewer": "ana"}
            for row in values
            for r, c, v in row
        ]
    )
    if shuffle is not None:
        rows = labels["row"].unique()
        mapping = dict(zip(rows, np.random.default_rng(shuffle).permutation(rows), strict=True))
        labels = labels.assign(row=labels["row"].map(mapping))
    return data, labels, rubric


def test_cut_points_alone_raise_held_out_kappa_with_no_new_calls(server: FakeJudgeServer) -> None:
    data, labels, rubric = _levels_case()
    metric = rl.metrics.RubricMetric(rubric=rubric, name="support")
    judge = _judge(server)
    al = align(metric, data, labels, judge=judge, methods=("cut_points",), progress=False)
    assert al.gain.reliable, al.summary
    change = next(c for c in al.changes if c.kind == "cut_points")
    assert change.kept and change.criterion == "detail"
    assert change.before == "judge 1→1, 2→2, 3→3" and change.after == "judge 1→1, 2→3, 3→3"
    assert dict(al.metric.level_cuts) == {"detail": (2.0, 2.0)}
    assert al.after.per_criterion["detail"]["kappa"] > al.before.per_criterion["detail"]["kappa"]
    per_split = len(al.train_rows) + len(al.validation_rows) + len(al.test_rows)
    assert al.calls <= per_split  # each row judged once: the cut points asked nothing
    # the aligned metric scores the test rows as align measured them
    server.reset()
    result = rl.evaluate(data.iloc[al.test_rows], metrics=[al.metric], judge=judge)
    assert server.calls == 0  # the same prompts: every answer from the cache
    cells = result.table["support/criteria"].tolist()
    for r, cell in zip(al.test_rows, cells, strict=True):
        detail = next(c for c in cell if c["name"] == "detail")
        assert detail["level"] == al.test_answers["after"][r]["detail"]
        assert detail["judge_level"] == al.test_answers["before"][r]["detail"]


def test_shuffled_labels_keep_no_reliable_cut_points_gain(server: FakeJudgeServer) -> None:
    data, labels, rubric = _levels_case(shuffle=11)
    metric = rl.metrics.RubricMetric(rubric=rubric, name="support")
    al = align(metric, data, labels, judge=_judge(server), methods=("cut_points",), progress=False)
    assert not al.gain.reliable, al.summary


def test_best_cuts_is_the_monotone_reading_with_most_matches() -> None:
    from rubriclab.alignment.cutpoints import best_cuts, describe_cuts

    scores = [1, 2, 3]
    # judge says 2 where people say 3; level 1 agrees
    pairs = [(1, 1)] * 5 + [(2, 3)] * 6 + [(2, 2)] * 2
    cuts, matches = best_cuts(pairs, scores)
    assert describe_cuts(cuts, scores) == "judge 1→1, 2→3, 3→3" and matches == 11
    # agreement already best: the identity stays (levels never seen keep their own reading)
    assert best_cuts([(1, 1), (2, 2)], scores) == ((2.0, 3.0), 2)
    # never read a better answer lower: a crossing pattern stays monotone
    cuts, _ = best_cuts([(1, 3)] * 3 + [(3, 1)] * 2, scores)
    assert describe_cuts(cuts, scores) in ("judge 1→3, 2→3, 3→3", "judge 1→1, 2→1, 3→1")


@pytest.mark.parametrize(
    ("cuts", "message"),
    [
        ({"nope": [1.5, 2.5]}, "level_cuts names criterion 'nope', which is not in the rubric"),
        ({"detail": [2.5]}, "level_cuts['detail'] needs 2 cut point(s) for levels 1, 2, 3, got 1"),
        ({"detail": [3, 2]}, "level_cuts['detail'] must be ascending numbers, got [3.0, 2.0]"),
        ({"detail": "ab"}, "level_cuts maps a criterion's name to a list of numbers"),
    ],
)
def test_bad_level_cuts_are_one_line_errors(cuts: dict[str, Any], message: str) -> None:
    _, _, rubric = _levels_case()
    with pytest.raises(ValueError, match=re.escape(message)):
        rl.metrics.RubricMetric(rubric=rubric, name="support", level_cuts=cuts)
    with pytest.raises(ValueError, match="level_cuts are for pointwise metrics"):
        rl.metrics.PairwiseRubricMetric(rubric=rubric, name="p", level_cuts={"detail": [2, 3]})


def test_a_streamed_run_with_other_cut_points_is_not_resumed_as_the_same_run() -> None:
    from rubriclab.evaluation.stream import _fingerprint

    _, _, rubric = _levels_case()
    plain = rl.metrics.RubricMetric(rubric=rubric, name="support")
    cut = plain.with_options(level_cuts={"detail": [2, 2]})
    other = plain.with_options(level_cuts={"detail": [1.5, 3]})
    prints = {_fingerprint([m], None, "x.csv", 100) for m in (plain, cut, other)}
    assert len(prints) == 3


def test_applying_every_kept_change_in_the_editor_gives_the_aligned_rubric(
    server: FakeJudgeServer,
) -> None:
    from rubriclab.widgets import RubricEditor

    vague, _ = alignment_rubrics()
    _, labels = alignment_demo()
    al = _run(server, vague, labels, methods=("rewrite", "pass_mark"))
    assert any(c.kind == "rewrite" for c in al.kept), al.summary
    editor = RubricEditor(vague, proposals=al)
    assert editor.rubric == vague  # nothing applied until asked
    for p in editor.proposals:
        assert p["status"] == "open", p
        editor.apply(p["index"])
    assert [p["status"] for p in editor.proposals] == ["applied"] * len(al.kept)
    assert editor.rubric.criteria == al.metric.rubric.criteria
    assert editor.rubric.pass_mark == al.metric.rubric.pass_mark


def test_kappa_gain_intervals_stay_in_the_feasible_range() -> None:
    """A percentile bootstrap over recomputed kappas: every interval end lies in [-2, 2], and
    an upper end above 1 - k0 (the measured baseline) only where a resampled baseline fell
    that far (the after judge agreeing on every item: its kappa is 1 in every resample, so the
    upper end is 1 minus the baseline's own lower percentile). Not a normal approximation: the
    interval is not symmetric about the gain when the baseline's spread is skewed."""
    from rubriclab.alignment.measure import figures, gain

    rng = np.random.default_rng(7)
    for trial in range(30):
        n = int(rng.integers(8, 40))
        rows = list(range(n))
        people = {r: {"a": int(rng.integers(0, 2)), "b": int(rng.integers(0, 3))} for r in rows}
        anti = {r: {"a": 1 - people[r]["a"], "b": (people[r]["b"] + 1) % 3} for r in rows}
        guess = {r: {"a": int(rng.integers(0, 2)), "b": int(rng.integers(0, 3))} for r in rows}
        perfect = {r: dict(people[r]) for r in rows}
        for before, after in ((anti, perfect), (perfect, anti), (guess, perfect)):
            g = gain(people, before, after, rows, n_boot=500, seed=trial)
            lo, hi = g.kappa_interval
            assert -2 - 1e-9 <= lo <= g.kappa + 1e-9 <= hi + 2e-9 <= 2 + 3e-9
            for c in g.per_criterion.values():
                assert -2 - 1e-9 <= c["low"] <= c["high"] <= 2 + 1e-9
            if after is perfect:
                k0 = figures(people, before, rows).kappa
                # the upper end is 1 - (a resampled baseline), so never above 1 - (lowest
                # baseline kappa a resample can have), which is -1
                assert hi <= 1 - (-1) + 1e-9 and g.kappa == pytest.approx(1 - k0)
