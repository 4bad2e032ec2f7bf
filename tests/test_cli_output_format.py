"""``rubriclab run`` streams gzipped results when asked (``output_format: jsonl.gz`` in the run
config, or ``--output-format``), and every command that reads a results folder reads them: the
folder never keeps an earlier run's file in another format beside the new one."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

import rubriclab as rl
from rubriclab.cli import main
from rubriclab.testing import FakeJudgeServer

from . import judge_scripts
from .test_cli_output_fields import _config


@pytest.fixture
def judge(fake_judge: FakeJudgeServer) -> FakeJudgeServer:
    fake_judge.responder = judge_scripts.realistic
    return fake_judge


def _rows(path: Path) -> list[dict[str, object]]:
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh]


def test_config_output_format_gz_writes_gzipped_json_lines_every_command_reads(
    tmp_path: Path, judge: FakeJudgeServer, capsys: pytest.CaptureFixture[str]
) -> None:
    config = _config(tmp_path, judge.url, "output_format: jsonl.gz\n")
    assert main(["run", str(config)]) == 0
    out = tmp_path / "out"
    assert not (out / "results.jsonl").exists()
    rows = _rows(out / "results.jsonl.gz")  # plain gzip: zcat and pandas read it
    assert "__rubriclab__" in rows[0] and len(rows) == 3
    scores = [r["support/score"] for r in rows[1:]]
    again = rl.load_result(out)  # the folder stands for its results file
    assert again.table["support/score"].tolist() == scores
    summary = json.loads((out / "summary.json").read_text())
    assert summary["support/mean"] == pytest.approx(sum(scores) / len(scores))  # type: ignore[arg-type]

    capsys.readouterr()
    assert main(["report", str(out), "-o", str(tmp_path / "page.html")]) == 0
    assert "out" in capsys.readouterr().out  # named after its folder, as results.jsonl is
    assert main(["compare", str(out), str(out / "results.jsonl.gz")]) == 0
    assert "Traceback" not in capsys.readouterr().err


def test_the_flag_overrides_the_config_and_replaces_an_earlier_plain_run(
    tmp_path: Path, judge: FakeJudgeServer
) -> None:
    config = _config(tmp_path, judge.url)
    assert main(["run", str(config)]) == 0
    out = tmp_path / "out"
    assert (out / "results.jsonl").exists()  # the control: plain JSON Lines by default
    first = judge.calls

    assert main(["run", str(config), "--output-format", "jsonl.gz"]) == 0
    assert judge.calls == 2 * first  # judged again, not read back from the plain file
    # the earlier plain file would be read in place of the new run: it is gone
    assert not (out / "results.jsonl").exists()
    assert len(_rows(out / "results.jsonl.gz")) == 3
    assert sorted(p.name for p in out.glob("results.*")) == [
        "results.jsonl.gz",
        "results.parquet",
    ]

    assert main(["run", str(config), "--output-format", "jsonl"]) == 0
    assert not (out / "results.jsonl.gz").exists()
    assert (out / "results.jsonl").exists()


def test_a_bad_output_format_key_is_one_line_in_yaml_terms(
    tmp_path: Path, judge: FakeJudgeServer, capsys: pytest.CaptureFixture[str]
) -> None:
    config = _config(tmp_path, judge.url, "output_format: csv\n")
    assert main(["run", str(config)]) == 2
    err = capsys.readouterr().err
    assert "output_format" in err and "jsonl.gz" in err
    assert len(err.strip().splitlines()) == 1
    assert "Traceback" not in err and "pydantic" not in err
    assert judge.calls == 0


def test_a_bad_output_format_flag_names_the_flag(
    tmp_path: Path, judge: FakeJudgeServer, capsys: pytest.CaptureFixture[str]
) -> None:
    config = _config(tmp_path, judge.url)
    with pytest.raises(SystemExit) as info:
        main(["run", str(config), "--output-format", "parquet"])
    assert info.value.code == 2
    assert "--output-format" in capsys.readouterr().err
    assert judge.calls == 0
