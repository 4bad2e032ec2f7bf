"""rl.compare: pairing, bootstrap intervals, exact McNemar, per-criterion counts, the CLI gate."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
from scipy.stats import binomtest

import rubriclab as rl
from rubriclab.cli import main
from rubriclab.comparison import mcnemar_exact, paired_bootstrap, parse_gate
from rubriclab.result import EvalResult, MetricInfo


def _criteria(levels: dict[str, int]) -> list[dict[str, object]]:
    return [{"name": k, "level": v, "label": str(v)} for k, v in levels.items()]


def _run(
    ids: list[str],
    scores: list[float | None],
    passed: list[bool | None] | None = None,
    errors: list[str | None] | None = None,
    criteria: list[dict[str, int]] | None = None,
) -> EvalResult:
    n = len(ids)
    table = pd.DataFrame({"id": ids, "prompt": [f"p{i}" for i in ids]})
    table["m/score"] = pd.Series(scores, dtype=float)
    table["m/passed"] = pd.Series(passed or [None] * n, dtype=object)
    table["m/verdict"] = [
        None if p is None else ("pass" if p else "fail") for p in passed or [None] * n
    ]
    table["m/error"] = pd.Series(errors or [None] * n, dtype=object)
    table["m/criteria"] = pd.Series(
        [_criteria(c) for c in criteria] if criteria else [[] for _ in ids], dtype=object
    )
    table["m/rationale"] = [f"because {i}" for i in ids]
    return EvalResult(table, [MetricInfo("m")], judge="test")


def test_differences_are_b_minus_a_per_case_with_bootstrap_interval() -> None:
    a = _run(["x", "y", "z", "w"], [0.5, 0.5, 1.0, 0.0])
    b = _run(["w", "z", "y", "x"], [0.5, 1.0, 0.75, 1.0])  # another order: paired by id
    c = rl.compare(a, b)
    assert c.table.loc["x", "m/diff"] == pytest.approx(0.5)
    assert c.table.loc["y", "m/diff"] == pytest.approx(0.25)
    assert c.table.loc["z", "m/diff"] == pytest.approx(0.0)
    assert c.table.loc["w", "m/diff"] == pytest.approx(0.5)
    row = c.summary.loc["m"]
    assert row["diff"] == pytest.approx(0.3125)
    assert (row["better"], row["same"], row["worse"]) == (3, 1, 0)
    assert row["ci_low"] <= row["diff"] <= row["ci_high"]
    assert row["ci_low"] >= 0.0  # no resample of these four differences is negative
    again = rl.compare(a, b)
    assert again.summary.loc["m", "ci_low"] == row["ci_low"]  # seeded


@pytest.mark.parametrize(
    "d",
    [
        # few distinct values (judge scores): exact multinomial resampling
        np.random.default_rng(7).choice([-0.5, -0.25, 0.0, 0.25, 0.5, 1.0], size=400),
        # skewed, every value distinct (ROUGE-like): stratified resampling
        np.random.default_rng(3).exponential(size=5000) - 0.9,
    ],
    ids=["few-values", "all-distinct"],
)
def test_bootstrap_interval_matches_index_resampling(d: np.ndarray) -> None:
    low, high = paired_bootstrap(d, n_boot=10_000, seed=1)
    idx = np.random.default_rng(2).integers(0, len(d), size=(10_000, len(d)))
    ref_low, ref_high = np.quantile(d[idx].mean(axis=1), [0.025, 0.975])
    width = ref_high - ref_low
    assert abs(low - ref_low) < 0.05 * width
    assert abs(high - ref_high) < 0.05 * width


def test_bootstrap_hand_case_two_values() -> None:
    # d in {0, 1} half each, n = 2: the resampled means are 0, 0.5, 1 with prob 1/4, 1/2, 1/4
    low, high = paired_bootstrap([0.0, 1.0], n_boot=10_000, seed=0)
    assert (low, high) == (0.0, 1.0)
    assert paired_bootstrap([0.2] * 5) == (0.2, 0.2)
    assert all(math.isnan(v) for v in paired_bootstrap([]))


@pytest.mark.parametrize(("b", "c"), [(0, 0), (0, 5), (3, 9), (7, 7), (12, 1), (40, 25), (0, 1)])
def test_mcnemar_exact_equals_scipy_binomtest(b: int, c: int) -> None:
    expected = 1.0 if b + c == 0 else binomtest(b, b + c, 0.5).pvalue
    assert mcnemar_exact(b, c) == pytest.approx(expected, rel=1e-9, abs=1e-15)


def test_mcnemar_large_counts_do_not_underflow() -> None:
    assert mcnemar_exact(5200, 4800) == pytest.approx(binomtest(5200, 10_000, 0.5).pvalue, rel=1e-7)


def test_pass_rate_difference_uses_discordant_pairs() -> None:
    ids = [str(i) for i in range(10)]
    pa = [True, True, True, False, False, False, False, False, True, True]
    pb = [True, False, True, True, True, True, True, True, True, True]
    a = _run(ids, [1.0 if p else 0.0 for p in pa], passed=pa)
    b = _run(ids, [1.0 if p else 0.0 for p in pb], passed=pb)
    row = rl.compare(a, b).summary.loc["m"]
    assert (row["pass_a_only"], row["pass_b_only"]) == (1, 5)
    assert row["pass_a"] == pytest.approx(0.5)
    assert row["pass_b"] == pytest.approx(0.9)
    assert row["pass_diff"] == pytest.approx(0.4)
    assert row["mcnemar_p"] == pytest.approx(binomtest(1, 6, 0.5).pvalue)


def test_errored_rows_are_listed_and_never_paired() -> None:
    a = _run(["1", "2", "3"], [0.5, None, 1.0], errors=[None, "judge call failed: 500", None])
    b = _run(["1", "2", "3"], [1.0, 1.0, None])  # row 3 has no score and no error text
    c = rl.compare(a, b)
    row = c.summary.loc["m"]
    assert row["pairs"] == 1
    assert row["errored"] == 2
    assert row["diff"] == pytest.approx(0.5)
    errs = c.errored.set_index("key")
    assert errs.loc["2", "error_A"] == "judge call failed: 500"
    assert errs.loc["3", "error_B"] == "no score"
    assert math.isnan(c.table.loc["2", "m/diff"])


def test_cases_in_one_run_only_are_listed() -> None:
    c = rl.compare(_run(["1", "2", "3"], [0.1, 0.2, 0.3]), _run(["2", "3", "4"], [0.2, 0.3, 0.4]))
    assert c.only_a == ["1"]
    assert c.only_b == ["4"]
    assert list(c.table.index) == ["2", "3"]


def test_repeated_keys_are_refused_with_the_fix() -> None:
    with pytest.raises(ValueError, match=r"repeated case keys.*key="):
        rl.compare(_run(["1", "1"], [0.1, 0.2]), _run(["1", "2"], [0.1, 0.2]))


def test_explicit_key_and_missing_key_column() -> None:
    a, b = _run(["1", "2"], [0.1, 0.2]), _run(["1", "2"], [0.3, 0.2])
    c = rl.compare(a, b, key="prompt")
    assert list(c.table.index) == ["p1", "p2"]
    with pytest.raises(ValueError, match="'nope' not in run A"):
        rl.compare(a, b, key="nope")


def test_per_criterion_better_same_worse() -> None:
    crit_a = [{"accuracy": 2, "tone": 3}, {"accuracy": 1, "tone": 3}, {"accuracy": 4, "tone": 2}]
    crit_b = [{"accuracy": 3, "tone": 3}, {"accuracy": 3, "tone": 2}, {"accuracy": 4, "tone": 2}]
    a = _run(["1", "2", "3"], [0.5, 0.4, 0.8], criteria=crit_a)
    b = _run(["1", "2", "3"], [0.7, 0.6, 0.8], criteria=crit_b)
    crit = rl.compare(a, b).criteria.set_index("criterion")
    assert list(crit.index) == ["accuracy", "tone"]  # sorted by the largest change
    assert crit.loc["accuracy", "diff"] == pytest.approx(1.0)
    assert tuple(crit.loc["accuracy", ["better", "same", "worse"]]) == (2, 1, 0)
    assert tuple(crit.loc["tone", ["better", "same", "worse"]]) == (0, 2, 1)
    assert crit.loc["tone", "diff"] == pytest.approx(-1 / 3)


def test_a_run_against_itself_is_all_zero(tmp_path) -> None:
    rubric = rl.Rubric(
        criteria=[rl.Criterion.yes_no("States the deadline?"), rl.Criterion.yes_no("Polite?")],
        pass_mark=0.5,
    )
    df = pd.DataFrame(
        {
            "id": [f"c{i}" for i in range(6)],
            "prompt": ["When is it due?"] * 6,
            "response": [f"August {10 + i}th" for i in range(6)],
            "reference": ["August 15th"] * 6,
        }
    )
    metric = rl.metrics.RubricMetric(name="q", rubric=rubric)
    result = rl.evaluate(df, [metric, rl.metrics.rouge_l], judge="mock")
    path = result.save(tmp_path / "run.jsonl")
    c = rl.compare(path, rl.load_result(path))
    for m in ("q", "rouge_l"):
        row = c.summary.loc[m]
        assert row["pairs"] == 6
        assert (row["diff"], row["ci_low"], row["ci_high"]) == (0.0, 0.0, 0.0)
        assert (row["better"], row["worse"]) == (0, 0)
    assert (c.criteria["diff"] == 0).all()
    assert len(c.criteria) == 2
    assert c.summary.loc["q", "mcnemar_p"] == 1.0
    data = json.loads(json.dumps(c.to_dict()))
    assert data["metrics"][0]["metric"] == "q"
    assert "MOCK" in c.summary_text()


def test_metrics_only_in_one_run_and_no_shared_metric() -> None:
    a = _run(["1"], [0.1])
    other = EvalResult(
        pd.DataFrame({"id": ["1"], "z/score": [0.2]}), [MetricInfo("z")], judge="test"
    )
    with pytest.raises(ValueError, match="share no metric"):
        rl.compare(a, other)


def test_parse_gate() -> None:
    assert parse_gate("support") == ("support", 0.0)
    assert parse_gate("support:0.05") == ("support", 0.05)
    assert parse_gate("support:5%") == ("support", pytest.approx(0.05))
    with pytest.raises(ValueError, match="not a number"):
        parse_gate("support:lots")
    with pytest.raises(ValueError, match="0-1"):
        parse_gate("support:3")


# -- the CLI gate -------------------------------------------------------------------------------


@pytest.fixture
def two_runs(tmp_path):
    ids = [str(i) for i in range(8)]
    a = _run(ids, [0.8] * 8, passed=[True] * 8).save(tmp_path / "old.jsonl")
    b = _run(ids, [0.77] * 8, passed=[True] * 7 + [False]).save(tmp_path / "new.jsonl")
    return a, b


def test_cli_compare_prints_and_passes_without_gate(two_runs, capsys, tmp_path) -> None:
    a, b = two_runs
    out_json = tmp_path / "cmp.json"
    assert main(["compare", str(a), str(b), "--json", str(out_json)]) == 0
    out = capsys.readouterr().out
    assert "new vs old" in out
    assert "80.0% -> 77.0%" in out
    assert json.loads(out_json.read_text())["names"] == ["old", "new"]


def test_cli_fail_if_worse_exit_codes(two_runs, capsys) -> None:
    a, b = two_runs
    assert main(["compare", str(a), str(b), "--fail-if-worse", "m"]) == 1
    assert "FAIL m: new is 3.0% below old" in capsys.readouterr().err
    assert main(["compare", str(a), str(b), "--fail-if-worse", "m:5%"]) == 0
    assert main(["compare", str(a), str(b), "--fail-if-worse", "m:0.02"]) == 1
    assert main(["compare", str(b), str(a), "--fail-if-worse", "m"]) == 0  # the other way: better


def test_cli_compare_bad_input_exits_2(two_runs, capsys, tmp_path) -> None:
    a, b = two_runs
    assert main(["compare", str(a), str(b), "--fail-if-worse", "nope"]) == 2
    assert "no metric 'nope'" in capsys.readouterr().err
    assert main(["compare", str(a), str(b), "--fail-if-worse", "m:x"]) == 2
    assert main(["compare", str(a), str(tmp_path / "missing.jsonl")]) == 2
    assert "no result file" in capsys.readouterr().err


def test_runs_are_named_as_the_callers_code_names_them() -> None:
    """Issue 26: ``rl.compare(v1, v2)`` (the README's line) named its runs "A" and "B"; the one
    name each result has in the caller's code names it now, and anything ambiguous keeps A/B."""
    v1 = _run(["x", "y"], [0.5, 1.0])
    v2 = _run(["x", "y"], [1.0, 1.0])
    assert rl.compare(v1, v2).names == ("v1", "v2")
    assert rl.compare(v1, v2, names=("old", "new")).names == ("old", "new")
    also = v1  # two names for one result: no guess
    assert rl.compare(also, v2).names == ("A", "v2")
    assert rl.compare(_run(["x"], [0.5]), _run(["x"], [1.0])).names == ("A", "B")
    v1.meta["title"] = "prompt v1"  # a result's own title comes first
    assert rl.compare(v1, v2).names == ("prompt v1", "v2")
    assert "v2 vs prompt v1" in rl.ComparisonView(rl.compare(v1, v2)).title
