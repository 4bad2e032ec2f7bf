"""Judge panels: several judges per metric, combined per criterion, agreement among them."""

from __future__ import annotations

import itertools
import json
import math
import threading
from typing import Any

import krippendorff
import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

import rubriclab as rl
from rubriclab.calibration.measures import fleiss_kappa, krippendorff_alpha, panel_agreement
from rubriclab.testing import FakeJudgeServer, ServerReply

CHECKLIST = rl.Rubric(
    criteria=[
        rl.Criterion.yes_no("Does it state the deadline?"),
        rl.Criterion.yes_no("Is it polite?"),
    ],
    pass_mark=0.5,
)
ANALYTIC = rl.Rubric.from_dict(
    {
        "criteria": [
            {
                "name": "accuracy",
                "description": "Facts right",
                "levels": [
                    {"score": 1, "descriptor": "wrong"},
                    {"score": 2, "descriptor": "partly"},
                    {"score": 3, "descriptor": "mostly"},
                    {"score": 4, "descriptor": "all correct"},
                ],
            }
        ],
        "pass_mark": 0.5,
    }
)


def _ids(body: dict[str, Any], key: str) -> list[str]:
    schema = body["response_format"]["json_schema"]["schema"]
    return list(schema["properties"][key]["properties"])


def scripted(answers: dict[str, dict[str, Any]]):
    """A judge per model name: checklist verdicts or analytic levels, from ``answers``."""

    def respond(body: dict[str, Any]) -> Any:
        model = body["model"]
        if model not in answers:
            return ServerReply(500, {"error": {"message": f"{model} is down"}})
        schema = body["response_format"]["json_schema"]["schema"]
        if "verdicts" in schema["properties"]:
            verdicts = {
                q: {"reasoning": f"{model} on {q}", "verdict": answers[model][q]}
                for q in _ids(body, "verdicts")
            }
            return json.dumps({"verdicts": verdicts, "rationale": f"{model} read it"})
        criteria = {
            c: {"evidence": "x", "level": answers[model][c]} for c in _ids(body, "criteria")
        }
        return json.dumps({"criteria": criteria, "rationale": f"{model} read it"})

    return respond


def _frame(n: int = 2) -> pd.DataFrame:
    return pd.DataFrame(
        {"prompt": ["When is it due?"] * n, "response": [f"August 15th ({i})." for i in range(n)]}
    )


def _panel(server: FakeJudgeServer, models: list[str], **kw: Any) -> rl.metrics.RubricMetric:
    judges = [rl.Judge(server.url, model=m, max_retries=0) for m in models]
    return rl.metrics.RubricMetric(name="panel", judges=judges, **kw)


def test_majority_per_criterion_and_every_judges_verdict_kept(fake_judge) -> None:
    fake_judge.responder = scripted(
        {
            "a": {"q1": "YES", "q2": "NO"},
            "b": {"q1": "YES", "q2": "YES"},
            "c": {"q1": "NO", "q2": "NO"},
        }
    )
    metric = _panel(fake_judge, ["a", "b", "c"], rubric=CHECKLIST)
    result = rl.evaluate(_frame(), [metric], judge=rl.Judge(fake_judge.url, model="unused"))
    row = result.case(0)
    assert row["panel/score"] == 0.5  # q1 YES (2 of 3), q2 NO (2 of 3)
    assert row["panel/verdict"] == "pass"
    levels = {c["name"]: c["level"] for c in row["panel/criteria"]}
    assert levels == {"q1": 1, "q2": 0}
    assert row["panel/criteria"][0]["votes"] == {"a": 1, "b": 1, "c": 0}
    per_judge = {v["judge"]: v for v in row["panel/judges"]}
    assert per_judge["b"]["score"] == 1.0
    assert per_judge["c"]["levels"] == {"q1": 0, "q2": 0}
    assert "unused" not in {r["model"] for r in fake_judge.requests}
    assert len(fake_judge.requests) == 6  # 3 judges x 2 cases
    assert result.stats.calls["panel"] == 6


def test_majority_tie_takes_the_lower_level(fake_judge) -> None:
    fake_judge.responder = scripted(
        {"a": {"q1": "YES", "q2": "YES"}, "b": {"q1": "NO", "q2": "YES"}}
    )
    result = rl.evaluate(
        _frame(1), [_panel(fake_judge, ["a", "b"], rubric=CHECKLIST)], judge="mock"
    )
    assert {c["name"]: c["level"] for c in result.case(0)["panel/criteria"]} == {"q1": 0, "q2": 1}


@pytest.mark.parametrize(("how", "level", "score"), [("median", 3, 2 / 3), ("mean", 8 / 3, 5 / 9)])
def test_median_and_mean_of_levels(fake_judge, how: str, level: float, score: float) -> None:
    fake_judge.responder = scripted(
        {"a": {"accuracy": 1}, "b": {"accuracy": 3}, "c": {"accuracy": 4}}
    )
    metric = _panel(fake_judge, ["a", "b", "c"], rubric=ANALYTIC, aggregate=how)
    row = rl.evaluate(_frame(1), [metric], judge="mock").case(0)
    assert row["panel/criteria"][0]["level"] == pytest.approx(level)
    assert row["panel/score"] == pytest.approx(score)  # (level - 1) / 3; mean of 0, 2/3, 1
    assert row["panel/passed"] is True


