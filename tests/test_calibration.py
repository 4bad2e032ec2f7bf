"""Calibration against people: MT-Bench's Table 5, the pairwise join, and per-criterion bias."""

from __future__ import annotations

import json
import math
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import cohen_kappa_score

import rubriclab as rl
from rubriclab.calibration import PairwiseAgreement, human_agreement
from rubriclab.datasets import (
    load_mt_bench_answers,
    load_mt_bench_judgments,
    load_mt_bench_questions,
)


def sk_kappa(y1: list[str], y2: list[str]) -> float:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return float(cohen_kappa_score(y1, y2))


def votes(*rows: tuple[int, str, str, str, str]) -> pd.DataFrame:
    """(question_id, model_a, model_b, winner, judge) rows."""
    return pd.DataFrame(rows, columns=["question_id", "model_a", "model_b", "winner", "judge"])


# -- MT-Bench, Zheng et al. 2023, Table 5 ------------------------------------------------------


@pytest.fixture(scope="module")
def mt_bench() -> pd.DataFrame:
    return load_mt_bench_judgments()


# (turn, S1 judge-human, S2 judge-human, S1 human-human, S2 human-human) as (agree, total);
# the paper prints 66% (1343), 85% (859), 63% (721), 81% (479) for turn 1 and
# 66% (1325), 85% (864), 67% (707), 82% (474) for turn 2.
TABLE_5 = [
    (1, (886, 1343), (727, 859), (454, 721), (388, 479)),
    (2, (871, 1325), (731, 864), (471, 707), (388, 474)),
]
PUBLISHED = {1: (66, 85, 63, 81), 2: (66, 85, 67, 82)}


@pytest.mark.parametrize(("turn", "s1", "s2", "h1", "h2"), TABLE_5)
def test_mt_bench_table_5_cells_come_out_exactly(
    mt_bench: pd.DataFrame,
    turn: int,
    s1: tuple[int, int],
    s2: tuple[int, int],
    h1: tuple[int, int],
    h2: tuple[int, int],
) -> None:
    gpt4 = mt_bench[(mt_bench.judge_type == "gpt4_pair") & (mt_bench.turn == turn)]
    experts = mt_bench[(mt_bench.judge_type == "expert") & (mt_bench.turn == turn)]
    r = rl.pairwise_agreement(gpt4, experts, on=["question_id", "turn"])
    assert r.human_vs_human is not None
    got = [r.with_ties, r.without_ties, r.human_vs_human.with_ties, r.human_vs_human.without_ties]
    assert [(x.agree, x.total) for x in got] == [s1, s2, h1, h2]
    assert [round(100 * x.rate) for x in got] == list(PUBLISHED[turn])
    # the standalone human-vs-human call gives the same cell (GPT-4 judged every pair)
    alone = human_agreement(experts, on=["question_id", "turn"])
    assert (alone.with_ties.agree, alone.with_ties.total) == h1
    assert (alone.without_ties.agree, alone.without_ties.total) == h2


def test_mt_bench_gpt4_swap_inconsistency_rate(mt_bench: pd.DataFrame) -> None:
    gpt4 = mt_bench[mt_bench.judge_type == "gpt4_pair"]
    experts = mt_bench[mt_bench.judge_type == "expert"]
    r = rl.pairwise_agreement(gpt4, experts, on=["question_id", "turn"])
    assert r.judge_inconsistent is not None
    assert (r.judge_inconsistent.agree, r.judge_inconsistent.total) == (380, 2400)


def test_mt_bench_kappa_equals_sklearn_on_the_comparisons(mt_bench: pd.DataFrame) -> None:
    gpt4 = mt_bench[(mt_bench.judge_type == "gpt4_pair") & (mt_bench.turn == 1)]
    experts = mt_bench[(mt_bench.judge_type == "expert") & (mt_bench.turn == 1)]
    r = rl.pairwise_agreement(gpt4, experts, on=["question_id", "turn"])
    c = r.comparisons
    assert r.kappa == pytest.approx(sk_kappa(list(c.judge), list(c.human)), abs=1e-12)
    no_tie = c[(c.judge != "tie") & (c.human != "tie")]
    expected = sk_kappa(list(no_tie.judge), list(no_tie.human))
    assert r.kappa_without_ties == pytest.approx(expected, abs=1e-12)
    assert int(r.confusion.to_numpy().sum()) == 1343


