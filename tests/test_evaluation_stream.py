"""Streamed runs: chunked sources, chunks saved as they finish, resume after a kill, file-backed
results whose summary never needs the table."""

from __future__ import annotations

import itertools
import json
import math
import os
import signal
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import rubriclab as rl
from rubriclab.data import DataError
from rubriclab.evaluation.stream import RunningSummary, iter_chunks
from rubriclab.judges import JudgeConfigError
from rubriclab.result import FileResult, load_result, open_result
from rubriclab.scoring import summarize

RUBRIC = rl.Rubric.analytic(
    {
        "accuracy": {"levels": {1: "wrong", 2: "partly right", 3: "right"}},
        "clarity": {"levels": {1: "unclear", 2: "clear enough", 3: "clear"}},
        "brevity": {"levels": {1: "rambling", 2: "fine", 3: "crisp"}},
    },
    pass_mark=0.5,
)
METRIC = rl.metrics.RubricMetric(rubric=RUBRIC, name="quality")
JUDGED = ["quality/score", "quality/verdict", "quality/passed", "quality/criteria", "quality/error"]


def frame(rows: int) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "prompt": [f"Question {i}: what is {i} + {i}?" for i in range(rows)],
            "response": [f"It is {2 * i}." if i % 3 else f"Maybe {i}." for i in range(rows)],
        }
    )


def judged(table: pd.DataFrame) -> list[list[Any]]:
    cols = ["prompt", "response", *JUDGED]
    return [[json.dumps(v, sort_keys=True, default=str) for v in row] for row in table[cols].values]


def test_rubric_fixture_has_three_criteria() -> None:
    assert len(RUBRIC.criteria) == 3


# -- chunks ----------------------------------------------------------------------------------------


def test_iter_chunks_cuts_every_source_the_same_way(tmp_path: Path) -> None:
    data = frame(25)
    data.to_parquet(tmp_path / "d.parquet")
    data.to_json(tmp_path / "d.jsonl", orient="records", lines=True)
    data.to_csv(tmp_path / "d.csv", index=False)

    def ragged() -> Iterator[pd.DataFrame]:  # an iterator whose pieces ignore the chunk size
        for start, stop in [(0, 3), (3, 4), (4, 19), (19, 25)]:
            yield data.iloc[start:stop]

    sources: list[Any] = [
        data,
        data.to_dict("records"),
        tmp_path / "d.parquet",
        str(tmp_path / "d.jsonl"),
        tmp_path / "d.csv",
        ragged(),
    ]
    for source in sources:
        chunks = list(iter_chunks(source, 10))
        assert [len(c) for c in chunks] == [10, 10, 5], source
        assert [c.index[0] for c in chunks] == [0, 10, 20]
        pd.testing.assert_frame_equal(pd.concat(chunks), data, check_dtype=False)


def test_iter_chunks_rejects_bad_items_and_sizes() -> None:
    with pytest.raises(ValueError, match="chunk_rows must be an integer >= 1"):
        list(iter_chunks(frame(3), 0))
    with pytest.raises(DataError, match="item 1 is a dict, not a DataFrame"):
        list(iter_chunks(iter([frame(2), {"prompt": "x"}]), 5))


def test_running_summary_matches_summarize_over_the_whole_column() -> None:
    values = [0.1, None, 0.5, 0.9, float("nan"), 1.0, 0.0, 0.25, 0.75, 0.3]
    passed = [False, None, True, True, None, True, False, False, True, False]
    running = RunningSummary()
    for start in range(0, len(values), 3):
        running.add(values[start : start + 3], passed[start : start + 3])
    whole = summarize(values, passed=passed)
    got = running.summary()
    assert (got.n, got.scored, got.errors) == (whole.n, whole.scored, whole.errors)
    assert got.mean == pytest.approx(whole.mean)
    assert got.std == pytest.approx(whole.std)
    assert got.pass_rate == whole.pass_rate

    pairwise = RunningSummary(pairwise=True)
    choices = [1.0, -0.5, 0.0, None, 0.5, -1.0]
    pairwise.add(choices[:4])
    pairwise.add(choices[4:])
    want = summarize(choices, choices=choices)
    assert pairwise.summary().win == want.win
    assert pairwise.summary().loss == want.loss


