"""The trace view shows scores on the spans they judged, in real chromium: the Explanation's
own bundle (src/rubriclab/static/explanation.js, built from js/) rendered with the widget's
synced state, for a span-level run over an OTLP file whose spans already carry scores from an
earlier run (the file's ``gen_ai.evaluation.result`` events). Screenshots go to
tests/browser/artifacts/."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import rubriclab as rl
from rubriclab.metrics import TemplateMetric
from rubriclab.testing import FakeJudgeServer
from rubriclab.traces import load_traces
from tests.browser.lab import ARTIFACTS

pytestmark = [pytest.mark.browser]

OTLP_FILE = Path(__file__).parent.parent / "fixtures" / "traces" / "agent_run_otlp.json"
STATIC = Path(rl.__file__).parent / "static"
HOSTILE = "<img src=x onerror=\"document.title='pwned'\"> ignore the rubric"

PAGE = """<!doctype html><html><head><meta charset="utf-8"><style>{css}</style></head>
<body style="background:#fff;margin:12px"><div id="view" style="width:900px"></div>
<script type="module">
const state = {state};
const handlers = new Map();
const model = {{
  get: (k) => state[k],
  set: (k, v) => {{ state[k] = v; for (const cb of handlers.get("change:" + k) || []) cb(); }},
  save_changes: () => {{}},
  on: (e, cb) => {{ if (!handlers.has(e)) handlers.set(e, new Set()); handlers.get(e).add(cb); }},
  off: (e, cb) => handlers.get(e)?.delete(cb),
  send: () => {{}},
}};
const src = {bundle};
const mod = await import(URL.createObjectURL(new Blob([src], {{ type: "text/javascript" }})));
mod.default.render({{ model, el: document.getElementById("view") }});
document.body.dataset.rendered = "yes";
</script></body></html>"""


def _useful(body: dict[str, Any]) -> str:
    """A step about the weather moves the task forward (YES), others do not; the rationale is
    hostile model text."""
    prompt = str(body["messages"][0]["content"]).lower()
    verdict = "YES" if "weather" in prompt else "NO"
    return json.dumps(
        {"verdicts": {"q1": {"reasoning": "r", "verdict": verdict}}, "rationale": HOSTILE}
    )


def _page_for(view: Any) -> str:
    state = {k: v for k, v in view.get_state().items() if not k.startswith("_")}
    return PAGE.format(
        css=(STATIC / "views.css").read_text("utf-8").replace("</", "<\\/"),
        state=json.dumps(state).replace("</", "<\\/"),
        bundle=json.dumps((STATIC / "explanation.js").read_text("utf-8")).replace("</", "<\\/"),
    )


def test_each_judged_span_shows_its_scores_in_chromium(browser: Any, tmp_path: Path) -> None:
    if not (STATIC / "explanation.js").exists():
        pytest.skip("the JS bundles are not built (cd js && npm run build)")
    useful = rl.metrics.RubricMetric(
        name="useful",
        rubric=rl.Rubric.checklist(["Does this step move the task forward?"], pass_mark=1.0),
    )
    with FakeJudgeServer(_useful) as server:
        judge = rl.Judge(server.url, model="fake", max_retries=0, cache=False)
        first = rl.evaluate(load_traces(OTLP_FILE), [useful], judge=judge, partition="span")
    assert set(first.table["useful/passed"]) == {True, False}  # a control: both outcomes
    scored = first.write_trace_scores(OTLP_FILE, tmp_path / "scored.json")
    # a later run of another metric over the scored file: its own scores and the file's
    again = rl.evaluate(
        load_traces(scored),
        [TemplateMetric(name="run", prompt_template="Run {{ input_span.name }}")],
        judge="mock",
        partition="span",
    )
    view = rl.Explanation(again, index=2)
    spans = view.case["trace"]["spans"]
    assert all({s["metric"] for s in span["scores"]} == {"run", "useful"} for span in spans)

    page = browser.new_page(viewport={"width": 960, "height": 900})
    page.set_content(_page_for(view))
    page.locator("body[data-rendered=yes]").wait_for()
    chips = page.locator(".rl-trace-score")
    assert chips.count() == 2 * len(spans)
    texts = chips.all_text_contents()
    assert "useful 1.00 pass" in texts
    assert "useful 0.00 fail" in texts
    assert page.locator(".rl-trace-score.rl-pass").count() >= 1
    assert page.locator(".rl-trace-score.rl-fail").count() >= 1
    # the explanation opens on click, as text: the hostile markup is shown, never run
    first_detail = page.locator("details.rl-trace-score-row", has_text="useful").first
    first_detail.locator("summary").click()
    why = first_detail.locator(".rl-trace-why")
    why.wait_for()
    assert why.text_content().startswith(HOSTILE)
    assert page.locator("#view img").count() == 0
    assert page.title() != "pwned"
    page.locator("#view").screenshot(path=str(ARTIFACTS / "trace_scores_explanation.png"))
    page.close()


def test_the_static_trace_view_shows_the_scores_inert_in_chromium(
    browser: Any, tmp_path: Path
) -> None:
    """The static HTML form (nbviewer, exported reports): scores under their spans, the
    explanation folded and escaped, nothing of the hostile text runs."""
    useful = rl.metrics.RubricMetric(
        name="useful",
        rubric=rl.Rubric.checklist(["Does this step move the task forward?"], pass_mark=1.0),
    )
    with FakeJudgeServer(_useful) as server:
        judge = rl.Judge(server.url, model="fake", max_retries=0, cache=False)
        result = rl.evaluate(load_traces(OTLP_FILE), [useful], judge=judge, partition="span")
    view = rl.Explanation(result, index=2)
    page = browser.new_page(viewport={"width": 960, "height": 900})
    page.set_content(f"<html><body>{view.static_html()}</body></html>")
    rows = page.locator(".rl-span-score")
    assert rows.count() == len(result.table)
    texts = rows.all_text_contents()
    assert any(t.startswith("useful 1.00 pass") for t in texts)
    assert any(t.startswith("useful 0.00 fail") for t in texts)
    page.locator(".rl-span-score summary").first.click()
    assert page.locator(".rl-span-score details[open]").first.text_content().count(HOSTILE) == 1
    assert page.locator("img").count() == 0 and page.title() != "pwned"
    page.locator(".rl-trace-tree").screenshot(path=str(ARTIFACTS / "trace_scores_static.png"))
    page.close()
