"""The mock judge learns Vertex's formats only when asked: importing the package changes nothing.

What a user notices is the mock's answer to a Vertex-format prompt: verdict blocks when the
formats are taught, the mock's plain labelled text when not.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading

import pandas as pd

import rubriclab as rl
from rubriclab.judges.mock import LABEL, mock_answer

#: a prompt in the format of Vertex's pointwise critique templates
VERTEX_PROMPT = [
    {
        "role": "user",
        "content": (
            "Answer each question in a <question> block ending Verdict: [[YES]] or [[NO]].\n"
            "# The rubric\n1. Is the response short?\n2. Does it greet the user?\n"
            "<response>\nHello there.\n</response>"
        ),
    }
]


def speaks_vertex() -> bool:
    answer = mock_answer(VERTEX_PROMPT)
    assert LABEL in answer  # a mock answer always says so, in either form
    return answer_is_vertex(answer)


def answer_is_vertex(answer: str) -> bool:
    """Verdict blocks and a rubric score (the plain mock answer only quotes the prompt's start)."""
    return "\nQuestion: Is the response short?" in answer and "[[Rubric Score: " in answer


def test_importing_the_vertex_package_teaches_the_mock_nothing() -> None:
    """A fresh interpreter: import every module of the package, then ask the mock."""
    code = (
        "import importlib, json, pkgutil\n"
        "import rubriclab.compat.vertex as v\n"
        "import rubriclab.compat.vertex.notebook_utils\n"
        "from rubriclab.compat.vertex import utils\n"
        "names = [m.name for m in pkgutil.iter_modules(v.__path__)]\n"
        "for name in names:\n"
        "    importlib.import_module(f'rubriclab.compat.vertex.{name}')\n"
        "from rubriclab.judges.mock import mock_answer\n"
        f"answer = mock_answer({VERTEX_PROMPT!r})\n"
        "print(json.dumps({'names': names, 'answer': answer}))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=600, check=False
    )
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert {"mock", "utils", "notebook_utils", "formats"} <= set(out["names"])
    assert not answer_is_vertex(out["answer"])
    assert "no language model was called" in out["answer"]  # the mock's usual answer


def test_a_mock_run_speaks_vertex_during_the_run_and_leaves_the_mock_as_it_was() -> None:
    from rubriclab.compat.vertex import EvalTask, PredefinedRubricMetrics

    assert not speaks_vertex()
    data = pd.DataFrame({"prompt": ["Name the capital of France."], "response": ["Paris."]})
    result = EvalTask(
        dataset=data, metrics=[PredefinedRubricMetrics.Pointwise.INSTRUCTION_FOLLOWING]
    ).evaluate(judge="mock")
    table = result.metrics_table
    assert "rb_instruction_following/error" not in table  # the mock answered the format
    assert "Verdict: [[" in table.loc[0, "rb_instruction_following/raw_outputs"][0]
    assert not speaks_vertex()


def test_generate_rubrics_on_the_mock_restores_the_mock_too() -> None:
    from rubriclab.compat.vertex import PredefinedRubricMetrics

    data = pd.DataFrame({"prompt": ["Write a haiku about rain."]})
    metric = PredefinedRubricMetrics.Pointwise.TEXT_QUALITY
    frame = metric.generate_rubrics(data, judge="mock")
    assert "rubric_generation_error" not in frame  # none failed
    assert all(q.startswith(LABEL) for q in frame.loc[0, "rubrics"])
    assert not speaks_vertex()


def test_teach_mock_is_the_explicit_way_and_forget_mock_undoes_it() -> None:
    from rubriclab.compat.vertex.mock import forget_mock, teach_mock

    teach_mock()
    try:
        assert speaks_vertex()
        assert rl.Judge("mock").complete(VERTEX_PROMPT).text == mock_answer(VERTEX_PROMPT)
    finally:
        forget_mock()
    assert not speaks_vertex()


def test_taught_formats_outlive_a_run_and_a_run_never_forgets_them() -> None:
    from rubriclab.compat.vertex.mock import forget_mock, mock_speaks_vertex, teach_mock

    judge = rl.Judge("mock")
    teach_mock()
    try:
        with mock_speaks_vertex(judge):
            assert speaks_vertex()
        assert speaks_vertex()  # the run ended; what the user taught stays
    finally:
        forget_mock()
    assert not speaks_vertex()


def test_nested_and_concurrent_runs_keep_the_formats_until_the_last_one_ends() -> None:
    from rubriclab.compat.vertex.mock import mock_speaks_vertex

    judge = rl.Judge("mock")
    with mock_speaks_vertex(judge):
        with mock_speaks_vertex(judge):
            assert speaks_vertex()
        assert speaks_vertex()  # the outer run is still sending
    assert not speaks_vertex()

    entered = threading.Barrier(2)
    left = threading.Event()
    seen: list[bool] = []

    def other_run() -> None:
        with mock_speaks_vertex(judge):
            entered.wait(timeout=60)
            left.wait(timeout=60)  # stays inside until this thread's run has ended
            seen.append(speaks_vertex())

    worker = threading.Thread(target=other_run)
    worker.start()
    with mock_speaks_vertex(judge):
        entered.wait(timeout=60)
    left.set()
    worker.join(timeout=60)
    assert seen == [True]
    assert not speaks_vertex()


def test_a_real_judge_never_touches_the_mock() -> None:
    from rubriclab.compat.vertex.mock import mock_speaks_vertex

    with mock_speaks_vertex(rl.Judge("http://127.0.0.1:9/v1", model="m")):
        assert not speaks_vertex()
