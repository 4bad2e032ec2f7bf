"""Result files: gzipped JSONL read and written wherever JSONL is, compact outputs that drop
the judge's raw answers and keep every summary, and names that are refused, not guessed."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pandas as pd
import pytest

import rubriclab as rl
from rubriclab.result.formats import dropped_columns, result_format, result_stem


def _rubric() -> rl.Rubric:
    return rl.Rubric.analytic(
        {
            "accuracy": {"levels": {1: "wrong", 2: "partly right", 3: "right"}},
            "clarity": {"levels": {1: "unclear", 2: "clear enough", 3: "clear"}},
        },
        pass_mark=0.5,
    )


def _metrics() -> list[rl.metrics.Metric]:
    return [
        rl.metrics.RubricMetric(rubric=_rubric(), name="quality"),
        rl.metrics.PairwiseRubricMetric(
            rubric=_rubric(), name="vs_base", baseline_column="baseline"
        ),
    ]


def _data(n: int = 24) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "prompt": [f"Question {i}: how many days does a refund take?" for i in range(n)],
            "response": [f"Refunds take {i % 40} days, counted from the return." for i in range(n)],
            "baseline": [f"About {i % 7} weeks." for i in range(n)],
        }
    )


@pytest.fixture(scope="module")
def result() -> rl.EvalResult:
    return rl.evaluate(_data(), _metrics(), judge=rl.Judge("mock"))


def _summary(r: rl.EvalResult) -> dict[str, object]:
    return {name: r.metric_summary(name).model_dump() for name in ("quality", "vs_base")}


def test_jsonl_gz_round_trips_and_is_gzip(result: rl.EvalResult, tmp_path: Path) -> None:
    plain = rl.load_result(result.save(tmp_path / "run.jsonl"))
    path = result.save(tmp_path / "run.jsonl.gz")
    assert path.read_bytes()[:2] == b"\x1f\x8b"  # a real gzip stream, readable by zcat
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        lines = fh.read().splitlines()
    assert "__rubriclab__" in json.loads(lines[0]) and len(lines) == 1 + len(result.table)
    back = rl.load_result(path)
    pd.testing.assert_frame_equal(back.table, plain.table)
    assert _summary(back) == _summary(result)
    opened = rl.open_result(path)
    assert not opened.loaded and opened.row_count == len(result.table)
    assert _summary(opened) == _summary(result)
    assert (tmp_path / "run.jsonl.gz").stat().st_size < (tmp_path / "run.jsonl").stat().st_size / 3


def test_labels_of_a_gzipped_result_sit_beside_it(result: rl.EvalResult, tmp_path: Path) -> None:
    from rubriclab.result.labels import labels_path

    assert labels_path(tmp_path / "run.jsonl.gz") == tmp_path / "run.labels.jsonl"
    assert labels_path(tmp_path / "run.parquet") == tmp_path / "run.labels.jsonl"
    assert result_stem("a.b.JSONL.GZ") == "a.b"


def test_a_folder_finds_its_gzipped_result_and_not_its_labels(
    result: rl.EvalResult, tmp_path: Path
) -> None:
    result.save(tmp_path / "results.jsonl.gz")
    assert len(rl.load_result(tmp_path).table) == len(result.table)
    other = tmp_path / "other"
    other.mkdir()
    result.save(other / "mine.jsonl")
    (other / "mine.labels.jsonl").write_text("")  # a labels file is no second result
    assert len(rl.load_result(other).table) == len(result.table)


@pytest.mark.parametrize("name", ["run.csv", "run.json", "run.txt", "run.gz"])
def test_a_result_name_of_another_format_is_refused(
    result: rl.EvalResult, tmp_path: Path, name: str
) -> None:
    # result.save("x.csv") once wrote JSONL under a CSV name
    with pytest.raises(ValueError, match=r"\.parquet, \.jsonl or \.jsonl\.gz"):
        result.save(tmp_path / name)
    assert not (tmp_path / name).exists()
    assert result_format("R.JSONL.GZ") == "jsonl.gz"
    assert result_format(tmp_path / "bare") == "jsonl"  # a bare name stays JSON Lines


@pytest.mark.parametrize("suffix", [".jsonl", ".jsonl.gz", ".parquet"])
def test_compact_drops_raw_answers_and_keeps_summaries(
    result: rl.EvalResult, tmp_path: Path, suffix: str
) -> None:
    pytest.importorskip("pyarrow")
    full = result.save(tmp_path / f"full{suffix}")
    compact = result.save(tmp_path / f"compact{suffix}", output_fields="compact")
    back = rl.load_result(compact)
    raw = [c for c in result.table.columns if str(c).endswith("/raw_output")]
    assert raw and not [c for c in back.table.columns if str(c).endswith("/raw_output")]
    assert [c for c in back.table.columns if c not in raw] == [
        c for c in result.table.columns if c not in raw
    ]
    assert _summary(back) == _summary(result)
    assert _summary(rl.open_result(compact)) == _summary(result)
    assert back.table["quality/criteria"].tolist() == result.table["quality/criteria"].tolist()
    assert compact.stat().st_size < full.stat().st_size
    # the result in memory is untouched
    assert all(c in result.table.columns for c in raw)


def test_output_fields_as_a_list_keeps_those_and_what_summaries_need(
    result: rl.EvalResult, tmp_path: Path
) -> None:
    back = rl.load_result(result.save(tmp_path / "r.jsonl", output_fields=["rationale"]))
    fields = {str(c).split("/", 1)[1] for c in back.table.columns if "/" in str(c)}
    assert {"score", "verdict", "passed", "error", "criteria", "rationale"} <= fields
    assert "raw_output" not in fields and "tokens" not in fields
    assert {"prompt", "response", "baseline"} <= set(back.table.columns)
    assert _summary(back) == _summary(result)


def test_unknown_output_field_is_named(result: rl.EvalResult, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown field 'raw'"):
        result.save(tmp_path / "r.jsonl", output_fields=["raw"])
    with pytest.raises(ValueError, match="'all', 'compact' or a list"):
        result.save(tmp_path / "r.jsonl", output_fields="smallest")  # type: ignore[arg-type]


def test_data_columns_that_look_like_metric_fields_are_kept() -> None:
    columns = ["notes/raw_output", "quality/raw_output", "quality/score"]
    assert dropped_columns(columns, "compact", ["quality"]) == ["quality/raw_output"]


@pytest.mark.parametrize("suffix", [".jsonl.gz", ".parquet", ".jsonl"])
def test_streamed_run_writes_gzip_and_compact(tmp_path: Path, suffix: str) -> None:
    pytest.importorskip("pyarrow")
    data = _data(30)
    source = tmp_path / "data.jsonl.gz"  # a gzipped source is read chunk by chunk too
    data.to_json(source, orient="records", lines=True, compression="gzip")
    memory = rl.evaluate(data, _metrics(), judge=rl.Judge("mock"))
    out = tmp_path / f"out{suffix}"
    streamed = rl.evaluate(
        str(source),
        _metrics(),
        judge=rl.Judge("mock"),
        output=out,
        chunk_rows=7,
        output_fields="compact",
    )
    assert _summary(streamed) == _summary(memory)
    table = rl.load_result(out).table
    assert len(table) == 30 and not any(str(c).endswith("/raw_output") for c in table.columns)
    assert table["quality/score"].tolist() == memory.table["quality/score"].tolist()
    if suffix == ".jsonl.gz":
        assert out.read_bytes()[:2] == b"\x1f\x8b"
    # the same call returns the finished file; another output_fields is another run
    again = rl.evaluate(
        str(source),
        _metrics(),
        judge=rl.Judge("mock"),
        output=out,
        chunk_rows=7,
        output_fields="compact",
    )
    assert _summary(again) == _summary(memory)
    with pytest.raises(ValueError, match="already holds a run"):
        rl.evaluate(str(source), _metrics(), judge=rl.Judge("mock"), output=out, chunk_rows=7)


def test_output_fields_without_output_says_how(result: rl.EvalResult) -> None:
    with pytest.raises(ValueError, match=r"result\.save\(path, output_fields="):
        rl.evaluate(_data(3), _metrics(), judge=rl.Judge("mock"), output_fields="compact")


def test_bad_output_name_is_refused_before_any_call(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"\.parquet, \.jsonl or \.jsonl\.gz"):
        rl.evaluate(_data(3), _metrics(), judge=rl.Judge("mock"), output=tmp_path / "x.csv")


def test_gzipped_csv_data_reads(tmp_path: Path) -> None:
    from rubriclab.data import read_table

    path = tmp_path / "d.csv.gz"
    _data(5).to_csv(path, index=False, compression="gzip")
    assert read_table(path)["response"].tolist() == _data(5)["response"].tolist()