def test_bundled_texts_cover_every_judged_answer(mt_bench: pd.DataFrame) -> None:
    questions = load_mt_bench_questions()
    answers = load_mt_bench_answers()
    assert len(questions) == 80
    assert len(answers) == 480
    models = set(mt_bench.model_a) | set(mt_bench.model_b)
    assert set(answers.model) == models
    assert set(mt_bench.question_id) == set(questions.question_id)
    assert questions.turn_2.str.len().min() > 0


# -- the pairwise join ------------------------------------------------------------------------


def test_a_pair_seen_in_the_other_order_is_the_same_pair_with_the_verdict_flipped() -> None:
    judge = votes((1, "x", "y", "model_a", "gpt"))
    human = votes(
        (1, "y", "x", "model_b", "h1"),  # x wins, said the other way round: agrees
        (1, "y", "x", "model_a", "h2"),  # y wins: disagrees
    )
    r = rl.pairwise_agreement(judge, human, on="question_id")
    assert (r.with_ties.agree, r.with_ties.total) == (1, 2)
    assert r.pairs == 1
    assert list(r.comparisons.first) == ["x", "x"]
    assert list(r.comparisons.human) == ["A", "B"]
    assert list(r.disagreements.human_rater) == ["h2"]


def test_winner_may_be_named_by_its_own_value_or_a_b() -> None:
    judge = votes((1, "x", "y", "y", "gpt"), (2, "x", "y", "A", "gpt"))
    human = votes((1, "y", "x", "model_a", "h"), (2, "x", "y", "x", "h"))
    r = rl.pairwise_agreement(judge, human, on="question_id")
    assert (r.with_ties.agree, r.with_ties.total) == (2, 2)


def test_ties_count_as_a_verdict_with_ties_and_are_dropped_without() -> None:
    judge = votes(
        (1, "x", "y", "tie (inconsistent)", "gpt"),
        (2, "x", "y", "tie", "gpt"),
        (3, "x", "y", "model_a", "gpt"),
        (4, "x", "y", "model_a", "gpt"),
    )
    human = votes(
        (1, "x", "y", "tie", "h"),  # tie vs tie: agree with ties; left out without
        (2, "x", "y", "model_b", "h"),  # tie vs win: disagree with ties; left out without
        (3, "x", "y", "tie", "h"),  # win vs tie: likewise
        (4, "x", "y", "model_a", "h"),  # agree both ways
    )
    r = rl.pairwise_agreement(judge, human, on="question_id")
    assert (r.with_ties.agree, r.with_ties.total) == (2, 4)
    assert (r.without_ties.agree, r.without_ties.total) == (1, 1)
    assert r.confusion.loc["tie", "tie"] == 1
    assert r.random_with_ties == pytest.approx(1 / 3)
    assert r.random_without_ties == 0.5
    assert r.judge_inconsistent is not None
    assert r.judge_inconsistent.agree == 1


def test_disagreements_list_opposite_winners_first_with_their_source_rows() -> None:
    judge = votes((1, "x", "y", "model_a", "gpt"), (2, "x", "y", "model_a", "gpt"))
    human = votes((1, "x", "y", "tie", "h1"), (2, "x", "y", "model_b", "h2"))
    human.index = pd.Index(["r-tie", "r-opposite"])
    r = rl.pairwise_agreement(judge, human, on="question_id")
    d = r.disagreements
    assert list(d.human_row) == ["r-opposite", "r-tie"]
    assert list(d.opposite) == [True, False]
    assert list(d.judge_raw) == ["model_a", "model_a"]


def test_several_judge_rows_and_human_votes_count_every_combination() -> None:
    judge = votes((1, "x", "y", "model_a", "run1"), (1, "y", "x", "model_b", "run2"))
    human = votes((1, "x", "y", "model_a", "h1"), (1, "x", "y", "tie", "h2"))
    r = rl.pairwise_agreement(judge, human, on="question_id")
    assert (r.with_ties.agree, r.with_ties.total) == (2, 4)


