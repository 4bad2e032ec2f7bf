"""``rubriclab run`` writes compact results when asked: ``output_fields:`` in the run config or
``--output-fields`` on the command line (the flag wins); bad values are one-line errors in the
user's terms (the YAML key, the flag)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

import rubriclab as rl
from rubriclab.cli import main
from rubriclab.demo import support_rubric
from rubriclab.testing import FakeJudgeServer

from . import judge_scripts

RAW = "support/raw_output"


def _config(folder: Path, judge_url: str, extra: str = "") -> Path:
    pd.DataFrame(
        {
            "question": ["Can I get my money back?", "How long is shipping?"],
            "answer": ["Yes, a full refund within 30 days.", "3-5 business days."],
        }
    ).to_csv(folder / "replies.csv", index=False)
    support_rubric().save(folder / "support.yaml")
    path = folder / "eval.yaml"
    path.write_text(
        "data: replies.csv\n"
        "mapping: {prompt: question, response: answer}\n"
        f"judge: {{spec: '{judge_url}', model: judge-model, max_retries: 0}}\n"
        "metrics:\n"
        "  - name: support\n"
        "    rubric: support.yaml\n"
        "output: out\n" + extra,
        encoding="utf-8",
    )
    return path


@pytest.fixture
def judge(fake_judge: FakeJudgeServer) -> FakeJudgeServer:
    fake_judge.responder = judge_scripts.realistic
    return fake_judge


def _saved(out: Path) -> dict[str, list[str]]:
    """The columns of each results file the run wrote (read back as a user would)."""
    jsonl = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    return {
        "results.jsonl": sorted({k for row in jsonl for k in row}),
        "results.parquet": sorted(pd.read_parquet(out / "results.parquet").columns),
    }


def test_config_output_fields_compact_drops_raw_answers_and_keeps_scores(
    tmp_path: Path, judge: FakeJudgeServer
) -> None:
    full = _config(tmp_path, judge.url, "output_fields: all\n")
    assert main(["run", str(full), "-o", str(tmp_path / "full")]) == 0
    compact = _config(tmp_path, judge.url, "output_fields: compact\n")
    assert main(["run", str(compact)]) == 0

    kept_all, kept_compact = _saved(tmp_path / "full"), _saved(tmp_path / "out")
    for name in ("results.jsonl", "results.parquet"):
        assert RAW in kept_all[name]  # the control: by default the raw answers are written
        assert RAW not in kept_compact[name]
        assert set(kept_compact[name]) == set(kept_all[name]) - {RAW}
    a = rl.load_result(tmp_path / "full" / "results.parquet")
    b = rl.load_result(tmp_path / "out" / "results.parquet")
    assert b.table["support/score"].tolist() == a.table["support/score"].tolist()
    assert b.table["support/rationale"].tolist() == a.table["support/rationale"].tolist()
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["support/mean"] == pytest.approx(a.table["support/score"].mean())


def test_output_fields_flag_overrides_the_config_and_takes_a_field_list(
    tmp_path: Path, judge: FakeJudgeServer
) -> None:
    config = _config(tmp_path, judge.url, "output_fields: all\n")
    assert main(["run", str(config), "--output-fields", "compact"]) == 0
    assert all(RAW not in cols for cols in _saved(tmp_path / "out").values())

    out = tmp_path / "fields"
    assert main(["run", str(config), "--output-fields", "score, tokens", "-o", str(out)]) == 0
    cols = _saved(out)
    assert "support/tokens" in cols["results.parquet"]
    assert "support/score" in cols["results.parquet"]
    assert RAW not in cols["results.parquet"] and "support/rationale" not in cols["results.parquet"]


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("compakt", "output_fields must be 'all', 'compact' or a list of field names"),
        ("[scor]", "output_fields: unknown field 'scor'; the fields are"),
        ("{a: 1}", "output_fields: expected text or a list"),
    ],
)
def test_a_bad_output_fields_key_is_one_line_in_yaml_terms(
    value: str,
    message: str,
    tmp_path: Path,
    judge: FakeJudgeServer,
    capsys: pytest.CaptureFixture[str],
) -> None:
    config = _config(tmp_path, judge.url, f"output_fields: {value}\n")
    assert main(["run", str(config)]) == 2
    err = capsys.readouterr().err
    assert message in err
    assert "Traceback" not in err and "pydantic" not in err
    assert judge.calls == 0  # refused before any judge call


def test_a_bad_output_fields_flag_names_the_flag(
    tmp_path: Path, judge: FakeJudgeServer, capsys: pytest.CaptureFixture[str]
) -> None:
    config = _config(tmp_path, judge.url)
    with pytest.raises(SystemExit) as info:
        main(["run", str(config), "--output-fields", "score,verdikt"])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert "--output-fields: unknown field 'verdikt'" in err
    assert judge.calls == 0