def test_a_failing_judge_is_recorded_and_a_majority_still_scores(fake_judge) -> None:
    fake_judge.responder = scripted(
        {"a": {"q1": "YES", "q2": "YES"}, "b": {"q1": "YES", "q2": "NO"}}
    )
    row = rl.evaluate(
        _frame(1), [_panel(fake_judge, ["a", "b", "down"], rubric=CHECKLIST)], judge="mock"
    ).case(0)
    assert row["panel/error"] is None
    down = next(v for v in row["panel/judges"] if v["judge"] == "down")
    assert "judge call failed" in down["error"]
    assert "not counted: down" in row["panel/rationale"]
    # two of three judges down: no majority answered, so the row is an error, not a score
    row = rl.evaluate(
        _frame(1), [_panel(fake_judge, ["a", "down", "gone"], rubric=CHECKLIST)], judge="mock"
    ).case(0)
    assert row["panel/score"] is None
    assert "1 of 3 judges answered" in row["panel/error"]


def test_a_slow_judge_does_not_serialise_the_others() -> None:
    """Each judge's server holds its answers until the other judge is being served too.

    Run one judge after the other and the first one waits for a judge that has not started:
    its wait times out and is recorded. Run together, both proceed at once.
    """
    n = 4
    fast_done, slow_seen = threading.Event(), threading.Event()
    served = {"fast": 0}
    waits: list[bool] = []
    answers = {"q1": "YES", "q2": "NO"}

    def slow(body: dict[str, Any]) -> str:
        slow_seen.set()
        waits.append(fast_done.wait(timeout=30))  # answers only after the fast judge finished
        return scripted({"slow": answers})(body)

    def fast(body: dict[str, Any]) -> str:
        waits.append(slow_seen.wait(timeout=30))  # the slow judge's calls are in flight already
        served["fast"] += 1
        if served["fast"] == n:
            fast_done.set()
        return scripted({"fast": answers})(body)

    with FakeJudgeServer(slow) as s1, FakeJudgeServer(fast) as s2:
        judges = [
            rl.Judge(s1.url, model="slow", max_retries=0, timeout=60),
            rl.Judge(s2.url, model="fast", max_retries=0, timeout=60),
        ]
        metric = rl.metrics.RubricMetric(name="panel", rubric=CHECKLIST, judges=judges)
        result = rl.evaluate(_frame(n), [metric], judge="mock")
    assert all(waits)
    assert len(waits) == 2 * n
    assert result.table["panel/error"].isna().all()


def test_panel_needs_two_judges_and_pointwise() -> None:
    with pytest.raises(ValueError, match="at least 2 judges"):
        rl.metrics.RubricMetric(judges=["mock"])
    with pytest.raises(ValueError, match="pointwise"):
        rl.metrics.PairwiseRubricMetric(judges=["mock", "mock"])
    with pytest.raises(ValueError, match="aggregate"):
        rl.metrics.RubricMetric(judges=["mock", "mock"], aggregate="vote")  # type: ignore[arg-type]


def test_summary_reports_inter_judge_agreement(fake_judge, tmp_path) -> None:
    fake_judge.responder = scripted(
        {"a": {"q1": "YES", "q2": "NO"}, "b": {"q1": "YES", "q2": "YES"}}
    )
    result = rl.evaluate(
        _frame(3), [_panel(fake_judge, ["a", "b"], rubric=CHECKLIST)], judge="mock"
    )
    summary = result.summary.loc["panel"]
    # units: 3 cases x 2 criteria; judge a = 1,0,1,0,1,0 and judge b = 1,1,1,1,1,1
    data = np.array([[1, 0] * 3, [1, 1] * 3], dtype=float)
    assert summary["alpha_nominal"] == pytest.approx(
        krippendorff.alpha(reliability_data=data, level_of_measurement="nominal"), abs=1e-9
    )
    assert summary["fleiss_kappa"] == pytest.approx(fleiss_kappa(data.T))
    saved = rl.load_result(result.save(tmp_path / "panel.jsonl"))
    assert saved.summary.loc["panel", "alpha_ordinal"] == pytest.approx(summary["alpha_ordinal"])


# -- the statistics ------------------------------------------------------------------------------


def test_fleiss_kappa_on_fleiss_1971_example() -> None:
    # Wikipedia's worked example: 10 items, 14 raters, 5 categories; kappa = 0.210
    counts = [
        [0, 0, 0, 0, 14],
        [0, 2, 6, 4, 2],
        [0, 0, 3, 5, 6],
        [0, 3, 9, 2, 0],
        [2, 2, 8, 1, 1],
        [7, 7, 0, 0, 0],
        [3, 2, 6, 3, 0],
        [2, 5, 3, 2, 2],
        [6, 5, 2, 1, 0],
        [0, 2, 2, 3, 7],
    ]
    ratings = [[j for j, c in enumerate(row) for _ in range(c)] for row in counts]
    assert fleiss_kappa(ratings) == pytest.approx(0.20993, abs=5e-6)