def test_human_vs_human_counts_each_two_votes_once_and_skips_a_rater_with_themselves() -> None:
    judge = votes((1, "x", "y", "model_a", "gpt"))
    human = votes(
        (1, "x", "y", "model_a", "h1"),
        (1, "y", "x", "model_b", "h2"),
        (1, "x", "y", "tie", "h3"),
        (1, "x", "y", "model_a", "h1"),  # h1 again: not compared with h1
    )
    r = rl.pairwise_agreement(judge, human, on="question_id")
    hvh = r.human_vs_human
    assert hvh is not None
    # pairs: (h1,h2) agree, (h1,h3) no, (h2,h3) no, (h2,h1') agree, (h3,h1') no
    assert (hvh.with_ties.agree, hvh.with_ties.total) == (2, 5)
    assert (hvh.without_ties.agree, hvh.without_ties.total) == (2, 2)
    raters = set(zip(hvh.comparisons.human_1_rater, hvh.comparisons.human_2_rater, strict=True))
    assert all(a != b for a, b in raters)
    # unordered pairs land in the upper triangle of the confusion matrix
    assert hvh.confusion.loc["tie", "A"] == 0
    assert hvh.confusion.loc["A", "tie"] == 3


verdict_lists = st.integers(2, 40).flatmap(
    lambda n: st.lists(
        st.tuples(
            st.sampled_from(["model_a", "model_b", "tie"]),
            st.sampled_from(["model_a", "model_b", "tie"]),
        ),
        min_size=n,
        max_size=n,
    )
)


@settings(max_examples=100, deadline=None)
@given(verdict_lists)
def test_human_vs_human_kappa_is_cohens_kappa_of_the_votes_taken_both_ways(
    pairs: list[tuple[str, str]],
) -> None:
    rows = []
    for q, (a, b) in enumerate(pairs):
        rows += [(q, "x", "y", a, "h1"), (q, "x", "y", b, "h2")]
    r = human_agreement(votes(*rows), on="question_id")
    code = {"model_a": "A", "model_b": "B", "tie": "tie"}
    left = [code[a] for a, _ in pairs] + [code[b] for _, b in pairs]
    right = [code[b] for _, b in pairs] + [code[a] for a, _ in pairs]
    expected = sk_kappa(left, right)
    assert (math.isnan(r.kappa) and math.isnan(expected)) or r.kappa == pytest.approx(
        expected, abs=1e-12
    )


@settings(max_examples=100, deadline=None)
@given(verdict_lists)
def test_judge_vs_human_kappa_equals_sklearn(pairs: list[tuple[str, str]]) -> None:
    judge = votes(*[(q, "x", "y", a, "gpt") for q, (a, _) in enumerate(pairs)])
    human = votes(*[(q, "y", "x", b, "h") for q, (_, b) in enumerate(pairs)])  # reversed order
    r = rl.pairwise_agreement(judge, human, on="question_id")
    flip = {"model_a": "B", "model_b": "A", "tie": "tie"}
    same = {"model_a": "A", "model_b": "B", "tie": "tie"}
    expected = sk_kappa([same[a] for a, _ in pairs], [flip[b] for _, b in pairs])
    assert (math.isnan(r.kappa) and math.isnan(expected)) or r.kappa == pytest.approx(
        expected, abs=1e-12
    )
    assert r.with_ties.total == len(pairs)


def test_fixed_order_pairs_need_no_pair_columns() -> None:
    judge = pd.DataFrame({"case": [1, 2, 3], "verdict": ["A", "B", "tie"]})
    human = pd.DataFrame({"case": [1, 2, 3], "verdict": ["A", "A", "tie"], "who": ["p", "q", "p"]})
    r = rl.pairwise_agreement(judge, human, on="case", pair=None, verdict="verdict", rater="who")
    assert (r.with_ties.agree, r.with_ties.total) == (2, 3)
    assert list(r.disagreements.human_rater) == ["q"]


def test_missing_verdicts_are_dropped_and_unjudged_pairs_counted() -> None:
    judge = votes(
        (1, "x", "y", "model_a", "gpt"), (2, "x", "y", None, "gpt"), (3, "x", "y", "tie", "g")
    )
    human = votes((1, "x", "y", "model_a", "h"), (2, "x", "y", "model_a", "h"))
    r = rl.pairwise_agreement(judge, human, on="question_id")
    assert r.dropped == 1
    assert r.unmatched == 2  # judge's question 3, human's question 2
    assert r.with_ties.total == 1


