"""The ``rubriclab`` command as CI uses it: run a config over each data format against a real
HTTP judge on 127.0.0.1, gate on ``--fail-under``, rebuild reports, and the offline demo."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import rubriclab as rl
from rubriclab.cli import main
from rubriclab.demo import support_rubric
from rubriclab.testing import FakeJudgeServer

from . import judge_scripts

# judge_scripts.realistic gives every analytic criterion level 3 when the response mentions a
# refund and level 1 otherwise: these rows score 1.0, 0.0, 1.0, 0.0 (mean 0.5).
ROWS = [
    ("Can I get my money back?", "Yes, a full refund within 30 days of delivery.", "Sure."),
    ("How long is shipping?", "3-5 business days.", "Shipping takes 3-5 business days, or 1-2."),
    ("Opened item?", "Store credit only; an unused item gets a refund.", "Credit."),
    ("Damaged kettle?", "Send a <b>photo</b> & we replace it.", "We replace it free of charge."),
]


def _frame() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "question": [q for q, _, _ in ROWS],
            "answer": [a for _, a, _ in ROWS],
            "old_answer": [o for _, _, o in ROWS],
        }
    )


def _write_data(folder: Path, fmt: str) -> Path:
    frame = _frame()
    path = folder / f"replies.{fmt}"
    if fmt == "csv":
        frame.to_csv(path, index=False)
    elif fmt == "jsonl":
        frame.to_json(path, orient="records", lines=True)
    else:
        frame.to_parquet(path, index=False)
    return path


def _config(folder: Path, data: str, judge_url: str, extra: str = "") -> Path:
    support_rubric().save(folder / "support.yaml")
    path = folder / "eval.yaml"
    path.write_text(
        f"data: {data}\n"
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


@pytest.mark.parametrize("fmt", ["csv", "jsonl", "parquet"])
def test_run_reads_each_format_and_writes_results_and_report(
    fmt: str, tmp_path: Path, judge: FakeJudgeServer, capsys: pytest.CaptureFixture[str]
) -> None:
    data = _write_data(tmp_path, fmt)
    config = _config(tmp_path, data.name, judge.url)

    assert main(["run", str(config)]) == 0

    out = tmp_path / "out"
    assert sorted(p.name for p in out.iterdir()) == [
        "report.html",
        "results.jsonl",
        "results.parquet",
        "summary.json",
    ]
    assert len(judge.requests) == len(ROWS)  # one critique call per row, over HTTP
    for saved in ("results.jsonl", "results.parquet"):
        result = rl.load_result(out / saved)
        assert result.table["support/score"].tolist() == [1.0, 0.0, 1.0, 0.0]
        assert result.table["answer"].tolist() == [a for _, a, _ in ROWS]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["row_count"] == 4
    assert summary["support/mean"] == pytest.approx(0.5)
    page = (out / "report.html").read_text()
    assert "Send a &lt;b&gt;photo&lt;/b&gt; &amp; we replace it." in page
    captured = capsys.readouterr()
    assert "support" in captured.out and "0.500" in captured.out  # the summary on stdout
    assert "rubriclab run:" in captured.err and "wrote" in captured.err  # progress on stderr
    assert "rubriclab run:" not in captured.out


def test_fail_under_sets_the_exit_code(
    tmp_path: Path, judge: FakeJudgeServer, capsys: pytest.CaptureFixture[str]
) -> None:
    config = _config(tmp_path, _write_data(tmp_path, "csv").name, judge.url)

    assert main(["run", str(config), "--fail-under", "0.6"]) == 1
    assert "FAIL replies/support: mean 0.500 < 0.6" in capsys.readouterr().err
    assert main(["run", str(config), "--fail-under", "0.5"]) == 0
    assert "OK every metric's mean is at least 0.5" in capsys.readouterr().err


def test_fail_under_from_the_config_and_a_run_with_no_scores_fails(
    tmp_path: Path, judge: FakeJudgeServer, capsys: pytest.CaptureFixture[str]
) -> None:
    config = _config(tmp_path, _write_data(tmp_path, "csv").name, judge.url, "fail_under: 0.9\n")
    assert main(["run", str(config)]) == 1

    judge.responder = lambda body: "I cannot grade this."  # every row ends in a recorded error
    config = _config(tmp_path, _write_data(tmp_path, "csv").name, judge.url)
    assert main(["run", str(config), "--fail-under", "0"]) == 1
    assert "no scored rows" in capsys.readouterr().err
    result = rl.load_result(tmp_path / "out" / "results.jsonl")
    assert result.table["support/error"].notna().all()  # errors kept on their rows
    assert result.table["support/raw_output"].str.contains("cannot grade").all()


def test_run_pairwise_against_a_baseline_column(tmp_path: Path, judge: FakeJudgeServer) -> None:
    data = _write_data(tmp_path, "jsonl")
    config = _config(tmp_path, data.name, judge.url)
    text = config.read_text().replace(
        "output: out\n",
        "  - name: vs_old\n"
        "    rubric: ['Does it answer the question?', 'Is every fact right?']\n"
        "    baseline: old_answer\n",
    )
    config.write_text(text + "output: out\n")

    assert main(["run", str(config)]) == 0

    table = rl.load_result(tmp_path / "out" / "results.jsonl").table
    # the scripted judge prefers the longer answer in both orders
    longer = [len(a) > len(o) for _, a, o in ROWS]
    assert table["vs_old/score"].tolist() == [0.5 if x else -0.5 for x in longer]  # "better"
    assert table["vs_old/swap_consistent"].tolist() == [True] * 4
    assert len(judge.requests) == 4 + 2 * 4  # pointwise once, pairwise in both orders


def test_run_judge_flag_overrides_the_config(
    tmp_path: Path, judge: FakeJudgeServer, capsys: pytest.CaptureFixture[str]
) -> None:
    config = _config(tmp_path, _write_data(tmp_path, "csv").name, judge.url)
    assert main(["run", str(config), "--judge", "mock", "-o", str(tmp_path / "mock")]) == 0
    assert judge.requests == []
    assert rl.load_result(tmp_path / "mock" / "results.jsonl").is_mock
    assert "MOCK judge" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda t: t + "metric: oops\n", "unknown key 'metric' at metric"),
        (lambda t: t.replace("rubric: support.yaml", "rubrik: support.yaml"), "'rubrik'"),
        (lambda t: t.replace("data: replies.csv", "data: nowhere.csv"), "no file at"),
        (lambda t: t.replace("rubric: support.yaml", "use: no_such_metric"), "no predefined"),
    ],
)
def test_bad_config_is_one_line_and_exit_code_2(
    tmp_path: Path,
    judge: FakeJudgeServer,
    capsys: pytest.CaptureFixture[str],
    edit: Any,
    message: str,
) -> None:
    config = _config(tmp_path, _write_data(tmp_path, "csv").name, judge.url)
    config.write_text(edit(config.read_text()))
    assert main(["run", str(config)]) == 2
    err = capsys.readouterr().err
    assert message in err
    assert "Traceback" not in err
    assert judge.requests == []


def test_missing_column_names_the_column(
    tmp_path: Path, judge: FakeJudgeServer, capsys: pytest.CaptureFixture[str]
) -> None:
    config = _config(tmp_path, _write_data(tmp_path, "csv").name, judge.url)
    config.write_text(config.read_text().replace("response: answer", "response: reply"))
    assert main(["run", str(config)]) == 2
    assert "'reply'" in capsys.readouterr().err


def test_report_rebuilds_a_page_from_saved_results(
    tmp_path: Path, judge: FakeJudgeServer, capsys: pytest.CaptureFixture[str]
) -> None:
    config = _config(tmp_path, _write_data(tmp_path, "csv").name, judge.url)
    assert main(["run", str(config)]) == 0
    extra = rl.load_result(tmp_path / "out" / "results.jsonl")
    extra.save(tmp_path / "second.parquet")
    page = tmp_path / "site" / "index.html"

    code = main(
        ["report", str(tmp_path / "out"), str(tmp_path / "second.parquet"), "-o", str(page)]
    )

    assert code == 0
    text = page.read_text()
    assert 'href="#result-1">out<' in text and 'href="#result-2">second<' in text
    assert text.count("Send a &lt;b&gt;photo&lt;/b&gt;") >= 2
    assert "<script" not in text.lower()
    assert main(["report", str(tmp_path / "out"), "-o", str(page), "--fail-under", "0.9"]) == 1
    assert main(["report", str(tmp_path / "nothing"), "-o", str(page)]) == 2
    assert "no result file or folder" in capsys.readouterr().err


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "RUBRICLAB_JUDGE"}
    return subprocess.run(
        [sys.executable, "-m", "rubriclab", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )


def test_demo_runs_offline_prints_summaries_and_writes_the_report(tmp_path: Path) -> None:
    done = _cli("demo", "--report", "demo.html", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "MOCK" in done.stdout
    assert "accurate_but_incomplete" in done.stdout and "75.0 pass" in done.stdout
    for section in ("text_quality", "pairwise_multimodal_understanding", "support"):
        assert section in done.stdout
    page = (tmp_path / "demo.html").read_text()
    assert page.startswith("<!DOCTYPE html>")
    assert "data:image/png;base64," in page  # the car pictures are embedded, not linked
    assert "<script" not in page.lower()


def test_help_reads_well() -> None:
    done = _cli("--help", cwd=Path.cwd())
    assert done.returncode == 0
    for command in ("demo", "run", "report", "serve-fake-judge", "--fail-under"):
        assert command in done.stdout
    run_help = _cli("run", "--help", cwd=Path.cwd())
    assert "unknown keys are errors" in run_help.stdout and "--fail-under SCORE" in run_help.stdout
    fake = _cli("serve-fake-judge", "--help", cwd=Path.cwd())
    assert fake.returncode == 0 and "--rate-429" in fake.stdout
    bare = _cli(cwd=Path.cwd())
    assert bare.returncode == 2 and "usage: rubriclab" in bare.stderr


def test_run_with_a_template_file_sends_that_prompt(tmp_path: Path, judge: FakeJudgeServer) -> None:
    data = _write_data(tmp_path, "csv")
    (tmp_path / "house.jinja").write_text(
        "HOUSE PROMPT for {{ prompt }}\n"
        "{% for c in criteria %}{{ c.name }} {% endfor %}\n"
        "<response>\n{{ response }}\n</response>\n",
        encoding="utf-8",
    )
    config = _config(tmp_path, data.name, judge.url)
    config.write_text(
        config.read_text().replace(
            "    rubric: support.yaml\n", "    rubric: support.yaml\n    template: house.jinja\n"
        )
    )

    assert main(["run", str(config)]) == 0

    first = judge.requests[0]["messages"][0]["content"]
    assert first.startswith("HOUSE PROMPT for Can I get my money back?")
    assert "accuracy completeness tone conciseness" in first
    scores = rl.load_result(tmp_path / "out" / "results.jsonl").table["support/score"]
    assert scores.tolist() == [1.0, 0.0, 1.0, 0.0]


def test_a_config_may_send_only_key_like_variables_unless_the_user_allows_one(
    tmp_path: Path,
    judge: FakeJudgeServer,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    data = _write_data(tmp_path, "csv")
    config = _config(tmp_path, data.name, judge.url)
    text = config.read_text(encoding="utf-8").replace(
        "max_retries: 0}", "max_retries: 0, api_key_env: DATABASE_PASSWORD}"
    )
    config.write_text(text, encoding="utf-8")
    monkeypatch.setenv("DATABASE_PASSWORD", "hunter2-db-password")

    assert main(["run", str(config)]) == 2
    err = capsys.readouterr().err
    assert "'DATABASE_PASSWORD', which does not look like an API key variable" in err
    assert "--allow-env DATABASE_PASSWORD" in err and "hunter2" not in err
    assert judge.calls == 0  # nothing was sent anywhere

    assert main(["run", str(config), "--allow-env", "DATABASE_PASSWORD"]) == 0
    assert judge.log[0].headers["authorization"] == "Bearer hunter2-db-password"
    capsys.readouterr()

    config.write_text(text.replace("DATABASE_PASSWORD", "JUDGE_API_KEY"), encoding="utf-8")
    monkeypatch.setenv("JUDGE_API_KEY", "sk-judge-key-0001")
    assert main(["run", str(config)]) == 0  # a key-like name needs no confirmation
    assert judge.log[-1].headers["authorization"] == "Bearer sk-judge-key-0001"