def test_fleiss_kappa_perfect_and_single_category() -> None:
    assert fleiss_kappa([[1, 1, 1], [2, 2, 2]]) == pytest.approx(1.0)
    assert np.isnan(fleiss_kappa([[1, 1], [1, 1]]))


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval"])
def test_krippendorff_alpha_equals_the_package_on_random_data(seed: int, level: str) -> None:
    rng = np.random.default_rng(seed)
    raters, units = rng.integers(2, 6), rng.integers(5, 60)
    data = rng.integers(0, rng.integers(2, 6), size=(raters, units)).astype(float)
    data[rng.random(data.shape) < 0.25] = np.nan
    expected = krippendorff.alpha(reliability_data=data, level_of_measurement=level)
    assert krippendorff_alpha(data, level) == pytest.approx(expected, abs=1e-9)  # type: ignore[arg-type]


def test_krippendorff_package_docstring_example() -> None:
    nan = np.nan
    data = [
        [nan, nan, nan, nan, nan, 3, 4, 1, 2, 1, 1, 3, 3, nan, 3],
        [1, nan, 2, 1, 3, 3, 4, 3, nan, nan, nan, nan, nan, nan, nan],
        [nan, nan, 2, 1, 3, 4, 4, nan, 2, 1, 1, 3, 3, nan, 4],
    ]
    assert krippendorff_alpha(data, "nominal") == pytest.approx(0.691358, abs=1e-6)
    assert krippendorff_alpha(data, "interval") == pytest.approx(0.810845, abs=1e-6)


def test_panel_agreement_reads_the_judges_column() -> None:
    column = [
        [
            {"judge": "a", "levels": {"q1": 1, "q2": 0}},
            {"judge": "b", "levels": {"q1": 1, "q2": 1}},
        ],
        [{"judge": "a", "levels": {"q1": 0}}, {"judge": "b", "levels": {}}],  # b failed this case
        None,  # a row without a panel verdict
    ]
    out = panel_agreement(column)
    assert out["judges"] == 2
    assert out["units"] == 3
    data = np.array([[1, 0, 0], [1, 1, np.nan]])
    assert out["alpha_nominal"] == pytest.approx(
        krippendorff.alpha(reliability_data=data, level_of_measurement="nominal"), abs=1e-9
    )
    assert out["fleiss_kappa"] == pytest.approx(fleiss_kappa([[1, 1], [0, 1]]))


# -- agreement tallied block by block (a streamed run's summary) ----------------------------------


def _dense_agreement(column: list[Any]) -> dict[str, Any]:
    """The whole-table computation: judges x units matrix, then the two measures on it."""
    judges: list[str] = []
    units: dict[tuple[int, str], dict[str, float]] = {}
    for row, entries in enumerate(column):
        for entry in entries or []:
            if entry["judge"] not in judges:
                judges.append(entry["judge"])
            for criterion, level in entry["levels"].items():
                units.setdefault((row, criterion), {})[entry["judge"]] = float(level)
    data = np.array([[u.get(j, np.nan) for u in units.values()] for j in judges])
    complete = ~np.isnan(data).any(axis=0)
    return {
        "fleiss_kappa": fleiss_kappa(data[:, complete].T) if complete.any() else None,
        "alpha_nominal": krippendorff_alpha(data, "nominal"),
        "alpha_ordinal": krippendorff_alpha(data, "ordinal"),
        "units": len(units),
    }


panel_cells = st.lists(
    st.one_of(
        st.none(),
        st.lists(
            st.fixed_dictionaries(
                {
                    "judge": st.sampled_from(["a", "b", "c"]),
                    "levels": st.dictionaries(
                        st.sampled_from(["q1", "q2", "q3"]), st.integers(1, 4), max_size=3
                    ),
                }
            ),
            max_size=3,
            unique_by=lambda e: e["judge"],
        ),
    ),
    min_size=1,
    max_size=12,
)


@given(panel_cells, st.lists(st.integers(0, 12), max_size=4))
def test_agreement_tallied_in_blocks_equals_the_whole_table(
    column: list[Any], cuts: list[int]
) -> None:
    from rubriclab.calibration.measures import PanelTally

    bounds = [0, *sorted(min(c, len(column)) for c in cuts), len(column)]
    merged = PanelTally()
    for a, b in itertools.pairwise(bounds):
        block = PanelTally()
        block.add(column[a:b])
        merged.merge(PanelTally.from_dict(json.loads(json.dumps(block.to_dict()))))
    got, whole = merged.result(), panel_agreement(column)
    assert got == pytest.approx(whole, abs=1e-12)  # sums added in another order
    if got["judges"] >= 2 and got["units"]:
        want = _dense_agreement(column)
        assert got["units"] == want["units"]
        for key in ("fleiss_kappa", "alpha_nominal", "alpha_ordinal"):
            expected = want[key]
            if expected is None or math.isnan(expected):
                assert got[key] is None, key
            else:
                assert got[key] == pytest.approx(expected, abs=1e-9), key
