"""The pytest plugin (``rubriclab.testing.pytest_plugin``) and ``assert_rubric``, run the way
users run them: a pytest session in a subprocess (``pytester``), its judge the fake judge
server on 127.0.0.1, reached through ``--rubriclab-judge``."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pandas as pd
import pytest

import rubriclab as rl
from rubriclab.testing import FakeJudgeServer, assert_rubric

pytest_plugins = ["pytester"]


def _between(text: str, tag: str) -> str:
    match = re.search(rf"<{tag}>\n?(.*?)\n?</{tag}>", text, re.S)
    return match.group(1) if match else ""


def refund_judge(body: dict[str, Any]) -> str:
    """Checklist answers read from the prompt: q1 (the 30-day window) is YES only when the
    response says "30 days"; q2 (polite) is YES only when it thanks the customer."""
    prompt = str(body["messages"][0]["content"])
    response = _between(prompt, "response")
    window = "30 days" in response
    polite = "thank" in response.lower()
    return json.dumps(
        {
            "verdicts": {
                "q1": {
                    "evidence": response[:60],
                    "reasoning": "states 30 days" if window else "gives another window",
                    "verdict": "YES" if window else "NO",
                },
                "q2": {
                    "evidence": response[:60],
                    "reasoning": "thanks the customer" if polite else "no thanks",
                    "verdict": "YES" if polite else "NO",
                },
            },
            "rationale": "window right" if window else "the window is wrong",
        }
    )


@pytest.fixture
def server() -> Iterator[FakeJudgeServer]:
    with FakeJudgeServer(refund_judge) as s:
        yield s


USER_TESTS = """
import pandas as pd
import rubriclab as rl
from rubriclab.testing import assert_rubric

RUBRIC = rl.Rubric.checklist(
    ["Does the response give the refund window of 30 days?", "Is the response polite?"],
    pass_mark=1.0,
)
REFUND = rl.metrics.RubricMetric(name="refund", rubric=RUBRIC)
GOOD = {"prompt": "How long do I have to return it?", "response": "You have 30 days, thank you."}


def test_one_case():
    assert_rubric(GOOD, REFUND)


def test_a_table(rubric):
    df = pd.DataFrame([GOOD, {"prompt": "Can I return it?", "response": "Yes, 30 days. Thank you!"}])
    rubric(df, REFUND, threshold={"refund": 0.5})


def test_wrong_window(rubric):
    rubric({"prompt": "How long?", "response": "You have 14 days, thanks."}, REFUND)
"""


def _error_lines(run: pytest.RunResult) -> list[str]:
    """The failure's message lines, as pytest prints them (after 'E')."""
    return [line[1:].strip() for line in run.outlines if line.startswith("E ")]


def test_three_rubric_tests_one_failing(pytester: pytest.Pytester, server: FakeJudgeServer) -> None:
    pytester.makepyfile(test_refunds=USER_TESTS)
    run = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", f"--rubriclab-judge={server.url}", "--rubriclab-model=fake"
    )
    run.assert_outcomes(passed=2, failed=1)
    assert run.ret == pytest.ExitCode.TESTS_FAILED
    out = run.stdout.str()
    # the failing test says which row, the score against the pass mark, the failing criterion
    # with the judge's evidence and reasons, and the judge's rationale
    assert _error_lines(run) == [
        "AssertionError: rubric check failed: 1 of 1 judged row(s) failed",
        "row 0 [refund]: score 0.50, verdict fail (score below pass mark)",
        "failing criterion 'q1' (Does the response give the refund window of 30 days?): NO; "
        "evidence: You have 14 days, thanks.; "
        "reason: gives another window",
        "judge's rationale: the window is wrong",
    ]  # the polite criterion (q2) passed, so it is not listed
    assert "def assert_rubric" not in out  # the traceback stops at the user's line
    # the session's summary: every judged case, the failure, and the shared cache at work
    summary = out.split("rubriclab: rubric checks =")[1].splitlines()[1:5]
    assert summary == [
        f"4 case(s) judged in 3 test(s) by Judge({server.url!r}, model='fake')",
        "judge calls: 3 made, 1 answered from the session's cache",
        "  refund: 4 judged, 1 rubric not met, mean score 0.88",
        "  rubric not met: test_refunds.py::test_wrong_window [refund, row 0]: score 0.50, "
        "failed its rubric (test failed)",
    ]
    # GOOD was judged in two tests but asked once: the session shares one judge and cache
    assert server.calls == 3


