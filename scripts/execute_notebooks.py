"""Re-run the notebooks on the mock judge and store small, static outputs.

Live widget views and progress bars only render in a kernel, so they are dropped from the stored
outputs; each view's static HTML and text forms stay, which is what GitHub and nbviewer show.
Usage: .venv/bin/python scripts/execute_notebooks.py notebooks/NAME.ipynb [...]
(name the notebooks: some are kept without outputs on purpose).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient

WIDGET_MIME = "application/vnd.jupyter.widget-view+json"


def _static(outputs: list[dict]) -> list[dict]:
    kept = []
    for out in outputs:
        stderr = out.get("output_type") == "stream" and out.get("name") == "stderr"
        if stderr and "UsageError" not in out.get("text", ""):
            continue  # progress bars and timings: different on every run
        data = out.get("data")
        if data is not None and WIDGET_MIME in data:
            data.pop(WIDGET_MIME)
            if set(data) <= {"text/plain"}:
                continue  # a widget with no static form: a progress bar
        kept.append(out)
    return kept


def run(path: Path) -> None:
    nb = nbformat.read(path, as_version=4)
    env_judge = os.environ.pop("RUBRICLAB_JUDGE", None)
    os.environ["RUBRICLAB_JUDGE"] = "mock"
    try:
        NotebookClient(
            nb, timeout=600, resources={"metadata": {"path": str(path.parent)}}
        ).execute()
    finally:
        os.environ.pop("RUBRICLAB_JUDGE", None)
        if env_judge is not None:
            os.environ["RUBRICLAB_JUDGE"] = env_judge
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = _static(cell.outputs)
            cell.metadata.pop("execution", None)
    nb.metadata.pop("widgets", None)
    nbformat.write(nb, path)
    print(f"{path.name}: {path.stat().st_size / 1024:.0f} KiB")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    for p in map(Path, sys.argv[1:]):
        run(p.resolve())