def test_merged_partial_summaries_equal_one_summary_of_every_row() -> None:
    """Workers summarise their own blocks; merging the partials gives the whole column's
    summary, whatever the block sizes (empty and all-error blocks included)."""
    values = [0.1, None, 0.5, 0.9, float("nan"), 1.0, 0.0, 0.25, 0.75, 0.3, None]
    passed = [False, None, True, True, None, True, False, False, True, False, None]
    whole = summarize(values, passed=passed)
    for cuts in ([0, 11], [0, 1, 2, 11], [0, 4, 5, 9, 11], [0, 0, 6, 6, 11]):
        merged = RunningSummary()
        for a, b in itertools.pairwise(cuts):
            part = RunningSummary()
            part.add(values[a:b], passed[a:b])
            merged.merge(RunningSummary.from_dict(part.to_dict()))
        got = merged.summary()
        assert (got.n, got.scored, got.errors) == (whole.n, whole.scored, whole.errors)
        assert got.mean == pytest.approx(whole.mean)
        assert got.std == pytest.approx(whole.std)
        assert got.pass_rate == whole.pass_rate


# -- streamed runs ---------------------------------------------------------------------------------


@pytest.mark.parametrize("suffix", [".parquet", ".jsonl"])
def test_streamed_run_equals_in_memory_run(tmp_path: Path, suffix: str) -> None:
    data = frame(23)
    judge = rl.Judge("mock")
    whole = rl.evaluate(data, [METRIC], judge=judge)
    out = tmp_path / f"results{suffix}"

    streamed = rl.evaluate(data, [METRIC], judge=judge, output=out, chunk_rows=5)

    assert isinstance(streamed, FileResult)
    assert out.exists() and not (tmp_path / f"results{suffix}.partial").exists()
    # the summary and row count come from the file's header, without reading the table
    assert streamed.row_count == 23
    summary = streamed.summary
    assert not streamed.loaded
    pd.testing.assert_frame_equal(
        summary.drop(columns=["calls", "cached_calls", "tokens", "cost"]),
        whole.summary.drop(columns=["calls", "cached_calls", "tokens", "cost"]),
        check_exact=False,
    )
    assert streamed.is_mock and "MOCK" in repr(streamed)
    # the table loads on access and holds the same judgments, row for row
    assert judged(streamed.table) == judged(whole.table)
    assert streamed.loaded
    assert judged(load_result(out).table) == judged(whole.table)


def test_streamed_parquet_has_one_row_group_per_chunk(tmp_path: Path) -> None:
    import pyarrow.parquet as pq

    out = tmp_path / "r.parquet"
    rl.evaluate(frame(12), [METRIC], judge="mock", output=out, chunk_rows=5)
    assert pq.ParquetFile(out).num_row_groups == 3


def test_file_source_streams_and_rerun_returns_the_finished_file(tmp_path: Path) -> None:
    src = tmp_path / "data.jsonl"
    frame(11).to_json(src, orient="records", lines=True)
    out = tmp_path / "r.parquet"
    first = rl.evaluate(str(src), [METRIC], judge="mock", output=out, chunk_rows=4)
    stamp = out.stat().st_mtime_ns

    again = rl.evaluate(str(src), [METRIC], judge="mock", output=out, chunk_rows=4)

    assert out.stat().st_mtime_ns == stamp  # nothing judged or written again
    assert again.summary.equals(first.summary)


