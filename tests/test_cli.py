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
    assert "support" in captured.out and "50.0%" in captured.out  # the summary on stdout
    assert "rubriclab run:" in captured.err and "wrote" in captured.err  # progress on stderr
    assert "rubriclab run:" not in captured.out


def test_fail_under_sets_the_exit_code(
    tmp_path: Path, judge: FakeJudgeServer, capsys: pytest.CaptureFixture[str]
) -> None:
    config = _config(tmp_path, _write_data(tmp_path, "csv").name, judge.url)

    assert main(["run", str(config), "--fail-under", "0.6"]) == 1
    err = capsys.readouterr().err
    assert "--fail-under read as 60.0%" in err
    assert "FAIL replies/support: mean 50.0% < 60.0%" in err
    assert main(["run", str(config), "--fail-under", "50%"]) == 0
    assert "OK every metric's mean is at least 50.0%" in capsys.readouterr().err
    # 70 cannot be a fraction: it reads as 70%, and says so, rather than failing with no hint
    assert main(["run", str(config), "--fail-under", "70"]) == 1
    err = capsys.readouterr().err
    assert "--fail-under read as 70.0%" in err and "mean 50.0% < 70.0%" in err


def test_fail_under_refuses_what_is_not_a_score(
    tmp_path: Path, judge: FakeJudgeServer, capsys: pytest.CaptureFixture[str]
) -> None:
    config = _config(tmp_path, _write_data(tmp_path, "csv").name, judge.url)
    for bad in ("high", "170", "-5%"):
        with pytest.raises(SystemExit) as info:
            main(["run", str(config), f"--fail-under={bad}"])
        assert info.value.code == 2
        assert "--fail-under must be a fraction like 0.7 or a percent like '70%'" in (
            capsys.readouterr().err
        )
    assert judge.requests == []  # refused before any call


