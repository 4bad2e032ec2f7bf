"""The notebooks against a real HTTP endpoint: ``RUBRICLAB_JUDGE`` pointed at the fake judge.

CI also runs every notebook on the mock judge with ``pytest --nbval-lax notebooks``; this test
checks the other promise, that the same notebooks run unchanged when a real judge is set.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from rubriclab.testing import FakeJudgeServer

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
OURS = [
    "quickstart",
    "analytic_rubric",
    "multimodal_pairwise",
    "magics",
    "judge_card",
    "checks",
    "workbench",
    "conversations",
]


def _outputs_text(nb: nbformat.NotebookNode) -> str:
    parts = []
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            parts.append(str(out.get("text", "")))
            parts.append(str(out.get("data", {}).get("text/plain", "")))
            if out.get("output_type") == "error" and "raises-exception" not in cell.metadata.get(
                "tags", []
            ):
                raise AssertionError(f"{out['ename']}: {out['evalue']}")
    return "\n".join(parts)


@pytest.mark.slow
@pytest.mark.parametrize("name", OURS)
def test_notebook_runs_on_a_real_endpoint(
    name: str, fake_judge: FakeJudgeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RUBRICLAB_JUDGE", "ollama:judge-model")
    monkeypatch.setenv("OLLAMA_BASE_URL", fake_judge.url)
    path = NOTEBOOKS / f"{name}.ipynb"
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = []
    NotebookClient(nb, timeout=300, resources={"metadata": {"path": str(NOTEBOOKS)}}).execute()

    text = _outputs_text(nb)
    assert fake_judge.requests, "the notebook made no call to the endpoint"
    assert {r["model"] for r in fake_judge.requests} == {"judge-model"}
    assert "MOCK judge:" not in text  # the results say which judge made them
    if name == "multimodal_pairwise":
        parts = [
            p
            for r in fake_judge.requests
            for m in r["messages"]
            if isinstance(m["content"], list)
            for p in m["content"]
        ]
        images = [p for p in parts if p.get("type") == "image_url"]
        assert images and all(
            p["image_url"]["url"].startswith("data:image/png;base64,") for p in images
        )
