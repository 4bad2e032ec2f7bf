"""The HTML report: self-contained, escaped, scriptless, and clean in a real Chromium."""

from __future__ import annotations

import io
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import rubriclab as rl
from rubriclab.demo import run_demo
from rubriclab.result import EvalResult, MetricInfo
from rubriclab.widgets.report import CSP, report_html

HOSTILE = '<script>alert("x")</script><img src=x onerror="alert(1)">'


class _Tags(HTMLParser):
    """Collects what a browser would build: tags, attributes and the visible text."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def _parse(page: str) -> _Tags:
    parser = _Tags()
    parser.feed(page)
    return parser


def _hostile_result() -> EvalResult:
    rubric = rl.Rubric.checklist(["Is it safe?"], name="safety")
    table = pd.DataFrame(
        {
            "prompt": ["Say hi"],
            "response": [HOSTILE],
            "image": ["https://example.com/cat.png"],
            "safety/score": [0.0],
            "safety/verdict": ["fail"],
            "safety/passed": [False],
            "safety/criteria": [
                [{"name": "q1", "question": "Is it safe?", "level": 0, "evidence": HOSTILE}]
            ],
            "safety/rationale": [HOSTILE],
            "safety/raw_output": [HOSTILE],
            "safety/error": [None],
        }
    )
    return EvalResult(table, [MetricInfo("safety", "pointwise", rubric)], judge="test judge")


def test_model_text_is_escaped_everywhere() -> None:
    page = report_html({"hostile <b>name</b>": _hostile_result()}, title="T <i>x</i>")
    parsed = _parse(page)
    tag_names = {t for t, _ in parsed.tags}
    assert "script" not in tag_names
    assert all(not k.startswith("on") for _, attrs in parsed.tags for k in attrs)
    assert [a.get("src") for t, a in parsed.tags if t == "img"] == []  # no image from x
    text = "".join(parsed.text)
    assert HOSTILE in text  # shown, as text, for people to read
    assert "hostile <b>name</b>" in text and "T <i>x</i>" in text


def test_the_page_loads_nothing_from_anywhere() -> None:
    page = report_html({"r": _hostile_result()})
    parsed = _parse(page)
    csp = [a for t, a in parsed.tags if t == "meta" and a.get("http-equiv")]
    assert csp and csp[0]["content"] == CSP and "default-src 'none'" in CSP
    for tag, attrs in parsed.tags:
        for key in ("src", "href"):
            value = attrs.get(key) or ""
            assert not value.startswith(("http:", "https:", "//", "file:")), (tag, value)
    assert "remote image, not embedded: https://example.com/cat.png" in "".join(parsed.text)


def test_sections_navigation_mock_banner_and_case_limit() -> None:
    results = run_demo("mock", report=None, out=io.StringIO())
    page = report_html(results, title="demo", max_cases=2)
    parsed = _parse(page)
    anchors = [a["href"] for t, a in parsed.tags if t == "a" and a.get("href")]
    ids = {a.get("id") for t, a in parsed.tags if t == "section"}
    assert anchors == ["#result-1", "#result-2", "#result-3"]
    assert ids == {"result-1", "result-2", "result-3"}
    text = "".join(parsed.text)
    assert "MOCK judge" in text
    assert "8 more cases are in the result file" in text  # 10 summaries, 2 shown
    assert sum(1 for t, a in parsed.tags if t == "details" and a.get("class") == "case") == 6
    assert sum(1 for t, a in parsed.tags if t == "img") == 2  # car pictures, embedded
    assert all(a["src"].startswith("data:image/png;base64,") for t, a in parsed.tags if t == "img")


def test_an_empty_report_is_refused() -> None:
    with pytest.raises(ValueError, match="at least one result"):
        report_html({})


@pytest.mark.browser
def test_demo_report_opens_in_chromium_without_console_errors(tmp_path: Path, page: Any) -> None:
    path = tmp_path / "demo.html"
    run_demo("mock", report=path, out=io.StringIO())
    messages: list[str] = []
    requests: list[str] = []
    page.on("console", lambda m: messages.append(f"{m.type}: {m.text}"))
    page.on("pageerror", lambda e: messages.append(f"pageerror: {e}"))
    page.on("request", lambda r: requests.append(r.url))
    page.goto(path.as_uri())
    page.wait_for_load_state("load")
    assert page.title() == "rubriclab demo"
    first = page.locator("details.case").first
    first.locator(":scope > summary").click()
    assert first.evaluate("d => d.open") is True  # cases open without any script
    assert page.locator("img").first.evaluate("i => i.naturalWidth") > 0
    assert messages == []
    assert [u for u in requests if not u.startswith("data:")] == [path.as_uri()]


def _markdown_result() -> EvalResult:
    rubric = rl.Rubric.checklist(["Names the damage?"], name=f"dmg {HOSTILE}")
    table = pd.DataFrame(
        {
            "prompt": ["Describe the damage"],
            "image_description": ["A barn with a torn roof"],
            "response": [
                "**Primary Damage:** roof\n\n- shingles gone\n- [photo](javascript:alert(1)) "
                f"[source](https://example.com/x) ![pic](https://example.com/p.png)\n\n{HOSTILE}"
            ],
            "m/score": [0.75],
            "m/verdict": ["tie"],
            "m/passed": [True],
            "m/criteria": [[{"name": f"q1 {HOSTILE}", "label": "YES", "level": 1}]],
            "m/rationale": ["## Why\nIt names the *roof*."],
            "m/raw_output": ["{}"],
            "m/error": [None],
        }
    )
    return EvalResult(table, [MetricInfo("m", "pointwise", rubric)], judge="test judge")


def test_charts_are_inline_svg_with_escaped_labels() -> None:
    page = report_html({"r": _markdown_result(), "h": _hostile_result()})
    parsed = _parse(page)
    svgs = [a for t, a in parsed.tags if t == "svg"]
    assert {s["class"] for s in svgs} >= {"rl-chart rl-hist", "rl-chart rl-crit-chart"}
    tags = {t for t, _ in parsed.tags}
    assert not tags & {"script", "foreignobject", "use", "image", "iframe"}
    assert all(not k.startswith("on") for _, attrs in parsed.tags for k in attrs)
    text = "".join(parsed.text)
    assert f"q1 {HOSTILE}" in text  # a criterion name from a judge: a text label in a <title>
    assert "m: scores (1 scored)" in text and "100%" in text


def test_model_text_renders_as_markdown_with_raw_html_as_text() -> None:
    parsed = _parse(report_html({"r": _markdown_result()}))
    strong = [t for t, _ in parsed.tags if t == "strong"]
    assert strong and ("li", {}) in parsed.tags and ("h2", {}) in parsed.tags
    links = [a for t, a in parsed.tags if t == "a" and a.get("href", "").startswith("http")]
    assert links == [
        {"href": "https://example.com/x", "rel": "noopener noreferrer nofollow", "target": "_blank"}
    ]
    assert not any(t == "img" for t, _ in parsed.tags)  # ![pic](...) is its alt text
    text = "".join(parsed.text)
    assert HOSTILE in text and "[image: pic]" in text and "javascript:" in text


def test_prose_columns_get_room_and_metric_columns_stay_narrow() -> None:
    page = report_html({"r": _markdown_result()})
    rows = page[page.index('class="rl-rows-static"') :]
    head = rows[: rows.index("</thead>")]
    assert head.count("min-width:220px") == 3  # prompt, image_description, response
    assert (
        '<div style="font-weight:400; font-size:11px; overflow-wrap:anywhere;">m</div><div>score</div>'
        in head
    )
    assert "white-space:nowrap" in head  # the score column


def test_markdown_detection_on_hostile_text() -> None:
    """Bounded patterns: a wall of brackets is plain text (an unbounded scan would hang here)."""
    from rubriclab.widgets._markdown import looks_like_markdown, markdown_html

    nasty = "[" * 100_000 + "*" * 50_000 + "`" * 20_000
    assert not looks_like_markdown(nasty)
    assert "&lt;script&gt;" in markdown_html("[" * 5_000 + "<script>x</script>")


def test_the_report_command_embeds_local_images_only_from_the_results_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A result file someone sent names pictures on the reader's disk: the report (a file
    people pass on) must not carry them away."""
    import base64

    from rubriclab.cli import main

    png = b"\x89PNG\r\n\x1a\n" + b"\x00" * 24
    received, private = tmp_path / "received", tmp_path / "private"
    received.mkdir()
    private.mkdir()
    (received / "ok.png").write_bytes(png)
    (private / "face.png").write_bytes(png + b"PRIVATE")
    monkeypatch.chdir(tmp_path)
    table = pd.DataFrame(
        {
            "prompt": ["p0", "p1", "p2"],
            "response": ["r", "r", "r"],
            "image": ["ok.png", str(private / "face.png"), "../private/face.png"],
            "m/score": [1.0, 1.0, 1.0],
        }
    )
    EvalResult(table, [MetricInfo("m")]).save(received / "results.jsonl")

    def embedded(page: str) -> list[bytes]:
        srcs = [a.get("src") or "" for tag, a in _parse(page).tags if tag == "img"]
        return [base64.b64decode(s.split(",", 1)[1]) for s in srcs if s.startswith("data:")]

    assert main(["report", str(received / "results.jsonl"), "-o", "r.html"]) == 0
    page = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert embedded(page) == [png]  # the one inside the result's folder (negative control)
    assert page.count("is outside the folders images are embedded from") == 2

    args = ["report", str(received / "results.jsonl"), "-o", "r2.html"]
    assert main([*args, "--allow-images", str(private)]) == 0
    assert sum(b"PRIVATE" in b for b in embedded((tmp_path / "r2.html").read_text())) == 2