def test_fail_under_from_the_config_and_a_run_with_no_scores_fails(
    tmp_path: Path, judge: FakeJudgeServer, capsys: pytest.CaptureFixture[str]
) -> None:
    config = _config(tmp_path, _write_data(tmp_path, "csv").name, judge.url, "fail_under: 0.9\n")
    assert main(["run", str(config)]) == 1

    judge.responder = lambda body: "I cannot grade this."  # every row ends in a recorded error
    config = _config(tmp_path, _write_data(tmp_path, "csv").name, judge.url)
    assert main(["run", str(config), "--fail-under", "0"]) == 3  # nothing scored: code 3
    assert "no scored rows" in capsys.readouterr().err
    # the first run's results stay; this one went beside them
    result = rl.load_result(tmp_path / "out" / "failed-run" / "results.jsonl")
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
        (lambda t: t + "metric: oops\n", "unknown key 'metric' (did you mean 'metrics'?)"),
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


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (
            lambda t: t.replace("rubric: support.yaml", "rubric: nowhere.yaml"),
            "eval.yaml: metrics[0].rubric: no file at",
        ),
        (
            lambda t: t.replace("name: support", "name: support\n    samples: two"),
            "metrics[0].samples: expected a whole number, got 'two'",
        ),
        (
            lambda t: t.replace("max_retries: 0", "max_retris: 0"),
            "unknown key 'max_retris' at judge.max_retris (did you mean 'max_retries'?)",
        ),
        (lambda t: t + "title: [1, 2]\n", "title: expected text, got a list"),
        (
            lambda t: t.replace("rubric: support.yaml", "use: text_qualty"),
            "(did you mean 'text_quality'?)",
        ),
        (
            lambda t: t.replace(
                "rubric: support.yaml", "rubric: {criteria: [{name: a, weight: heavy}]}"
            ),
            "metrics[0].rubric.criteria[0].weight: expected a number, got 'heavy'",
        ),
        (lambda t: t.replace(", model: judge-model", ""), "add judge.model"),
    ],
)
def test_config_errors_speak_yaml_keys_once_without_pydantic_text(
    tmp_path: Path,
    judge: FakeJudgeServer,
    capsys: pytest.CaptureFixture[str],
    edit: Any,
    message: str,
) -> None:
    config = _config(tmp_path, _write_data(tmp_path, "csv").name, judge.url)
    config.write_text(edit(config.read_text()))
    assert main(["run", str(config)]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err, err
    assert len(err.splitlines()) == 1
    assert "pydantic" not in err and "Input should" not in err and "Value error" not in err
    assert err.count("metrics[0]") <= 1  # never "metrics[0].rubric: metrics[0].rubric: ..."


def test_a_misspelled_key_in_a_rubric_file_names_the_file_and_the_key(
    tmp_path: Path, judge: FakeJudgeServer, capsys: pytest.CaptureFixture[str]
) -> None:
    config = _config(tmp_path, _write_data(tmp_path, "csv").name, judge.url)
    (tmp_path / "support.yaml").write_text(
        "name: s\ncriteria:\n  - name: a\n    weigth: 2\n    levels: 3\n", encoding="utf-8"
    )
    assert main(["run", str(config)]) == 2
    err = capsys.readouterr().err
    assert "metrics[0].rubric (support.yaml): unknown key 'weigth' at criteria[0].weigth" in err
    assert "(did you mean 'weight'?)" in err and "errors.pydantic.dev" not in err


def test_judge_url_and_model_flags_reach_any_openai_compatible_server(
    tmp_path: Path, judge: FakeJudgeServer
) -> None:
    config = _config(tmp_path, _write_data(tmp_path, "csv").name, "mock")
    argv = ["run", str(config), "--judge", judge.url, "--model", "served-model"]
    assert main(argv) == 0
    assert {r["model"] for r in judge.requests} == {"served-model"}
    assert not rl.load_result(tmp_path / "out" / "results.jsonl").is_mock


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--judge", "http://127.0.0.1:9/v1"], "--judge http://127.0.0.1:9/v1 needs --model NAME"),
        (["--judge", "nonsense"], "with --model NAME"),
        (["--judge", "openai", "--model", "gpt-4o-mini"], "or use --judge mock to run offline"),
    ],
)
def test_judge_flag_errors_speak_flags(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    argv: list[str],
    message: str,
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("RUBRICLAB_MODEL", raising=False)
    config = _config(tmp_path, _write_data(tmp_path, "csv").name, "mock")
    assert main(["run", str(config), *argv]) == 2
    err = capsys.readouterr().err
    assert message in err
    assert "model='" not in err and "api_key=" not in err and "Judge(" not in err


def test_rubriclab_judge_env_var_takes_a_url_with_rubriclab_model(
    tmp_path: Path, judge: FakeJudgeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = _config(tmp_path, _write_data(tmp_path, "csv").name, "mock")
    config.write_text(
        "\n".join(line for line in config.read_text().splitlines() if not line.startswith("judge"))
    )
    monkeypatch.setenv("RUBRICLAB_JUDGE", judge.url)
    monkeypatch.delenv("RUBRICLAB_MODEL", raising=False)
    rl.set_judge(None)
    with pytest.raises(ValueError, match="also set RUBRICLAB_MODEL"):
        rl.get_judge()
    monkeypatch.setenv("RUBRICLAB_MODEL", "env-model")
    assert main(["run", str(config)]) == 0
    assert {r["model"] for r in judge.requests} == {"env-model"}
    # --judge URL without --model reads RUBRICLAB_MODEL too
    judge.requests.clear()
    assert main(["run", str(config), "--judge", judge.url, "-o", str(tmp_path / "b")]) == 0
    assert {r["model"] for r in judge.requests} == {"env-model"}


def test_junit_xml_has_a_case_per_row_and_metric_with_failures_and_errors(
    tmp_path: Path, judge: FakeJudgeServer
) -> None:
    import xml.etree.ElementTree as ET

    # rows 1 and 3 never mention a refund: accuracy level 1 fails the critical criterion
    base = judge_scripts.realistic

    def responder(body: dict[str, Any]) -> Any:
        text = json.dumps(body["messages"])
        if "Damaged kettle" in text:
            return "I cannot answer \x00\x07 <script>alert(1)</script>"  # unreadable: a row error
        return base(body)

    judge.responder = responder
    config = _config(tmp_path, _write_data(tmp_path, "csv").name, judge.url)
    out = tmp_path / "junit.xml"
    assert main(["run", str(config), "--junit", str(out)]) == 0
    root = ET.parse(out).getroot()
    assert root.tag == "testsuites"
    (suite,) = root.findall("testsuite")
    assert suite.get("name") == "replies/support"
    cases = suite.findall("testcase")
    assert len(cases) == 4 and suite.get("tests") == "4"
    assert cases[0].get("name") == "row 0: Can I get my money back?"
    outcome = [
        "failure"
        if c.find("failure") is not None
        else "error"
        if c.find("error") is not None
        else "pass"
        for c in cases
    ]
    assert outcome == ["pass", "failure", "pass", "error"]
    assert suite.get("failures") == "1" and suite.get("errors") == "1"
    assert "accuracy below 2" in cases[1].find("failure").get("message")  # type: ignore[union-attr]


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
    assert "accurate_but_incomplete" in done.stdout and "75.0% pass" in done.stdout
    assert "60.0% fail (accuracy below 2)" in done.stdout
    assert "50.0% fail (score below pass mark)" in done.stdout
    assert "pass = verdict 'pass'" in done.stdout  # the pass rule is printed beside the rates
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

    host = ["--allow-key-for", f"127.0.0.1:{judge.port}"]  # (no provider's key lives there)
    assert main(["run", str(config), "--allow-env", "DATABASE_PASSWORD", *host]) == 0
    assert judge.log[0].headers["authorization"] == "Bearer hunter2-db-password"
    capsys.readouterr()

    config.write_text(text.replace("DATABASE_PASSWORD", "JUDGE_API_KEY"), encoding="utf-8")
    monkeypatch.setenv("JUDGE_API_KEY", "sk-judge-key-0001")
    assert main(["run", str(config), *host]) == 0  # a key-like name needs no confirmation
    assert judge.log[-1].headers["authorization"] == "Bearer sk-judge-key-0001"


def test_a_rubric_without_descriptors_is_warned_about_in_one_line(
    tmp_path: Path, judge: FakeJudgeServer, capsys: pytest.CaptureFixture[str]
) -> None:
    config = _config(tmp_path, _write_data(tmp_path, "csv").name, judge.url)
    (tmp_path / "support.yaml").write_text(
        "criteria:\n  tone:\n    levels: 3\n", encoding="utf-8"
    )  # replaces the lesson rubric the config names
    assert main(["run", str(config)]) == 0
    err = capsys.readouterr().err
    assert (
        "rubriclab: warning: criterion 'tone': 'levels: 3' gives levels without descriptors" in err
    )


def test_model_flag_alone_renames_the_configs_model(tmp_path: Path, judge: FakeJudgeServer) -> None:
    config = _config(tmp_path, _write_data(tmp_path, "csv").name, judge.url)
    assert main(["run", str(config), "--model", "other-model"]) == 0
    assert {r["model"] for r in judge.requests} == {"other-model"}


def test_demo_takes_a_url_judge_only_with_a_model(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("RUBRICLAB_MODEL", raising=False)
    assert main(["demo", "--judge", "http://127.0.0.1:9/v1", "--no-report"]) == 2
    assert "needs --model NAME" in capsys.readouterr().err


def test_over_long_paths_are_one_line_errors_never_tracebacks(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    long = "x" * 5000
    (tmp_path / "r.yaml").write_text(rl.Rubric.checklist(["ok?"]).to_yaml(), encoding="utf-8")
    (tmp_path / "d.csv").write_text("prompt,response\np,r\n", encoding="utf-8")
    rubric = "metrics:\n  - name: q\n    rubric: r.yaml\n"
    (tmp_path / "a.yaml").write_text(f"data: {long}.csv\njudge: mock\n{rubric}", encoding="utf-8")
    (tmp_path / "b.yaml").write_text(f"data: d.csv\njudge: mock\n{rubric}output: {long}\n")
    for argv in (["run", "a.yaml"], ["run", "b.yaml"], ["report", f"{long}.jsonl"]):
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert "Traceback" not in err
        errors = [line for line in err.splitlines() if ": error: " in line]
        assert len(errors) == 1 and len(errors[0]) < 300 and "too long" in errors[0], err


def _closed_port() -> int:
    """A port on 127.0.0.1 that nothing listens on (bound, then released)."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def test_a_run_that_scores_nothing_says_why_exits_3_and_keeps_the_earlier_results(
    tmp_path: Path, judge: FakeJudgeServer, capsys: pytest.CaptureFixture[str]
) -> None:
    data = _write_data(tmp_path, "csv").name
    assert main(["run", str(_config(tmp_path, data, judge.url))]) == 0
    out = tmp_path / "out"
    good = (out / "results.jsonl").read_bytes()
    capsys.readouterr()

    dead = f"http://127.0.0.1:{_closed_port()}/v1"
    assert main(["run", str(_config(tmp_path, data, dead))]) == 3
    err = capsys.readouterr().err
    assert "rubriclab run: support: 4 of 4 rows failed (no row scored)" in err
    assert (
        f"rubriclab run:   4x judge call failed: connect (1 attempt): cannot connect to {dead}"
        in (err)
    )
    assert "no row scored for support (exit code 3)" in err
    assert "kept the earlier results" in err
    assert (out / "results.jsonl").read_bytes() == good  # never overwritten by a dead run
    assert rl.load_result(out / "results.parquet").table["support/score"].notna().all()
    failed = rl.load_result(out / "failed-run" / "results.jsonl")
    assert failed.table["support/error"].str.contains("cannot connect").all()
    assert not (out / ".incoming").exists()

    # --overwrite asks for the replacement anyway; the exit code still says nothing scored
    assert main(["run", str(_config(tmp_path, data, dead)), "--overwrite"]) == 3
    replaced = rl.load_result(out / "results.jsonl")
    assert replaced.table["support/score"].isna().all()

    # a run that scores again replaces them as before, and exits 0
    assert main(["run", str(_config(tmp_path, data, judge.url))]) == 0
    assert rl.load_result(out / "results.jsonl").table["support/score"].notna().all()
    assert not (out / "failed-run").exists()  # superseded by the run that scored


def test_a_run_into_an_empty_folder_that_scores_nothing_writes_there_and_exits_3(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dead = f"http://127.0.0.1:{_closed_port()}/v1"
    config = _config(tmp_path, _write_data(tmp_path, "csv").name, dead)
    assert main(["run", str(config)]) == 3
    assert "4x judge call failed" in capsys.readouterr().err
    assert rl.load_result(tmp_path / "out" / "results.jsonl").table["support/error"].notna().all()


def test_some_failed_rows_are_counted_on_stderr_and_the_run_exits_0(
    tmp_path: Path, judge: FakeJudgeServer, capsys: pytest.CaptureFixture[str]
) -> None:
    def flaky(body: dict[str, Any]) -> str:
        text = json.dumps(body)
        if "Damaged kettle" in text or "Opened item" in text:
            return "I cannot grade this."
        return judge_scripts.realistic(body)

    judge.responder = flaky
    config = _config(tmp_path, _write_data(tmp_path, "csv").name, judge.url)
    assert main(["run", str(config)]) == 0
    err = capsys.readouterr().err
    assert "rubriclab run: support: 2 of 4 rows failed\n" in err
    assert "rubriclab run:   2x " in err


def test_exit_codes_are_in_the_help(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    out = capsys.readouterr().out
    assert "exit codes:" in out
    assert "3  run: a metric scored none of its rows" in out
    assert "--overwrite" in out


def test_compare_takes_result_folders_and_never_prints_a_traceback(
    tmp_path: Path, judge: FakeJudgeServer
) -> None:
    data = _write_data(tmp_path, "csv").name
    config = _config(tmp_path, data, judge.url)
    assert main(["run", str(config), "-o", str(tmp_path / "old")]) == 0
    assert main(["run", str(config), "-o", str(tmp_path / "new")]) == 0

    done = _cli("compare", "old", "new", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("== new vs old: 4 cases ==")
    assert "support: 50.0% -> 50.0%, diff 0.0%" in done.stdout
    # folders and files mix; a folder's results.jsonl is the one read
    done = _cli("compare", "old", "new/results.parquet", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    (tmp_path / "notes.txt").write_text("hello", encoding="utf-8")
    (tmp_path / "two").mkdir()
    (tmp_path / "two" / "a.jsonl").write_text("{}\n", encoding="utf-8")
    (tmp_path / "two" / "b.jsonl").write_text("{}\n", encoding="utf-8")
    for args, message in [
        (("old", "missing"), "no result file or folder at missing"),
        (("old", "notes.txt"), "notes.txt is not a rubriclab result"),
        (("old", str(tmp_path)), "holds no result file (results.jsonl or .parquet)"),
        (("old", "two"), "holds several result files (a.jsonl, b.jsonl)"),
        (("old", "new", "--json", "notes.txt/x.json"), "error: notes.txt"),
    ]:
        done = _cli("compare", *args, cwd=tmp_path)
        assert done.returncode == 2, (args, done.stderr)
        assert "Traceback" not in done.stderr
        assert done.stderr.startswith("rubriclab compare: error: ") and message in done.stderr
        assert done.stderr.count("\n") == 1  # one line
    done = _cli("compare", "old", "new", "--json", "made/here/cmp.json", cwd=tmp_path)
    assert done.returncode == 0 and json.loads((tmp_path / "made/here/cmp.json").read_text())


def test_report_output_follows_runs_path_rules(tmp_path: Path, judge: FakeJudgeServer) -> None:
    config = _config(tmp_path, _write_data(tmp_path, "csv").name, judge.url)
    assert main(["run", str(config)]) == 0
    out = tmp_path / "out"
    (tmp_path / "site").mkdir()
    for flag, page in [
        ("site", tmp_path / "site" / "report.html"),  # an existing folder: report.html inside
        ("pages/new", tmp_path / "pages" / "new" / "report.html"),  # a new folder, made
        ("deep/page.html", tmp_path / "deep" / "page.html"),  # a file name, its folder made
        ("out", out / "report.html"),  # the results folder itself, as run writes it
    ]:
        done = _cli("report", str(out), "-o", flag, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        assert "Traceback" not in done.stderr
        assert page.is_file() and "<script" not in page.read_text().lower()


def test_unknown_judge_providers_get_a_did_you_mean(
    tmp_path: Path, judge: FakeJudgeServer, capsys: pytest.CaptureFixture[str]
) -> None:
    config = _config(tmp_path, _write_data(tmp_path, "csv").name, judge.url)
    for flags, message in [
        (
            ["--judge", "opena", "--model", "m"],
            "unknown judge spec 'opena:m' (did you mean 'openai'?)",
        ),
        (
            ["--judge", "olama:qwen2.5"],
            "unknown judge spec 'olama:qwen2.5' (did you mean 'ollama'?)",
        ),
        (["--judge", "mokc"], "unknown judge spec 'mokc' (did you mean 'mock'?)"),
    ]:
        assert main(["run", str(config), *flags]) == 2
        assert message in capsys.readouterr().err
    with pytest.raises(ValueError, match=r"did you mean 'gemini'\?"):
        rl.Judge("gemeni:gemini-2.5-flash")
    assert judge.requests == []


def test_positive_pairwise_means_carry_a_plus_sign(tmp_path: Path, judge: FakeJudgeServer) -> None:
    from rubriclab.comparison import compare

    data = _write_data(tmp_path, "jsonl")
    config = _config(tmp_path, data.name, judge.url)
    text = config.read_text().replace(
        "output: out\n",
        "  - name: vs_old\n    rubric: ['Does it answer the question?']\n"
        "    baseline: old_answer\noutput: out\n",
    )
    config.write_text(text, encoding="utf-8")
    assert main(["run", str(config)]) == 0
    result = rl.load_result(tmp_path / "out")
    mean = result.metric_summary("vs_old").mean
    assert mean is not None and mean != 0
    shown = rl.format_percent(mean, signed=True)
    assert shown[0] in "+-"
    assert f"vs_old: {shown} -> {shown}, diff 0.0%" in compare(result, result).summary_text()


def test_fail_under_gates_pointwise_means_only(
    tmp_path: Path, judge: FakeJudgeServer, capsys: pytest.CaptureFixture[str]
) -> None:
    data = _write_data(tmp_path, "jsonl")
    config = _config(tmp_path, data.name, judge.url)
    text = config.read_text().replace(
        "output: out\n",
        "  - name: vs_old\n    rubric: ['Does it answer the question?']\n"
        "    baseline: old_answer\noutput: out\n",
    )
    config.write_text(text, encoding="utf-8")
    # support's mean is 50%; vs_old's mean (a preference on -100..+100%) is under 40%
    assert main(["run", str(config), "--fail-under", "0.4"]) == 0
    err = capsys.readouterr().err
    assert "--fail-under skips replies/vs_old: pairwise" in err
    assert "FAIL" not in err
    assert main(["run", str(config), "--fail-under", "0.6"]) == 1  # the pointwise gate holds
    assert "FAIL replies/support: mean 50.0% < 60.0%" in capsys.readouterr().err


# -- a config's key goes only where its provider is (issue 25, finding 1) -----------------------


@pytest.mark.parametrize(
    ("env", "named"),
    [
        ("GITHUB_TOKEN", "GitHub's key"),
        ("OPENAI_API_KEY", "OpenAI's key"),
        ("JUDGE_API_KEY", "a host no provider's key is known to belong to"),
    ],
)
def test_a_config_cannot_send_a_key_to_a_host_of_its_choosing(
    tmp_path: Path,
    judge: FakeJudgeServer,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    env: str,
    named: str,
) -> None:
    """The config names the variable and the URL: refused before any call, with the flag that
    allows it; allowed, the key reaches the server."""
    token = f"tok-{env.lower()}-0123456789"
    monkeypatch.setenv(env, token)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    data = _write_data(tmp_path, "csv")
    config = _config(tmp_path, data.name, judge.url)
    text = config.read_text(encoding="utf-8")
    config.write_text(
        text.replace("max_retries: 0}", f"max_retries: 0, api_key_env: {env}}}"), encoding="utf-8"
    )
    host = f"127.0.0.1:{judge.port}"

    assert main(["run", str(config)]) == 2
    err = capsys.readouterr().err
    assert named in err and f"--allow-key-for {host}" in err
    assert token not in err and len(err.strip().splitlines()) == 1
    assert judge.calls == 0  # nothing was sent anywhere

    assert main(["run", str(config), "--allow-key-for", "127.0.0.1:1"]) == 2  # another port
    assert judge.calls == 0
    capsys.readouterr()

    assert main(["run", str(config), "--allow-key-for", host]) == 0
    assert judge.log[0].headers["authorization"] == f"Bearer {token}"
    assert token not in capsys.readouterr().err


def test_a_config_panel_judge_and_a_renamed_model_keep_the_rule(
    tmp_path: Path,
    judge: FakeJudgeServer,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", "ghp-panel-token-0123456789")
    data = _write_data(tmp_path, "csv")
    config = _config(tmp_path, data.name, judge.url)
    text = config.read_text(encoding="utf-8")
    spec = f"{{spec: '{judge.url}', model: m, api_key_env: GITHUB_TOKEN}}"
    config.write_text(
        text.replace(
            "    rubric: support.yaml\n", f"    rubric: support.yaml\n    judges: [mock, {spec}]\n"
        ),
        encoding="utf-8",
    )
    assert main(["run", str(config)]) == 2
    err = capsys.readouterr().err
    assert "metrics[0].judges[1].api_key_env" in err and "--allow-key-for" in err
    assert judge.calls == 0

    config.write_text(
        text.replace("max_retries: 0}", "max_retries: 0, api_key_env: GITHUB_TOKEN}"),
        encoding="utf-8",
    )
    assert main(["run", str(config), "--model", "other-model"]) == 2  # the config's URL still
    assert "--allow-key-for" in capsys.readouterr().err
    assert judge.calls == 0
