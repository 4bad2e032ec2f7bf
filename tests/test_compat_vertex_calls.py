"""Which judge answers a Vertex-style call: ``get_judge`` for specs, plus Vertex's bare model names."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

import rubriclab as rl
from rubriclab.compat.vertex.calls import is_spec, judge_for, model_for
from rubriclab.judges import JudgeConfigError


@pytest.fixture
def session_judge() -> Iterator[rl.Judge]:
    judge = rl.Judge("mock:session")
    rl.set_judge(judge)
    try:
        yield judge
    finally:
        rl.set_judge(None)


def test_specs_and_bare_model_names_are_told_apart() -> None:
    assert is_spec("mock") and is_spec("mock:x") and is_spec("openai:gpt-4o-mini")
    assert is_spec("http://127.0.0.1:8000/v1")
    assert not is_spec("gemini-2.5-pro")
    assert not is_spec("gpt-4o")


def test_the_most_specific_judge_named_wins(session_judge: rl.Judge) -> None:
    own = rl.Judge("mock:own")
    assert judge_for(own, "mock:task", None) is own
    assert judge_for(None, "mock:task").model == "task"
    assert judge_for(None, None) is session_judge


def test_a_bare_model_name_is_asked_on_the_next_judges_endpoint(session_judge: rl.Judge) -> None:
    on_task = judge_for("gemini-2.5-pro", rl.Judge("mock:task", max_concurrency=3))
    assert on_task.model == "gemini-2.5-pro" and on_task.is_mock
    assert on_task.max_concurrency == 3  # the next judge's settings come along
    on_session = judge_for("gemini-2.5-pro", None)
    assert on_session.model == "gemini-2.5-pro" and on_session.is_mock


def test_no_judge_anywhere_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RUBRICLAB_JUDGE", raising=False)
    rl.set_judge(None)
    with pytest.raises(JudgeConfigError, match="no judge set"):
        judge_for(None, "gemini-2.5-pro")


def test_model_for_takes_specs_model_names_judges_and_functions(session_judge: rl.Judge) -> None:
    assert isinstance(model_for("mock:writer", None), rl.Judge)
    assert model_for("gemini-2.5-flash", None).model == "gemini-2.5-flash"  # type: ignore[union-attr]

    def fn(prompt: str) -> str:
        return prompt

    assert model_for(fn, None) is fn
    with pytest.raises(ValueError, match="not ''"):
        model_for("  ", None)
    with pytest.raises(TypeError, match="got int"):
        model_for(3, None)  # type: ignore[arg-type]