def test_an_output_holding_another_run_is_never_overwritten(tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    rl.evaluate(frame(4), [METRIC], judge="mock", output=out)
    other = rl.metrics.RubricMetric(rubric=RUBRIC, name="other")
    with pytest.raises(ValueError, match="already holds a run with other metrics"):
        rl.evaluate(frame(4), [other], judge="mock", output=out)
    (tmp_path / "plain.jsonl").write_text('{"a": 1}\n')
    with pytest.raises(ValueError, match="not a streamed rubriclab result"):
        rl.evaluate(frame(4), [METRIC], judge="mock", output=tmp_path / "plain.jsonl")
    with pytest.raises(ValueError, match=r"output must end in \.parquet, \.jsonl or \.jsonl\.gz"):
        rl.evaluate(frame(4), [METRIC], judge="mock", output=tmp_path / "r.csv")


def test_iterator_without_output_joins_chunks_in_memory() -> None:
    data = frame(9)
    result = rl.evaluate(
        (data.iloc[i : i + 2] for i in range(0, 9, 2)), [METRIC], judge="mock", chunk_rows=4
    )
    assert judged(result.table) == judged(rl.evaluate(data, [METRIC], judge="mock").table)
    assert result.stats.calls["quality"] == 9


def test_row_errors_are_kept_in_the_file_and_the_running_summary(
    tmp_path: Path, fake_judge: Any
) -> None:
    def answer(body: dict[str, Any]) -> Any:
        text = json.dumps(body["messages"])
        if "Question 4:" in text or "Question 7:" in text:
            return "not json at all"
        from rubriclab.testing import default_responder

        return default_responder(body)

    fake_judge.responder = answer
    judge = rl.Judge(fake_judge.url, model="m", max_retries=0)
    metric = rl.metrics.RubricMetric(rubric=RUBRIC, name="quality", reask=0)
    result = rl.evaluate(
        frame(10), [metric], judge=judge, output=tmp_path / "r.parquet", chunk_rows=3
    )
    assert result.summary.loc["quality", "errors"] == 2
    table = result.table
    assert table["quality/error"].notna().sum() == 2
    assert table.loc[4, "quality/raw_output"] is not None


# -- resume --------------------------------------------------------------------------------------

CHILD = textwrap.dedent(
    """
    import sys
    import pandas as pd
    import rubriclab as rl
    from tests.test_evaluation_stream import METRIC, frame

    url, out, cache = sys.argv[1:4]
    judge = rl.Judge(url, model="m", max_retries=0, max_concurrency=4, cache=cache)
    rl.evaluate(frame(60), [METRIC], judge=judge, output=out, chunk_rows=10)
    """
)


def test_kill_9_mid_run_loses_at_most_the_chunk_in_flight(tmp_path: Path, fake_judge: Any) -> None:
    from rubriclab.testing import Faults, default_responder

    def answer(body: dict[str, Any]) -> Any:
        if fake_judge.calls >= 25:  # from here on every request hangs: chunk 3 never finishes
            fake_judge.faults = Faults(rate_hang=1.0, hang_seconds=600)
        return default_responder(body)

    fake_judge.responder = answer
    out = tmp_path / "r.parquet"
    state = tmp_path / "r.parquet.partial" / "state.json"
    cache = tmp_path / "cache.sqlite3"
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, fake_judge.url, str(out), str(cache)],
        cwd=Path(__file__).resolve().parents[1],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        assert _wait_for(lambda: _saved_chunks(state) == 2 or child.poll() is not None)
        assert child.poll() is None, "the child ended before it was killed"
        os.kill(child.pid, signal.SIGKILL)  # mid-run: chunk 3 is in flight
        child.wait(timeout=30)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert _saved_chunks(state) == 2
    assert not out.exists()
    fake_judge.faults = None
    fake_judge.responder = default_responder
    asked_before = fake_judge.calls

    # the same call again (in this process; a new one behaves the same): rows of the two saved
    # chunks are never asked again, and the cache answers what chunk 3 had finished
    judge = rl.Judge(fake_judge.url, model="m", max_retries=0, max_concurrency=4, cache=cache)
    resumed = rl.evaluate(frame(60), [METRIC], judge=judge, output=out, chunk_rows=10)

    assert not state.exists()
    asked_again = [json.dumps(b["messages"]) for b in fake_judge.requests[asked_before:]]
    assert 0 < len(asked_again) <= 40
    assert not any(f"Question {i}:" in text for text in asked_again for i in range(20))
    assert resumed.row_count == 60
    reference = rl.evaluate(
        frame(60), [METRIC], judge=rl.Judge(fake_judge.url, model="m", cache=False)
    )
    assert judged(resumed.table) == judged(reference.table)
    assert resumed.summary.loc["quality", "n"] == 60
    assert resumed.summary.loc["quality", "mean"] == pytest.approx(
        reference.summary.loc["quality", "mean"]
    )