def test_the_summary_tells_a_failing_test_from_an_expected_unmet_rubric(
    pytester: pytest.Pytester, server: FakeJudgeServer
) -> None:
    """A rubric not met inside ``pytest.raises`` is a passing test: the summary must not print
    it as FAILED (what CI log readers grep for), and it marks the test that did fail."""
    pytester.makepyfile(
        test_expected=USER_TESTS
        + """

import pytest


def test_a_wrong_answer_is_caught():
    with pytest.raises(AssertionError, match="rubric check failed"):
        assert_rubric({"prompt": "How long?", "response": "Seven days."}, REFUND)
"""
    )
    run = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", f"--rubriclab-judge={server.url}", "--rubriclab-model=fake"
    )
    run.assert_outcomes(passed=3, failed=1)
    summary = run.stdout.str().split("rubriclab: rubric checks =")[1].splitlines()
    assert not any(line.lstrip().startswith("FAILED") for line in summary[1:6])
    assert summary[3:6] == [
        "  refund: 5 judged, 2 rubric not met, mean score 0.70",
        "  rubric not met: test_expected.py::test_wrong_window [refund, row 0]: score 0.50, "
        "failed its rubric (test failed)",
        "  rubric not met: test_expected.py::test_a_wrong_answer_is_caught [refund, row 0]: "
        "score 0.00, failed its rubric (test passed)",
    ]


def test_thresholds_per_metric(pytester: pytest.Pytester, server: FakeJudgeServer) -> None:
    pytester.makepyfile(
        test_thresholds="""
import rubriclab as rl
from rubriclab.testing import assert_rubric

RUBRIC = rl.Rubric.checklist(["Does it say 30 days?", "Is it polite?"])
A = rl.metrics.RubricMetric(name="a", rubric=RUBRIC)
B = rl.metrics.RubricMetric(name="b", rubric=RUBRIC)
CASE = {"prompt": "p", "response": "30 days."}  # window YES, polite NO: score 0.5


def test_low_bar_for_a_high_for_b():
    assert_rubric(CASE, [A, B], threshold={"a": 0.5, "b": 0.75})
"""
    )
    run = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", f"--rubriclab-judge={server.url}", "--rubriclab-model=fake"
    )
    run.assert_outcomes(failed=1)
    errors = _error_lines(run)
    assert errors[:3] == [
        "AssertionError: rubric check failed: 1 of 2 judged row(s) failed",
        "row 0 [b]: score 0.50 below threshold 0.75",
        "failing criterion 'q2' (Is it polite?): NO; evidence: 30 days.; reason: no thanks",
    ]
    assert not any("[a]" in line for line in errors)


def test_a_session_that_never_judges_loads_nothing_and_prints_nothing(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(
        test_plain="""
import sys

def test_plain():
    assert "rubriclab.evaluation" not in sys.modules
    assert "pandas" not in sys.modules
    assert "rubriclab.testing.server" not in sys.modules
    assert "rubriclab.testing.pytest_plugin" in sys.modules  # loaded by its entry point
"""
    )
    run = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    run.assert_outcomes(passed=1)
    assert "rubric checks" not in run.stdout.str()  # no summary when nothing was judged
    off = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:rubriclab")
    off.assert_outcomes(failed=1)  # turned off, the plugin module is not even imported
    off.stdout.fnmatch_lines(["*assert 'rubriclab.testing.pytest_plugin' in *"])


def test_the_option_is_listed_in_help(pytester: pytest.Pytester) -> None:
    run = pytester.runpytest_subprocess("--help")
    run.stdout.fnmatch_lines(["rubric checks*", "*--rubriclab-judge=SPEC*"])


def test_a_row_the_judge_cannot_answer_fails_with_its_error_not_a_zero(
    server: FakeJudgeServer,
) -> None:
    server.responder = lambda body: "I would rather not say."
    metric = rl.metrics.RubricMetric(name="chk", rubric=rl.Rubric.checklist(["A?"]))
    judge = rl.Judge(server.url, model="fake", max_retries=0)
    with pytest.raises(AssertionError) as info:
        assert_rubric({"prompt": "p", "response": "r"}, metric, judge=judge)
    message = str(info.value)
    assert "row 0 [chk]: not scored: unreadable judge answer" in message
    assert "score 0" not in message


def test_outside_pytest_sessions_it_returns_the_result_when_all_pass(
    server: FakeJudgeServer,
) -> None:
    metric = rl.metrics.RubricMetric(name="chk", rubric=rl.Rubric.checklist(["30 days?"]))
    judge = rl.Judge(server.url, model="fake")
    df = pd.DataFrame({"prompt": ["p", "q"], "response": ["30 days", "in 30 days"]})
    result = assert_rubric(df, metric, judge=judge, threshold=1.0)
    assert result.table["chk/score"].tolist() == [1.0, 1.0]


@pytest.mark.parametrize(
    ("threshold", "message"),
    [
        (1.5, "threshold for 'chk' must be in [0, 1], got 1.5"),
        ({"other": 0.5}, "threshold for 'other', which is not a metric of this check (chk)"),
        ("high", "threshold for 'chk' must be a number in [0, 1]"),
    ],
)
def test_bad_thresholds_are_refused_in_plain_words(threshold: Any, message: str) -> None:
    metric = rl.metrics.RubricMetric(name="chk", rubric=rl.Rubric.checklist(["A?"]))
    with pytest.raises((ValueError, TypeError), match=re.escape(message)):
        assert_rubric({"prompt": "p", "response": "r"}, metric, threshold=threshold, judge="mock")