def test_an_unknown_verdict_names_the_row() -> None:
    judge = votes((1, "x", "y", "model_a", "gpt"))
    human = votes((1, "x", "y", "model_a", "h"), (1, "x", "y", "maybe", "h2"))
    with pytest.raises(ValueError, match=r"human row 1: winner 'maybe' is not"):
        rl.pairwise_agreement(judge, human, on="question_id")


def test_a_missing_column_is_named() -> None:
    judge = votes((1, "x", "y", "model_a", "gpt"))
    with pytest.raises(ValueError, match=r"judge: no column\(s\) \['turn'\]"):
        rl.pairwise_agreement(judge, judge, on=["question_id", "turn"])


def test_pairwise_report_is_readable_escaped_and_serialisable() -> None:
    judge = votes((1, "<b>x</b>", "y", "model_a", "gpt"))
    human = votes((1, "<b>x</b>", "y", "model_b", "h"), (1, "y", "<b>x</b>", "tie", "h2"))
    r = rl.pairwise_agreement(judge, human, on="question_id")
    assert isinstance(r, PairwiseAgreement)
    assert "0.0% (0/2)" in str(r)
    assert "<b>" not in r._repr_html_()
    data = json.loads(json.dumps(r.to_dict()))
    assert data["with_ties"] == {"agree": 0, "total": 2}
    assert data["human_vs_human"]["with_ties"] == {"agree": 0, "total": 1}


# -- per-criterion calibration ----------------------------------------------------------------


def support_rubric() -> rl.Rubric:
    return rl.Rubric.analytic(
        {
            "accuracy": {"weight": 0.5, "levels": 3},
            "tone": {"weight": 0.5, "levels": 3},
        },
        pass_mark=0.7,
    )