def _saved_chunks(state: Path) -> int:
    try:
        return int(json.loads(state.read_text())["chunks"])
    except (OSError, ValueError, KeyError):
        return 0


def _wait_for(condition: Any, timeout: float = 120.0) -> bool:
    """Poll a condition another process makes true (there is no event to wait on)."""
    import time

    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def test_a_partial_run_of_other_metrics_is_not_continued(tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    partial = tmp_path / "r.jsonl.partial"
    partial.mkdir()
    (partial / "state.json").write_text(
        json.dumps({"fingerprint": "x", "chunk_rows": 5, "chunks": 1, "rows": 5, "running": {}})
    )
    with pytest.raises(ValueError, match="holds an unfinished run with other metrics"):
        rl.evaluate(frame(8), [METRIC], judge="mock", output=out, chunk_rows=5)


def test_open_result_reads_only_the_header(tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    rl.evaluate(frame(6), [METRIC], judge="mock", output=out, chunk_rows=4)
    opened = open_result(out)
    assert opened.row_count == 6 and not opened.loaded
    assert opened.summary_metrics["quality/n"] == 6
    assert not opened.loaded
    assert math.isclose(
        opened.summary_metrics["quality/mean"], opened.table["quality/score"].mean()
    )


def test_displaying_a_big_file_result_does_not_load_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import rubriclab.result as result_module

    out = tmp_path / "r.parquet"
    rl.evaluate(frame(6), [METRIC], judge="mock", output=out, chunk_rows=4)
    monkeypatch.setattr(result_module, "DISPLAY_LOAD_MAX_ROWS", 5)
    opened = open_result(out)
    bundle = opened._repr_mimebundle_()
    assert not opened.loaded
    assert "result.table loads them" in bundle["text/plain"]
    assert bundle["text/html"].startswith("<pre>") and "<script" not in bundle["text/html"]


def test_cli_run_streams_into_results_jsonl(tmp_path: Path) -> None:
    from rubriclab.cli import main

    frame(7).to_csv(tmp_path / "answers.csv", index=False)
    (tmp_path / "rubric.yaml").write_text(RUBRIC.to_yaml(), encoding="utf-8")
    config = tmp_path / "eval.yaml"
    config.write_text(
        "data: answers.csv\njudge: mock\nmetrics:\n  - name: quality\n    rubric: rubric.yaml\n"
        "output: out\n",
        encoding="utf-8",
    )
    assert main(["run", str(config)]) == 0
    out = tmp_path / "out"
    assert not (out / "results.jsonl.partial").exists()
    saved = load_result(out / "results.jsonl")
    assert saved.row_count == 7 and saved.meta["config"] == str(config)
    # a second run is a fresh run (it replaces the results), not a no-op
    stamp = (out / "results.jsonl").stat().st_mtime_ns
    assert main(["run", str(config)]) == 0
    assert (out / "results.jsonl").stat().st_mtime_ns != stamp


# -- pairwise streamed summaries -------------------------------------------------------------------


def _pairwise_rows() -> tuple[list[Any], list[Any], list[Any]]:
    """Choices (None: an error row), order-consistency flags (None/NaN: unknown) and criteria."""
    choices = [1.0, 0.5, None, 0.0, -0.5, -1.0, 0.5, None, 1.0, 0.0]
    swaps: list[Any] = [True, False, True, None, float("nan"), True, False, False, True, True]
    sides = ["candidate", "tie", "baseline"]
    criteria = [
        [{"name": n, "winner": sides[(i + k) % 3]} for k, n in enumerate(["acc", "tone"])]
        for i in range(len(choices))
    ]
    criteria[3] = "not a list"  # a cell that is not a criteria list counts nowhere
    return choices, swaps, criteria


def test_pairwise_running_summary_counts_flips_and_criteria_as_summarize_does() -> None:
    choices, swaps, criteria = _pairwise_rows()
    want = summarize(choices, choices=choices, swap_consistent=swaps, criteria=criteria)
    for cuts in ([0, 10], [0, 3, 7, 10], [0, 0, 1, 10]):
        merged = RunningSummary(pairwise=True)
        for a, b in itertools.pairwise(cuts):
            part = RunningSummary(pairwise=True)
            part.add(choices[a:b], swap_consistent=swaps[a:b], criteria=criteria[a:b])
            merged.merge(RunningSummary.from_dict(json.loads(json.dumps(part.to_dict()))))
        assert_same_summary(merged.summary(), want)
    assert want.swap_inconsistent == 2 and want.criteria and want.criteria["acc"].win > 0


def assert_same_summary(got: Any, want: Any) -> None:
    """Equal, but for the float rounding of a mean and std merged block by block."""
    rounded = {"mean", "std"}
    assert got.model_dump(exclude=rounded) == want.model_dump(exclude=rounded)
    assert got.mean == pytest.approx(want.mean) and got.std == pytest.approx(want.std)


def test_a_streamed_pairwise_run_summarises_flips_and_criteria_without_the_table(
    tmp_path: Path,
) -> None:
    rubric = rl.Rubric.checklist(["Is it correct?", "Is it polite?", "Is it short?"])
    metric = rl.metrics.PairwiseRubricMetric(rubric=rubric, name="vs")
    data = frame(23).assign(baseline_model_response=[f"Perhaps {i}." for i in range(23)])
    whole = rl.evaluate(data, [metric], judge="mock")
    out = tmp_path / "pairwise.parquet"
    rl.evaluate(data, [metric], judge="mock", output=out, chunk_rows=5)

    opened = open_result(out)
    summary, wins = opened.metric_summary("vs"), opened.criterion_wins("vs")
    text = opened.summary_text()
    assert not opened.loaded
    assert_same_summary(summary, whole.metric_summary("vs"))
    assert summary.swap_inconsistent is not None and summary.criteria
    pd.testing.assert_frame_equal(wins, whole.criterion_wins("vs"))
    assert "per criterion (win/tie/loss)" in text


def test_a_streamed_panel_run_reports_agreement_without_the_table(tmp_path: Path) -> None:
    metric = rl.metrics.RubricMetric(
        rubric=RUBRIC, name="panel", judges=["mock:a", "mock:b", "mock:c"]
    )
    whole = rl.evaluate(frame(17), [metric], judge="mock")
    out = tmp_path / "panel.jsonl"
    rl.evaluate(frame(17), [metric], output=out, chunk_rows=4)  # the panel is the only judge

    opened = open_result(out)
    summary = opened.summary
    assert not opened.loaded
    want = whole.summary
    for column in ("fleiss_kappa", "alpha_nominal", "alpha_ordinal", "mean", "n"):
        assert summary.loc["panel", column] == pytest.approx(want.loc["panel", column]), column
    assert opened.panel_agreement("panel") == pytest.approx(whole.panel_agreement("panel"))
    assert whole.panel_agreement("panel")["units"] == 17 * 3
    assert rl.evaluate(frame(3), [METRIC], judge="mock").panel_agreement("quality") is None


def test_a_streamed_run_needs_no_judge_when_its_metrics_need_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As in memory: computation metrics judge nothing; a judged metric says no judge is set."""
    monkeypatch.delenv("RUBRICLAB_JUDGE", raising=False)
    data = frame(7).assign(reference=[f"It is {2 * i}." for i in range(7)])
    out = tmp_path / "exact.parquet"
    result = rl.evaluate(data, [rl.metrics.exact_match], output=out, chunk_rows=3)
    assert result.summary.loc["exact_match", "n"] == 7
    assert result.summary.loc["exact_match", "mean"] == pytest.approx(
        rl.evaluate(data, [rl.metrics.exact_match]).summary.loc["exact_match", "mean"]
    )
    with pytest.raises(JudgeConfigError, match="no judge set"):
        rl.evaluate(data, [METRIC], output=tmp_path / "judged.jsonl", chunk_rows=3)


def test_an_output_judged_by_one_panel_is_not_taken_for_another_panels(tmp_path: Path) -> None:
    def panel(*judges: str) -> Any:
        return rl.metrics.RubricMetric(rubric=RUBRIC, name="panel", judges=list(judges))

    out = tmp_path / "panel.jsonl"
    first = rl.evaluate(frame(5), [panel("mock:a", "mock:b")], output=out, chunk_rows=2)
    again = rl.evaluate(frame(5), [panel("mock:a", "mock:b")], output=out, chunk_rows=2)
    assert again.stream_fingerprint == first.stream_fingerprint
    with pytest.raises(ValueError, match="already holds a run with other metrics, judge"):
        rl.evaluate(frame(5), [panel("mock:a", "mock:c")], output=out, chunk_rows=2)


# -- resume checks: changed sources, two runs at once, the summary from the rows -----------------


def _interrupt_after(monkeypatch: pytest.MonkeyPatch, chunks: int) -> None:
    """Ctrl-C while chunk ``chunks + 1`` is being judged (the finished ones stay saved)."""
    from rubriclab.evaluation import stream

    real = stream.evaluate_frame
    calls = itertools.count()

    async def interrupted(*args: Any, **kwargs: Any) -> Any:
        if next(calls) >= chunks:
            raise KeyboardInterrupt
        return await real(*args, **kwargs)

    monkeypatch.setattr(stream, "evaluate_frame", interrupted)


def _partial_run(
    monkeypatch: pytest.MonkeyPatch, source: Any, out: Path, chunks: int = 2, rows: int = 4
) -> None:
    with monkeypatch.context() as m:
        _interrupt_after(m, chunks)
        with pytest.raises(KeyboardInterrupt):
            rl.evaluate(source, [METRIC], judge="mock", output=out, chunk_rows=rows)
    assert _saved_chunks(out.with_name(out.name + ".partial") / "state.json") == chunks


def _other_rows(rows: int) -> pd.DataFrame:
    data = frame(rows)
    data["response"] = [f"New answer {i}." for i in range(rows)]
    return data


@pytest.mark.parametrize("suffix", [".jsonl", ".parquet"])
def test_resuming_over_changed_data_is_refused_never_mixed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, suffix: str
) -> None:
    src = tmp_path / "data.jsonl"
    frame(12).to_json(src, orient="records", lines=True)
    out = tmp_path / f"r{suffix}"
    _partial_run(monkeypatch, str(src), out)
    _other_rows(30).to_json(src, orient="records", lines=True)  # 8 old rows judged, 30 new
    with pytest.raises(DataError, match=r"data changed since .* rows 0-3 \(chunk 1"):
        rl.evaluate(str(src), [METRIC], judge="mock", output=out, chunk_rows=4)
    assert not out.exists()
    frame(4).to_json(src, orient="records", lines=True)  # shorter than what was judged
    with pytest.raises(DataError, match="fewer rows than the 8"):
        rl.evaluate(str(src), [METRIC], judge="mock", output=out, chunk_rows=4)


def test_resuming_over_the_same_rows_rewritten_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # negative control: the file rewritten with the same rows (new mtime) and rows appended
    # after the judged chunks resume as before
    src = tmp_path / "data.jsonl"
    frame(12).to_json(src, orient="records", lines=True)
    out = tmp_path / "r.jsonl"
    _partial_run(monkeypatch, str(src), out)
    frame(14).to_json(src, orient="records", lines=True)
    resumed = rl.evaluate(str(src), [METRIC], judge="mock", output=out, chunk_rows=4)
    assert judged(resumed.table) == judged(rl.evaluate(frame(14), [METRIC], judge="mock").table)
    stamp = out.stat().st_mtime_ns  # and the finished file is the result of the data as it is
    again = rl.evaluate(str(src), [METRIC], judge="mock", output=out, chunk_rows=4)
    assert out.stat().st_mtime_ns == stamp and again.row_count == 14


def test_a_finished_output_of_a_changed_file_is_not_returned_as_its_result(
    tmp_path: Path,
) -> None:
    src = tmp_path / "data.jsonl"
    frame(6).to_json(src, orient="records", lines=True)
    out = tmp_path / "r.jsonl"
    rl.evaluate(str(src), [METRIC], judge="mock", output=out, chunk_rows=4)
    _other_rows(9).to_json(src, orient="records", lines=True)
    with pytest.raises(ValueError, match="file has changed since"):
        rl.evaluate(str(src), [METRIC], judge="mock", output=out, chunk_rows=4)


def test_the_final_summary_is_the_rows_summary_not_the_state_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "r.jsonl"
    _partial_run(monkeypatch, frame(11), out)
    state_path = tmp_path / "r.jsonl.partial" / "state.json"
    state = json.loads(state_path.read_text())
    state["running"]["quality"].update(n=1000, scored=1000, mean=0.99, pass_k=1000, pass_n=1000)
    state_path.write_text(json.dumps(state))

    resumed = rl.evaluate(frame(11), [METRIC], judge="mock", output=out, chunk_rows=4)

    reference = rl.evaluate(frame(11), [METRIC], judge="mock")
    got, want = resumed.summary.loc["quality"], reference.summary.loc["quality"]
    assert got["n"] == 11 and got["mean"] == pytest.approx(want["mean"])
    assert got["pass_rate"] == pytest.approx(want["pass_rate"])
    assert open_result(out).summary.loc["quality", "n"] == 11


def test_chunk_files_that_do_not_hold_the_judged_rows_are_never_a_finished_result(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "r.jsonl"
    _partial_run(monkeypatch, frame(11), out)
    chunk = tmp_path / "r.jsonl.partial" / "chunk-000000.jsonl"
    lines = chunk.read_text().splitlines(keepends=True)
    chunk.write_text("".join(lines + lines[:2]))  # what two writers of one chunk leave
    with pytest.raises(DataError, match="holds 6 rows, not the 4 judged"):
        rl.evaluate(frame(11), [METRIC], judge="mock", output=out, chunk_rows=4)
    assert not out.exists()


CHILD_SLOW = textwrap.dedent(
    """
    import sys
    import rubriclab as rl
    from tests.test_evaluation_stream import METRIC, frame

    url, out = sys.argv[1:3]
    judge = rl.Judge(url, model="m", max_retries=0, max_concurrency=2, cache=False)
    rl.evaluate(frame(40), [METRIC], judge=judge, output=out, chunk_rows=4)
    """
)


def test_a_second_run_on_one_output_is_refused_while_the_first_runs(
    tmp_path: Path, fake_judge: Any
) -> None:
    fake_judge.latency = 0.05  # ~1 s for 40 rows: the first run is in flight when we start
    out = tmp_path / "r.jsonl"
    state = tmp_path / "r.jsonl.partial" / "state.json"
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD_SLOW, fake_judge.url, str(out)],
        cwd=Path(__file__).resolve().parents[1],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        assert _wait_for(lambda: _saved_chunks(state) >= 1 or child.poll() is not None)
        assert child.poll() is None, "the first run ended before the second started"
        judge = rl.Judge(fake_judge.url, model="m", cache=False)
        with pytest.raises(ValueError, match=r"another run is writing .*r\.jsonl"):
            rl.evaluate(frame(40), [METRIC], judge=judge, output=out, chunk_rows=4)
        assert child.wait(timeout=120) == 0, child.stderr.read() if child.stderr else ""
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    done = open_result(out)
    assert done.row_count == 40 and done.summary.loc["quality", "n"] == 40
    assert len(done.table) == 40
