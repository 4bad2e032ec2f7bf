"""``rubriclab run`` with ``prompts:`` x ``models:`` (issue 35 point 3) and ``rubriclab arena
CONFIG`` (issue 34): generation and judging against the fake judge server, with the server's
request log as the count of what each run really asked."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import rubriclab as rl
from rubriclab.cli import main
from rubriclab.testing import FakeJudgeServer

from . import judge_scripts


def responder(body: dict[str, Any]) -> str:
    """Models named gen-* write answers (longer for later letters); the judge judges."""
    model = body["model"]
    if model.startswith("gen-"):
        prompt = str(body["messages"][-1]["content"])
        return f"{model} says: {prompt} " + "detail " * (ord(model[-1]) - ord("a"))
    return judge_scripts.realistic(body)


@pytest.fixture
def server() -> Any:
    with FakeJudgeServer(responder) as s:
        yield s


def _config(tmp_path: Path, url: str, models: list[str], **extra: Any) -> Path:
    pd.DataFrame({"question": ["How long is shipping?", "Can I pay by card?"]}).to_csv(
        tmp_path / "q.csv", index=False
    )
    config = {
        "data": "q.csv",
        "judge": {"spec": url, "model": "judge"},
        "prompts": {
            "terse": "Answer in one line: {{ question }}",
            "kind": "Answer kindly: {{ question | upper }}",
        },
        "models": [{"spec": url, "model": m, "name": m} for m in models],
        "metrics": [{"name": "ok", "rubric": ["Does it answer the question?"]}],
        **extra,
    }
    path = tmp_path / "run.yaml"
    path.write_text(json.dumps(config))  # JSON is YAML
    return path


def _by_model(server: FakeJudgeServer) -> Counter[str]:
    return Counter(r["model"] for r in server.requests)


def test_two_prompts_by_two_models_make_four_runs_and_their_comparison(
    tmp_path: Path, server: FakeJudgeServer, capsys: pytest.CaptureFixture[str]
) -> None:
    config = _config(tmp_path, server.url, ["gen-a", "gen-b"])
    assert main(["run", str(config)]) == 0
    out = tmp_path / "results"
    runs = ["terse__gen-a", "terse__gen-b", "kind__gen-a", "kind__gen-b"]
    for name in runs:
        table = rl.load_result(out / name / "results.jsonl").table
        assert len(table) == 2 and table["ok/score"].notna().all()
    # the templates were rendered in the sandbox over the data's columns
    sent = [r["messages"][-1]["content"] for r in server.requests if r["model"] == "gen-a"]
    assert sorted(sent) == sorted(
        [
            "Answer in one line: How long is shipping?",
            "Answer in one line: Can I pay by card?",
            "Answer kindly: HOW LONG IS SHIPPING?",
            "Answer kindly: CAN I PAY BY CARD?",
        ]
    )
    board = json.loads((out / "leaderboard.json").read_text())
    assert [r["run"] for r in board] == runs
    # more than two runs: the arena ranks them; gen-b's longer answers win the realistic judge
    arena = json.loads((out / "arena.json").read_text())
    ranking = [r["candidate"] for r in arena["ranking"]]
    assert set(ranking) == set(runs) and ranking[0].endswith("gen-b")
    assert (out / "arena.html").read_text().startswith("<!doctype html>")
    first = _by_model(server)
    assert (first["gen-a"], first["gen-b"]) == (4, 4)  # 2 prompts x 2 rows each

    # a third model: only its calls (4 answers, its 2 runs' judging, the arena pairs with it)
    server.reset()
    config = _config(tmp_path, server.url, ["gen-a", "gen-b", "gen-c"])
    assert main(["run", str(config)]) == 0
    again = _by_model(server)
    assert again["gen-a"] == 0 and again["gen-b"] == 0 and again["gen-c"] == 4
    judged = [r for r in server.requests if r["model"] == "judge"]
    assert judged and all(
        "gen-c says" in json.dumps(r["messages"]) or "gen-c" in json.dumps(r["messages"])
        for r in judged
    )
    arena = json.loads((out / "arena.json").read_text())
    assert len(arena["ranking"]) == 6 and arena["ranking"][0]["candidate"].endswith("gen-c")


def test_two_runs_are_compared_case_by_case(
    tmp_path: Path, server: FakeJudgeServer, capsys: pytest.CaptureFixture[str]
) -> None:
    config = _config(tmp_path, server.url, ["gen-a", "gen-b"])
    data = json.loads(config.read_text())
    data["prompts"] = {"terse": data["prompts"]["terse"]}
    config.write_text(json.dumps(data))
    assert main(["run", str(config), "--junit", str(tmp_path / "junit.xml")]) == 0
    text = (tmp_path / "results" / "comparison.txt").read_text()
    junit = (tmp_path / "junit.xml").read_text()
    assert "terse__gen-a" in junit and "terse__gen-b" in junit  # one suite per run
    assert "terse__gen-a" in text and "terse__gen-b" in text
    assert not (tmp_path / "results" / "arena.json").exists()


def test_a_config_cannot_name_python_code_but_the_command_line_can(
    tmp_path: Path, server: FakeJudgeServer, capsys: pytest.CaptureFixture[str]
) -> None:
    config = _config(tmp_path, server.url, ["gen-a"])
    data = json.loads(config.read_text())
    data["models"] = [{"spec": "os:system", "name": "evil"}]
    config.write_text(json.dumps(data))
    assert main(["run", str(config)]) == 2
    err = capsys.readouterr().err
    assert "models[0]" in err and "Traceback" not in err
    # the command line names a function (a module of the user's): it writes the responses
    (tmp_path / "mymodels.py").write_text("def echo(prompt):\n    return 'echo: ' + prompt\n")
    data["models"] = []
    data["prompts"] = {"terse": "Answer in one line: {{ question }}"}
    config.write_text(json.dumps(data))
    import sys

    sys.path.insert(0, str(tmp_path))
    try:
        assert main(["run", str(config), "--model-fn", "mine=mymodels:echo"]) == 0
    finally:
        sys.path.remove(str(tmp_path))
    table = rl.load_result(tmp_path / "results" / "terse__mine" / "results.jsonl").table
    assert table["response"].tolist()[0] == "echo: Answer in one line: How long is shipping?"


def test_a_hostile_prompt_template_is_refused_in_the_users_terms(
    tmp_path: Path, server: FakeJudgeServer, capsys: pytest.CaptureFixture[str]
) -> None:
    config = _config(tmp_path, server.url, ["gen-a"])
    data = json.loads(config.read_text())
    data["prompts"] = {"evil": "{{ question.__class__.__mro__ }}"}
    config.write_text(json.dumps(data))
    assert main(["run", str(config)]) == 2
    err = capsys.readouterr().err
    assert "prompts.evil" in err and "Traceback" not in err
    assert server.calls == 0


def test_a_models_key_goes_only_to_its_provider(
    tmp_path: Path,
    server: FakeJudgeServer,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    config = _config(tmp_path, server.url, ["gen-a"])
    data = json.loads(config.read_text())
    data["models"] = [{"spec": server.url, "model": "gen-a", "api_key_env": "OPENAI_API_KEY"}]
    config.write_text(json.dumps(data))
    assert main(["run", str(config)]) == 2
    err = capsys.readouterr().err
    assert "models[0].api_key_env" in err
    assert server.calls == 0


def test_arena_cli_ranks_response_columns(
    tmp_path: Path, server: FakeJudgeServer, capsys: pytest.CaptureFixture[str]
) -> None:
    pd.DataFrame(
        {
            "prompt": ["How long is shipping?", "Can I pay by card?"],
            "short": ["Soon.", "Yes."],
            "medium": ["About five days.", "Yes, all major cards."],
            "long": ["About five working days, tracked.", "Yes, Visa, Mastercard and Amex."],
        }
    ).to_csv(tmp_path / "answers.csv", index=False)
    (tmp_path / "arena.yaml").write_text(
        f"data: answers.csv\njudge: {{spec: '{server.url}', model: judge}}\n"
        "candidates: [short, medium, long]\nmetrics: [general_quality]\n"
    )
    assert main(["arena", str(tmp_path / "arena.yaml"), "--n-boot", "50"]) == 0
    ranking = json.loads((tmp_path / "results" / "arena.json").read_text())["ranking"]
    assert [r["candidate"] for r in ranking] == ["long", "medium", "short"]
    assert "Bradley-Terry" in capsys.readouterr().out