def test_the_report_names_the_judge_once() -> None:
    """The mock banner and the rows line both carried the judge's long description."""
    import pandas as pd

    import rubriclab as rl
    from rubriclab.widgets.report import report_html

    result = rl.evaluate(
        pd.DataFrame({"prompt": ["a?", "b?"], "response": ["x", "y"]}),
        metrics=[rl.metrics.RubricMetric(rubric=rl.Rubric.checklist(["Q?"]), name="c")],
        judge="mock",
    )
    page = report_html({"one": result})
    import html

    described = html.escape(result.judge.split(" (")[0])
    assert described and page.count(described) == 1, described
    assert page.count("MOCK judge") >= 1


def test_report_charts_have_axis_titles_and_a_legend_for_stacked_bars() -> None:
    from rubriclab.widgets._svg import criteria_svg, histogram_svg

    chart = {
        "metric": "m",
        "kind": "pointwise",
        "scored": 3,
        "histogram": [{"low": i / 10, "high": (i + 1) / 10, "count": i % 3} for i in range(10)],
        "criteria": [
            {
                "name": "a",
                "total": 3,
                "results": [{"label": "level 1", "count": 1}, {"label": "level 2", "count": 2}],
            },
            {"name": "b", "total": 3, "results": [{"label": "level 1", "count": 3}]},
            {"name": "c", "total": 3, "results": [{"label": "<b>x</b>", "count": 3}]},
            {
                "name": "d",
                "total": 3,
                "results": [
                    {"label": "level 1", "count": 1, "good": False},
                    {"label": "level 2", "count": 1, "good": True},
                    {"label": "level 3", "count": 1, "good": True},
                ],
            },
        ],
    }
    hist = histogram_svg(chart)
    assert ">score</text>" in hist and ">rows</text>" in hist
    assert ">verdict (both orders)</text>" in histogram_svg(
        {**chart, "kind": "pairwise", "choices": [{"label": "candidate better", "count": 1}]}
    )
    bars = criteria_svg(chart)
    legend = bars.split('<g class="rl-legend">', 1)[1]
    # one swatch per colour, naming what it stands for; pass/fail colours say which levels
    assert legend.count("<rect") == len(set(re.findall(r'<rect[^>]*fill="([^"]+)"', legend)))
    assert ">level 2, level 3</text>" in legend
    # level 1 twice: on the blue ramp, and in red below the critical level
    assert len(re.findall(r">level 1[,<]", legend)) == 2 and 'fill="#d32f2f"' in legend
    assert "&lt;b&gt;x&lt;/b&gt;" in legend and "<b>" not in legend
