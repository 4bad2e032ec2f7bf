"""The magics run for real in IPython's InteractiveShell, judging over HTTP on 127.0.0.1."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pandas as pd
import pytest
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell

import rubriclab as rl
from rubriclab.testing import FakeJudgeServer

from . import judge_scripts

SUPPORT_YAML = """\
name: support
pass_mark: 0.7
criteria:
  accuracy:
    weight: 0.6
    critical: 2
    levels: {1: wrong, 2: vague, 3: precise}
  tone:
    weight: 0.4
    levels: {1: rude, 2: stiff, 3: warm}
"""


@pytest.fixture
def shell(
    fake_judge: FakeJudgeServer, monkeypatch: pytest.MonkeyPatch
) -> Iterator[InteractiveShell]:
    monkeypatch.delenv("RUBRICLAB_JUDGE", raising=False)
    fake_judge.responder = judge_scripts.realistic
    ip = InteractiveShell.instance()
    ip.run_cell("%load_ext rubriclab", store_history=False)
    ip.user_ns["URL"] = fake_judge.url
    ip.user_ns["df"] = pd.DataFrame(
        {
            "prompt": ["Refund?", "Shipping?", "Opened item?"],
            "response": ["A full refund within 30 days.", "3-5 days.", "Store credit only."],
            "old": ["No.", "It takes 3-5 business days, or 1-2 for express.", "Credit."],
        }
    )
    yield ip
    rl.set_judge(None)
    for name in ("df", "URL", "res", "rubric_result", "rubric_cases", "cases", "name", "j"):
        ip.user_ns.pop(name, None)


def _run(ip: InteractiveShell, cell: str) -> Any:
    result = ip.run_cell(cell, store_history=False)
    if result.error_in_exec is not None:
        raise result.error_in_exec
    return result.result


def _usage_error(ip: InteractiveShell, cell: str, capsys: pytest.CaptureFixture[str]) -> str:
    result = ip.run_cell(cell, store_history=False)
    assert isinstance(result.error_in_exec, UsageError)
    shown = capsys.readouterr()
    assert "Traceback" not in shown.out + shown.err  # one short message, not a traceback
    return str(result.error_in_exec)


def test_load_ext_registers_both_magics(shell: InteractiveShell) -> None:
    assert shell.find_cell_magic("rubric") is not None
    assert shell.find_line_magic("rubric") is not None
    assert shell.find_line_magic("rubric_judge") is not None


def test_rubric_judge_sets_shows_and_clears_the_session_judge(
    shell: InteractiveShell, capsys: pytest.CaptureFixture[str]
) -> None:
    _run(shell, "%rubric_judge {URL} --model judge-model")
    assert rl.get_judge().model == "judge-model"
    _run(shell, "%rubric_judge")
    assert "judge-model" in capsys.readouterr().out
    _run(shell, "%rubric_judge mock")
    assert rl.get_judge().is_mock
    assert "MOCK" in capsys.readouterr().out
    _run(shell, "%rubric_judge none")
    message = _usage_error(shell, "%rubric_judge", capsys)
    assert "no judge set" in message and "%rubric_judge mock" in message
    assert "rl.set_judge" not in message and "Judge(" not in message
    url_message = _usage_error(shell, "%rubric_judge {URL}", capsys)
    assert "needs --model NAME" in url_message and "model=" not in url_message
    assert "%rubric_judge {URL} --model NAME" in _usage_error(
        shell, "%rubric df --judge {URL} --metric text_quality", capsys
    ).replace(shell.user_ns["URL"], "{URL}")


@pytest.mark.parametrize("cell", ["%rubric_judge --help", "%rubric --help", "%%rubric --help\n"])
def test_help_is_printed_once(
    shell: InteractiveShell, capsys: pytest.CaptureFixture[str], cell: str
) -> None:
    result = shell.run_cell(cell, store_history=False)
    assert result.error_in_exec is None and result.error_before_exec is None
    out = capsys.readouterr()
    assert out.out.count("usage: %") == 1 and "UsageError" not in out.out + out.err


@pytest.mark.parametrize("cell", ["%%rubric --help\n", "%%rubric\n", "%%rubric\n\n  \n", "%rubric"])
def test_the_cell_magic_with_no_body_shows_its_own_help(
    shell: InteractiveShell, capsys: pytest.CaptureFixture[str], cell: str
) -> None:
    shell.run_cell(cell, store_history=False)
    out = capsys.readouterr()
    assert "usage: %%rubric" in out.out and "criteria:" in out.out  # the YAML example
    assert "Did you mean the line magic" not in out.out + out.err


def test_an_empty_body_with_a_metric_runs_and_without_one_says_what_to_add(
    shell: InteractiveShell, capsys: pytest.CaptureFixture[str]
) -> None:
    _run(shell, "%%rubric df --judge mock --metric text_quality --out res\n")
    assert shell.user_ns["res"].metric_names == ["text_quality"]
    message = _usage_error(shell, "%%rubric df --judge mock\n", capsys)
    assert "write a rubric (YAML) in the cell body, or add --metric NAME" in message


def test_a_bad_rubric_cell_names_its_key_not_pydantic(
    shell: InteractiveShell, capsys: pytest.CaptureFixture[str]
) -> None:
    message = _usage_error(
        shell, "%%rubric df --judge mock\ncriteria:\n  - name: a\n    weigth: 2\n", capsys
    )
    assert "unknown key 'weigth' at criteria[0].weigth (did you mean 'weight'?)" in message
    assert "pydantic" not in message


def test_a_yaml_rubric_cell_judges_displays_and_stores_the_result(
    shell: InteractiveShell, fake_judge: FakeJudgeServer, capsys: pytest.CaptureFixture[str]
) -> None:
    _run(shell, "%rubric_judge {URL} --model judge-model")
    _run(shell, f"%%rubric df --out res\n{SUPPORT_YAML}")

    result = shell.user_ns["res"]
    assert isinstance(result, rl.EvalResult)
    # the scripted judge gives level 3 to a reply that mentions a refund, else level 1
    assert result.table["support/score"].tolist() == [1.0, 0.0, 0.0]
    assert result.table["support/verdict"].tolist()[1] == "fail (accuracy below 2)"
    assert len(fake_judge.requests) == 3
    prompt = fake_judge.requests[0]["messages"][0]["content"]
    assert "3 = precise" in prompt and "A full refund within 30 days." in prompt
    out = capsys.readouterr().out
    assert "EvalResult: 3 rows; metrics: support" in out  # the result view was displayed
    assert "stored in 'res'" in out


def test_braces_expand_from_the_namespace(
    shell: InteractiveShell, fake_judge: FakeJudgeServer
) -> None:
    shell.user_ns["name"] = "df"
    shell.user_ns["j"] = rl.Judge(fake_judge.url, model="judge-model")
    _run(shell, "%%rubric {name} --judge j --out res\n- Is it short?\n- Is it polite?")
    assert shell.user_ns["res"].row_count == 3
    assert len(fake_judge.requests) == 3


@pytest.mark.parametrize(
    ("cell", "message"),
    [
        ("%%rubric {nothing} --judge mock\n- q", "unknown variable 'nothing'"),
        ("%%rubric no_such_frame --judge mock\n- q", "no variable or data file named"),
        (
            "%%rubric df --judge mock\ncriteria:\n  - name: a\n   oops: 1\n",
            "rubric YAML is not valid: line 3",
        ),
        ("%%rubric df --judge mock\ncriteria: []\n", "at least one criterion"),
        (
            "%%rubric df --judge mock\ncriteria:\n  tone:\n    weight: -2\n"
            "    levels: {1: rude, 2: stiff, 3: warm}\n",
            "only a yes/no criterion may be a penalty",
        ),
        ("%rubric df --judge mock --metric no_such_metric", "no predefined metric"),
        ("%rubric df --judge nonsense", "unknown judge spec"),
        ("%rubric df --judge mock --bogus", "unrecognized arguments: --bogus"),
        ("%rubric df --judge mock --generate", "--generate needs --metric"),
        ("%rubric df --judge mock --map response", "write FIELD=COLUMN"),
        ("%%rubric df --judge mock --template\n{% if %}", "template"),
    ],
)
def test_input_mistakes_are_one_short_message(
    shell: InteractiveShell, capsys: pytest.CaptureFixture[str], cell: str, message: str
) -> None:
    assert message in _usage_error(shell, cell, capsys)


def test_a_missing_column_names_it_and_map_fixes_it(
    shell: InteractiveShell, capsys: pytest.CaptureFixture[str]
) -> None:
    shell.user_ns["df"] = shell.user_ns["df"].rename(columns={"response": "answer"})
    message = _usage_error(shell, "%%rubric df --judge mock\n- Is it short?", capsys)
    assert "no 'response' column" in message and "--map response=" in message
    _run(shell, "%%rubric df --judge mock --map response=answer --out res\n- Is it short?")
    assert shell.user_ns["res"].row_count == 3


def test_pairwise_against_a_baseline_column(shell: InteractiveShell) -> None:
    _run(shell, "%rubric_judge {URL} --model judge-model")
    _run(shell, "%%rubric df --pairwise old --out res\n- Is it complete?\n- Is it accurate?")
    table = shell.user_ns["res"].table
    # the scripted judge prefers the longer answer, whichever order it sees them in
    assert table["pairwise_rubric/score"].tolist() == [0.5, -0.5, 0.5]
    assert table["pairwise_rubric/swap_consistent"].all()


def test_generate_then_revise_then_judge_with_the_revision(
    shell: InteractiveShell, fake_judge: FakeJudgeServer, capsys: pytest.CaptureFixture[str]
) -> None:
    _run(shell, "%rubric_judge {URL} --model judge-model")
    _run(shell, "%rubric df --metric text_quality --generate --out cases")
    cases = shell.user_ns["cases"]
    assert all(isinstance(r, rl.Rubric) for r in cases["rubric"])
    assert "%%rubric cases --metric text_quality" in capsys.readouterr().out
    generated = len(fake_judge.requests)
    assert generated == 3

    revised = rl.Rubric.checklist(["Does the response mention weekly progress reports?"])
    cases.at[0, "rubric"] = revised  # what the grid writes back
    _run(shell, "%rubric cases --metric text_quality --out res")

    critiques = fake_judge.requests[generated:]
    assert len(critiques) == 3  # no rubric was generated again
    assert "weekly progress reports" in critiques[0]["messages"][0]["content"]
    criteria = shell.user_ns["res"].table["text_quality/criteria"][0]
    assert [c["question"] for c in criteria] == [revised.criteria[0].question]


def test_a_template_cell_is_the_prompt_the_judge_reads(
    shell: InteractiveShell, fake_judge: FakeJudgeServer
) -> None:
    shell.user_ns["df"]["rubric"] = [SUPPORT_YAML] * 3
    template = (
        "HOUSE TEMPLATE. Grade the reply to {{ prompt }}.\n"
        "{% for c in criteria %}{{ c.name }}: {% for lv in c.levels %}{{ lv.score }}={{ "
        "lv.descriptor }} {% endfor %}\n{% endfor %}"
        "<response>\n{{ response }}\n</response>\n"
        'Answer JSON: {"criteria": {"<id>": {"evidence": "...", "level": 1}}, "rationale": ""}'
    )
    shell.user_ns["j"] = rl.Judge(fake_judge.url, model="judge-model")
    _run(shell, f"%%rubric df --judge j --template --name house --out res\n{template}")
    sent = fake_judge.requests[0]["messages"][0]["content"]
    assert sent.startswith("HOUSE TEMPLATE. Grade the reply to Refund?")
    assert "accuracy: 1=wrong 2=vague 3=precise" in sent
    table = shell.user_ns["res"].table
    assert table["house/score"].tolist() == [1.0, 0.0, 0.0]
    assert json.loads(table["house/raw_output"][0])["rationale"]


def test_a_rubric_cell_keeps_yes_and_no_as_words(
    shell: InteractiveShell, fake_judge: FakeJudgeServer
) -> None:
    _run(shell, "%rubric_judge {URL} --model judge-model")
    cell = "name: answered\ncriteria:\n  answered:\n    levels: {1: no, 2: partly, 3: yes}\n"
    _run(shell, f"%%rubric df --out res\n{cell}")
    prompt = fake_judge.requests[0]["messages"][0]["content"]
    assert "1 = no" in prompt and "3 = yes" in prompt
    assert "False" not in prompt and "True" not in prompt
    labels = {row[0]["label"] for row in shell.user_ns["res"].table["answered/criteria"]}
    assert labels <= {"no", "partly", "yes"}
