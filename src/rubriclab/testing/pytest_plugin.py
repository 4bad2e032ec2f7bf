"""rubriclab's pytest plugin: rubric checks as tests (``assert_rubric`` and the ``rubric`` fixture).

Installed with rubriclab (the ``pytest11`` entry point), it loads in every pytest run of the
environment, so it costs nothing until used: this module imports only pytest, the standard
library and ``assertions`` (itself standard library only until called), and adds its options;
rubriclab's evaluation, pandas and the judge load when a test first calls ``assert_rubric`` or
the ``rubric`` fixture. Turn it off with ``-p no:rubriclab``.

``--rubriclab-judge SPEC`` (or ``$RUBRICLAB_JUDGE``) names the judge every rubric check of the
session shares, so identical checks are judged once; ``--rubriclab-model`` names the model when
the spec is a base URL. The terminal summary lists what was judged, only when something was.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from .assertions import (
    RubricSession,
    assert_rubric,
    current_session,
    end_session,
    start_session,
)

__all__ = [
    "pytest_addoption",
    "pytest_configure",
    "pytest_runtest_logreport",
    "pytest_unconfigure",
    "rubric",
]

_KEY = pytest.StashKey[RubricSession]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("rubriclab", "rubric checks (rubriclab.testing.assert_rubric)")
    group.addoption(
        "--rubriclab-judge",
        dest="rubriclab_judge",
        default=None,
        metavar="SPEC",
        help="judge for every rubric check of the session: 'openai:gpt-4o-mini', 'mock', or "
        "a base URL with --rubriclab-model (default: $RUBRICLAB_JUDGE)",
    )
    group.addoption(
        "--rubriclab-model",
        dest="rubriclab_model",
        default=None,
        metavar="NAME",
        help="the model name, when --rubriclab-judge is a base URL",
    )


def pytest_configure(config: pytest.Config) -> None:
    """The session's shared state: a spec and an empty list; the judge is made when used."""
    session = RubricSession(
        judge_spec=config.getoption("rubriclab_judge", None),
        model=config.getoption("rubriclab_model", None),
    )
    config.stash[_KEY] = session
    start_session(session)


def pytest_unconfigure(config: pytest.Config) -> None:
    session = config.stash.get(_KEY, None)
    if session is not None:
        end_session(session)
        del config.stash[_KEY]


def pytest_runtest_setup(item: pytest.Item) -> None:
    session = item.config.stash.get(_KEY, None)
    if session is not None:
        session.current_test = item.nodeid


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Each test's outcome, so the summary can tell a failing test from a rubric not met that
    the test expected (``pytest.raises``)."""
    session = current_session()
    if session is None:
        return
    if report.failed:
        session.record_outcome(report.nodeid, "failed")
    elif report.when == "call":
        xfailed = report.skipped and hasattr(report, "wasxfail")
        outcome = "xfailed" if xfailed else report.outcome
        session.record_outcome(report.nodeid, outcome)
    elif report.skipped:
        session.record_outcome(report.nodeid, "skipped")


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    session = config.stash.get(_KEY, None)
    lines = session.summary_lines() if session is not None else []
    if not lines:
        return  # nothing judged: a run that never used rubriclab shows nothing of it
    terminalreporter.write_sep("=", "rubriclab: rubric checks")
    for line in lines:
        terminalreporter.write_line(line)


@pytest.fixture
def rubric() -> Callable[..., Any]:
    """``rubric(data, metric, threshold=...)``: ``assert_rubric`` with the session's judge."""
    return assert_rubric
