"""A real JupyterLab for browser tests and benchmarks: started on 127.0.0.1 with a token, a temp
root and settings, driven by Debian's chromium through Playwright (never a downloaded browser).
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import nbformat

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO / "tests" / "browser" / "artifacts"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def chromium_path() -> str | None:
    return shutil.which("chromium")


def launch_args() -> dict[str, Any]:
    """Playwright launch options for Debian's chromium."""
    return {"executable_path": chromium_path(), "args": CHROMIUM_ARGS, "headless": True}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Lab:
    """A running JupyterLab: its URL, token and root directory."""

    def __init__(self, root: Path, port: int, token: str, process: subprocess.Popen[bytes]) -> None:
        self.root = root
        self.port = port
        self.token = token
        self.process = process

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def url(self, notebook: str) -> str:
        return f"{self.base}/lab/tree/{notebook}?token={self.token}&reset"

    def write_notebook(self, name: str, cells: Sequence[str]) -> str:
        nb = nbformat.v4.new_notebook()
        nb.metadata["kernelspec"] = {
            "name": "python3",
            "display_name": "Python 3",
            "language": "python",
        }
        nb.cells = [nbformat.v4.new_code_cell(src) for src in cells]
        nbformat.write(nb, self.root / name)
        return name


@contextmanager
def running_lab(root: Path) -> Iterator[Lab]:
    """Start JupyterLab from this venv (so its kernel is this venv's Python); stop it after."""
    root.mkdir(parents=True, exist_ok=True)
    settings = root / ".lab-settings"
    notify = settings / "@jupyterlab" / "apputils-extension"
    notify.mkdir(parents=True, exist_ok=True)
    (notify / "notification.jupyterlab-settings").write_text(
        json.dumps({"fetchNews": "false", "checkForUpdates": False})
    )
    port, token = _free_port(), secrets.token_hex(16)
    env = {
        **os.environ,
        "JUPYTER_CONFIG_DIR": str(root / ".jupyter-config"),
        "JUPYTER_RUNTIME_DIR": str(root / ".jupyter-runtime"),
        "JUPYTERLAB_SETTINGS_DIR": str(settings),
        "JUPYTERLAB_WORKSPACES_DIR": str(root / ".lab-workspaces"),
        "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
    }
    log = (root / "jupyterlab.log").open("wb")
    cmd = [
        sys.executable,
        "-m",
        "jupyterlab",
        "--no-browser",
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0",
        f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={root}",
        "--LabApp.expose_app_in_browser=True",
        "--LabApp.news_url=",
        "--ServerApp.open_browser=False",
        "--ServerApp.allow_root=True",
        "--ServerApp.terminals_enabled=False",
    ]
    process = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT, cwd=root)
    lab = Lab(root, port, token, process)
    try:
        _wait_until_up(lab, timeout=90)
        yield lab
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)
        log.close()


def _wait_until_up(lab: Lab, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    url = f"{lab.base}/api/status?token={lab.token}"
    while time.monotonic() < deadline:
        if lab.process.poll() is not None:
            text = (lab.root / "jupyterlab.log").read_text(errors="replace")[-3000:]
            raise RuntimeError(f"JupyterLab exited with {lab.process.returncode}:\n{text}")
        try:
            with urllib.request.urlopen(url, timeout=2) as resp:
                if resp.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.3)
    raise TimeoutError(f"JupyterLab did not answer on {lab.base} within {timeout:.0f} s")


# -- driving a notebook in the page ------------------------------------------------------------------
KERNEL_IDLE = """async () => {
  const app = window.jupyterapp;
  const w = app.shell.currentWidget;
  if (!w || !w.sessionContext) return "no-notebook";
  await w.context.ready;
  await w.sessionContext.ready;
  const k = w.sessionContext.session && w.sessionContext.session.kernel;
  return k ? k.status : "no-kernel";
}"""


def open_notebook(page: Any, lab: Lab, name: str, timeout_s: float = 90) -> None:
    """Open a notebook and wait until its kernel is idle."""
    page.goto(lab.url(name))
    page.wait_for_function(
        "() => window.jupyterapp && window.jupyterapp.shell.currentWidget", timeout=timeout_s * 1000
    )
    deadline = time.monotonic() + timeout_s
    status = ""
    while time.monotonic() < deadline:
        status = page.evaluate(KERNEL_IDLE)
        if status == "idle":
            return
        time.sleep(0.25)
    raise TimeoutError(f"the notebook's kernel never became idle (last status {status!r})")


def run_all(page: Any) -> None:
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")


def run_cell(page: Any, index: int) -> None:
    """Run one cell (0-based) and leave the others alone."""
    page.evaluate(
        """async (i) => {
      const app = window.jupyterapp;
      const panel = app.shell.currentWidget;
      panel.content.activeCellIndex = i;
      await app.commands.execute('notebook:run-cell');
    }""",
        index,
    )


def output_of(page: Any, index: int) -> Any:
    """A locator for cell ``index``'s output area."""
    return page.locator(".jp-Notebook .jp-Cell").nth(index).locator(".jp-OutputArea")


def wait_idle_after(page: Any, timeout_s: float = 120) -> None:
    """Wait until every cell ran (no '[*]' prompt left) and the kernel is idle."""
    page.wait_for_function(
        """() => {
      const prompts = [...document.querySelectorAll('.jp-InputArea-prompt')].map((p) => p.textContent);
      return prompts.length > 0 && prompts.every((t) => !t.includes('*')) && prompts.every((t) => /\\[\\d+\\]/.test(t));
    }""",
        timeout=timeout_s * 1000,
    )
