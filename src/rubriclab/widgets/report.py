"""One self-contained HTML page for one or more results: readable anywhere, runs nothing.

The page is made of the views' static forms (charts as inline SVG, summary, rows, and each case
with its criteria, model and judge text as CommonMark with raw HTML off),
so the report and the notebook never disagree. It carries no script, loads nothing from the
network (local images are embedded, remote ones are named, not fetched), escapes every piece of
model text, and declares a Content-Security-Policy that would block a script if one slipped in.
"""

from __future__ import annotations

import html
import os
import re
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..files import atomic_write_text
from ..judges.clean import clean_text
from ..scale import format_count
from ._cells import case_payload
from ._charts import chart_data
from ._source import as_source
from ._static.case import case_html
from ._static.common import fmt_score
from ._static.rubric import rubric_html
from ._static.table import table_html
from ._svg import charts_html

if TYPE_CHECKING:
    from ..result import EvalResult

__all__ = ["CSP", "report_html", "write_report_html"]

#: no scripts, no fetches, no frames; inline styles and embedded (data:) images only
CSP = (
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; "
    "base-uri 'none'; form-action 'none'"
)

_STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 0; color: #222;
       background: #fff; line-height: 1.4; }
main { max-width: 1200px; margin: 0 auto; padding: 16px 24px 48px; }
h1 { font-size: 22px; margin: 8px 0 4px; }
h2 { font-size: 18px; margin: 32px 0 8px; padding-top: 8px; border-top: 2px solid #ddd; }
h3 { font-size: 15px; margin: 18px 0 6px; }
.meta { color: #666; font-size: 13px; }
nav ul { padding-left: 18px; margin: 6px 0; }
details.case { border: 1px solid #e0e0e0; border-radius: 6px; margin: 6px 0; padding: 4px 10px; }
details.case > summary { cursor: pointer; font-size: 13px; }
.rows { overflow-x: auto; }
.rows table { width: 100%; }
.rl-md p { margin: 6px 0; }
.rl-md pre { white-space: pre-wrap; background: #f4f4f4; padding: 4px 6px; }
.note { color: #666; font-size: 13px; margin: 6px 0; }
"""

_HTTP = re.compile(r"^https?://", re.IGNORECASE)


def report_html(
    results: Mapping[str, EvalResult],
    title: str = "rubriclab report",
    *,
    max_rows: int = 500,
    max_cases: int = 200,
    generated: datetime | None = None,
    image_dirs: Sequence[str | os.PathLike[str]] | None = None,
) -> str:
    """A complete HTML document with each result's summary, rows and judged cases.

    ``results`` maps a section name to an :class:`~rubriclab.result.EvalResult`. Big results
    show their first ``max_rows`` rows and ``max_cases`` cases in full, with a note saying so.
    Local images are embedded only from ``image_dirs`` (the first one is where relative paths
    are read from; by default the working folder): a report is a file people pass on, and a
    result someone sent must not carry the reader's own pictures away in it.
    """
    if not results:
        raise ValueError("report_html needs at least one result")
    roots = _roots(image_dirs)
    when = (generated or datetime.now(timezone.utc)).strftime("%Y-%m-%d %H:%M UTC")
    any_mock = any(r.is_mock for r in results.values())
    anchors = {name: f"result-{i + 1}" for i, name in enumerate(results)}
    out = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_esc(title)}</title><style>{_STYLE}</style></head><body><main>",
        f"<h1>{_esc(title)}</h1>",
        f'<div class="meta">{len(results)} evaluation(s) · written {when} by rubriclab</div>',
    ]
    if any_mock:
        out.append(
            '<p class="note"><b>Some results below come from the MOCK judge</b>: an offline, '
            "deterministic stand-in for trying the workflow. Its verdicts are not judgments.</p>"
        )
    out.append("<nav><ul>")
    for name, result in results.items():
        out.append(
            f'<li><a href="#{anchors[name]}">{_esc(name)}</a> '
            f'<span class="meta">({format_count(result.row_count, "row")}; {_esc(", ".join(result.metric_names))})'
            "</span></li>"
        )
    out.append("</ul></nav>")
    for name, result in results.items():
        out.append(_section(name, anchors[name], result, max_rows, max_cases, roots))
    out.append("</main></body></html>")
    return "\n".join(out)


def write_report_html(
    path: str | Path,
    results: Mapping[str, EvalResult],
    title: str = "rubriclab report",
    **options: Any,
) -> Path:
    """Write :func:`report_html` to ``path`` whole or not at all (temp file, then rename).

    Text UTF-8 cannot hold (a lone surrogate in someone's data) shows as U+FFFD, so one odd
    cell never costs the whole page.
    """
    page = clean_text(report_html(results, title, **options))
    return atomic_write_text(path, page)


def _roots(image_dirs: Sequence[str | os.PathLike[str]] | None) -> list[Path]:
    """The folders local images may be embedded from (resolved), and the shipped pictures."""
    folders = [Path(d) for d in image_dirs] if image_dirs else [Path.cwd()]
    folders.append(Path(__file__).resolve().parents[1] / "demo_images")
    out = []
    for folder in folders:
        try:
            out.append(folder.resolve())
        except (OSError, RuntimeError):
            continue
    return out


def _section(
    name: str, anchor: str, result: EvalResult, max_rows: int, max_cases: int, roots: list[Path]
) -> str:
    source = as_source(result)
    n = len(source.table)
    out = [f'<section id="{anchor}"><h2>{_esc(name)}</h2>']
    out.append(f'<div class="charts">{charts_html(chart_data(source))}</div>')
    out.append(f'<div class="rows">{table_html(source, title="", max_rows=max_rows)}</div>')
    for info in result.metrics:
        if info.rubric is not None:
            out.append(rubric_html(info.rubric, heading=f"Rubric of {info.name}"))
    out.append(f"<h3>Cases ({min(n, max_cases)} of {n})</h3>")
    for pos in range(min(n, max_cases)):
        case = _offline_images(case_payload(source, pos, image_roots=roots))
        line = "; ".join(
            f"{m['name']}: {fmt_score(m.get('score'), str(m.get('kind')))}"
            + (f" {m['verdict']}" if m.get("verdict") else "")
            + (" (error)" if m.get("error") else "")
            for m in case.get("metrics", [])
        )
        out.append(
            f'<details class="case"><summary>{_esc(case.get("heading"))} · {_esc(line)}</summary>'
            f"{case_html(case)}</details>"
        )
    if n > max_cases:
        out.append(
            f'<p class="note">{n - max_cases} more cases are in the result file '
            "(rl.load_result(path)), not shown here.</p>"
        )
    out.append("</section>")
    return "\n".join(out)


def _offline_images(case: dict[str, Any]) -> dict[str, Any]:
    """Remote images are named, not fetched: the report must open with no network."""
    images = []
    for img in case.get("images", []):
        src = img.get("src")
        if isinstance(src, str) and _HTTP.match(src):
            img = {"name": img.get("name"), "note": f"remote image, not embedded: {src[:200]}"}
        images.append(img)
    return {**case, "images": images}


def _esc(value: Any) -> str:
    return html.escape("" if value is None else str(value), quote=True)
