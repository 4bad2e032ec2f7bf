"""Browser fixtures: Debian's chromium for pytest-playwright, and one JupyterLab per session."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.browser.lab import Lab, launch_args, running_lab


@pytest.fixture(scope="session")
def browser_type_launch_args() -> dict[str, Any]:
    args = launch_args()
    if args["executable_path"] is None:
        pytest.skip("Debian's chromium is not installed (apt-get install -y chromium)")
    return args


@pytest.fixture(scope="session")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    with running_lab(tmp_path_factory.mktemp("lab")) as server:
        yield server