def frames(n: int = 30, seed: int = 1) -> tuple[pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(seed)
    human = pd.DataFrame(
        {
            "case": [f"c{i}" for i in range(n)],
            "accuracy": rng.integers(1, 3, n),  # 1 or 2
            "tone": rng.integers(1, 4, n),
        }
    )
    judge = human.copy()
    judge["accuracy"] = human["accuracy"] + 1  # the judge is one level generous on accuracy
    return judge, human


def test_one_agreement_per_criterion_and_the_bias_table() -> None:
    judge, human = frames()
    res = rl.criterion_agreement(judge, human, on="case")
    assert list(res.criteria) == ["accuracy", "tone"]
    direct = rl.agreement(judge.set_index("case")["tone"], human.set_index("case")["tone"])
    assert res["tone"].kappa == direct.kappa
    assert res["accuracy"].exact == 0.0
    t = res.table
    assert t.loc["accuracy", "mean_diff"] == 1.0
    assert t.loc["accuracy", "tendency"] == "over-scores"
    assert t.loc["tone", "mean_diff"] == 0.0
    assert t.loc["tone", "tendency"] == "no clear difference"
    assert t.loc["accuracy", "n"] == 30
    assert "overall" not in t.index  # no rubric, no overall column: nothing to compare


def test_judge_under_scoring_is_reported() -> None:
    judge, human = frames()
    judge["tone"] = (human["tone"] - 1).clip(lower=1)
    res = rl.criterion_agreement(judge, human, on="case")
    row = res.table.loc["tone"]
    assert row["mean_diff"] < 0
    assert row["ci_low"] <= row["mean_diff"] <= row["ci_high"] < 0
    assert row["tendency"] == "under-scores"


def test_bootstrap_intervals_are_seeded_and_independent_of_other_criteria() -> None:
    judge, human = frames()
    judge["tone"] = np.where(np.arange(30) % 3 == 0, human["tone"].clip(upper=2) + 1, human["tone"])
    a = rl.criterion_agreement(judge, human, on="case", seed=7)
    b = rl.criterion_agreement(judge, human, on="case", seed=7)
    c = rl.criterion_agreement(judge, human, on="case", seed=8)
    only_tone = rl.criterion_agreement(judge, human, on="case", seed=7, criteria=["tone"])
    cols = ["ci_low", "ci_high"]
    pd.testing.assert_frame_equal(a.table, b.table)
    assert a.table.loc["tone", cols].tolist() == only_tone.table.loc["tone", cols].tolist()
    assert a.table.loc["tone", cols].tolist() != c.table.loc["tone", cols].tolist()


def test_rubric_gives_the_overall_score_row_and_the_scale() -> None:
    judge, human = frames()
    res = rl.criterion_agreement(judge, human, on="case", rubric=support_rubric())
    assert res["tone"].labels == (1, 2, 3)
    overall = res.table.loc["overall"]
    # accuracy is one level (half of its 1..3 range) higher, at weight 0.5: +0.25 on [0, 1]
    assert overall["mean_diff"] == pytest.approx(0.25)
    assert overall["tendency"] == "over-scores"
    assert math.isnan(overall["exact"])


def test_a_level_off_the_rubric_scale_names_the_item_and_criterion() -> None:
    judge, human = frames()
    judge.loc[3, "tone"] = 7
    with pytest.raises(ValueError, match=r"judge item 'c3': tone: 7 outside 1-3"):
        rl.criterion_agreement(judge, human, on="case", rubric=support_rubric())


def test_a_result_criteria_column_of_mappings_is_accepted() -> None:
    judge = pd.Series(
        [
            {"accuracy": {"level": 3, "evidence": "..."}, "deadline": "YES"},
            {"accuracy": {"level": 2, "evidence": "..."}, "deadline": "NO"},
            None,  # a failed judge call: no levels
        ],
        index=["a", "b", "c"],
    )
    human = pd.DataFrame({"accuracy": [3, 1, 2], "deadline": [1, 1, 0]}, index=["a", "b", "c"])
    res = rl.criterion_agreement(judge, human)
    assert res["accuracy"].dropped == 1
    assert res["deadline"].exact == 0.5
    assert list(res["deadline"].disagreements.index) == []
    assert res.table.loc["accuracy", "mean_diff"] == 0.5


def test_items_on_one_side_only_are_counted_not_compared() -> None:
    judge, human = frames()
    res = rl.criterion_agreement(judge, human.iloc[:20], on="case")
    assert (res.items, res.unmatched_judge, res.unmatched_human) == (20, 10, 0)
    assert res["tone"].n == 20
    assert "10 judged only by the judge" in str(res)


def test_an_overall_column_can_be_compared_directly() -> None:
    judge, human = frames()
    judge["score"] = 0.8
    human["score"] = 0.6
    res = rl.criterion_agreement(judge, human, on="case", overall="score")
    assert res.table.loc["overall", "mean_diff"] == pytest.approx(0.2)
    assert list(res.criteria) == ["accuracy", "tone"]


def test_a_criterion_missing_on_one_side_is_named() -> None:
    judge, human = frames()
    with pytest.raises(ValueError, match=r"human: no column for \['clarity'\]"):
        rl.criterion_agreement(judge.assign(clarity=1), human, on="case", criteria=["clarity"])


def test_criterion_report_renders_and_serialises() -> None:
    judge, human = frames()
    judge["case"] = judge["case"] + "<i>"
    human["case"] = human["case"] + "<i>"
    res = rl.criterion_agreement(judge, human, on="case", rubric=support_rubric())
    assert "over-scores" in str(res)
    assert "<i>" not in res._repr_html_()
    data = json.loads(json.dumps(res.to_dict()))
    assert data["table"][0]["criterion"] == "accuracy"
    assert data["criteria"]["accuracy"]["n"] == 30


def test_criterion_agreement_reads_a_result_criteria_column_directly() -> None:
    import pandas as pd

    import rubriclab as rl

    judge = pd.Series(
        [
            [{"name": "accuracy", "level": 3, "evidence": "x"}, {"name": "tone", "level": 2}],
            [{"name": "accuracy", "level": 1}, {"name": "tone", "level": 3}],
            [{"name": "accuracy", "level": 2}, {"name": "tone", "level": 2}],
        ],
        index=["a", "b", "c"],
    )
    human = pd.Series(
        [{"accuracy": 3, "tone": 2}, {"accuracy": 2, "tone": 3}, {"accuracy": 2, "tone": 1}],
        index=["a", "b", "c"],
    )
    report = rl.criterion_agreement(judge, human)
    assert report["accuracy"].exact == pytest.approx(2 / 3)
    assert report["tone"].exact == pytest.approx(2 / 3)
