"""Browser fixtures: one JupyterLab per session (chromium launch args live in tests/conftest.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.browser.lab import Lab, running_lab


@pytest.fixture(scope="session")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    with running_lab(tmp_path_factory.mktemp("lab")) as server:
        yield server
