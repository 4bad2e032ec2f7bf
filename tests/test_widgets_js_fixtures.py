"""The JS tests render fixtures made by the Python views; these must be what Python makes now.

A payload changed on the Python side (a renamed field, a new shape) fails here until the
fixtures are rewritten (``python -m tests.js_fixtures``), and then the JS tests show whether the
views still read them: a Python/JS drift fails a unit test, not a notebook.
"""

from __future__ import annotations

import difflib

import pytest

from . import js_fixtures


@pytest.mark.parametrize("name", sorted(js_fixtures.BUILDERS))
def test_committed_js_fixture_is_what_python_produces_now(name: str) -> None:
    path = js_fixtures.FIXTURES / f"{name}.json"
    assert path.is_file(), f"{path} is missing: run `python -m tests.js_fixtures`"
    committed = path.read_text(encoding="utf-8")
    now = js_fixtures.render(name)
    if committed != now:
        diff = "".join(
            list(
                difflib.unified_diff(
                    committed.splitlines(keepends=True),
                    now.splitlines(keepends=True),
                    "committed",
                    "python now",
                )
            )[:60]
        )
        pytest.fail(
            f"js/test/fixtures/{name}.json differs from the payload the Python view builds now. "
            "If the change is meant, run `python -m tests.js_fixtures` and `cd js && npm test` "
            f"(the views must still render it).\n{diff}"
        )


def test_a_changed_payload_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """The check above compares real content: a renamed payload field shows as a difference."""
    real = js_fixtures.BUILDERS["explanation"]

    def renamed() -> dict[str, object]:
        data = real()
        case = data["state"]["case"]  # type: ignore[index]
        case["title"] = case.pop("heading")
        return data

    monkeypatch.setitem(js_fixtures.BUILDERS, "explanation", renamed)
    committed = (js_fixtures.FIXTURES / "explanation.json").read_text(encoding="utf-8")
    assert js_fixtures.render("explanation") != committed
