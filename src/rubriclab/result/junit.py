"""JUnit XML from results, so CI systems (GitLab, Jenkins, GitHub test reporters) show each case.

One ``<testsuite>`` per result and metric, one ``<testcase>`` per row: a case whose verdict is a
fail is a ``<failure>``, a row the judge could not score (its ``{metric}/error``) an ``<error>``.
Every text is model or user data: ElementTree escapes it, and characters XML 1.0 cannot hold are
dropped so the file always parses.
"""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..columns import ERROR, PASSED, RATIONALE, SCORE, VERDICT, col
from ..scale import format_percent

if TYPE_CHECKING:
    from . import EvalResult

__all__ = ["junit_xml", "write_junit"]

_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
_MAX_TEXT = 4000


def write_junit(
    results: Mapping[str, EvalResult], path: str | Path, *, prompt_column: str = "prompt"
) -> Path:
    """Write :func:`junit_xml` of ``results`` (name -> result) to ``path``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(junit_xml(results, prompt_column=prompt_column), encoding="utf-8")
    return path


def junit_xml(results: Mapping[str, EvalResult], *, prompt_column: str = "prompt") -> str:
    """The results as a JUnit XML document (``<testsuites>``); cases are named by row number
    and the start of ``prompt_column``."""
    root = ET.Element("testsuites", name="rubriclab")
    totals = {"tests": 0, "failures": 0, "errors": 0}
    for run_name, result in results.items():
        for metric in result.metric_names:
            suite = _suite(run_name, metric, result, prompt_column)
            root.append(suite)
            for key in totals:
                totals[key] += int(suite.get(key, "0"))
    for key, value in totals.items():
        root.set(key, str(value))
    ET.indent(root)
    body: str = ET.tostring(root, encoding="unicode")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + body + "\n"


def _suite(run_name: str, metric: str, result: EvalResult, prompt_column: str) -> ET.Element:
    mock = " [MOCK judge]" if result.is_mock else ""
    suite = ET.Element("testsuite", name=_clean(f"{run_name}/{metric}{mock}"))
    failures = errors = 0
    table = result.table
    for position in range(len(table)):
        row = table.iloc[position]
        case = ET.SubElement(
            suite,
            "testcase",
            classname=_clean(f"rubriclab.{run_name}.{metric}"),
            name=_clean(_case_name(position, row.get(prompt_column))),
        )
        error = _text(row.get(col(metric, ERROR)))
        score = row.get(col(metric, SCORE))
        verdict = _text(row.get(col(metric, VERDICT)))
        if error:
            errors += 1
            node = ET.SubElement(case, "error", message=_clean(error[:200]), type="judge error")
            node.text = _clean(error)
        elif _is_false(row.get(col(metric, PASSED))):
            failures += 1
            message = f"{verdict or 'fail'} (score {_number(score)})"
            node = ET.SubElement(case, "failure", message=_clean(message), type="verdict")
            node.text = _clean(_text(row.get(col(metric, RATIONALE))) or message)
        out = ET.SubElement(case, "system-out")
        out.text = _clean(f"score: {_number(score)}\nverdict: {verdict or '-'}")
    suite.set("tests", str(len(table)))
    suite.set("failures", str(failures))
    suite.set("errors", str(errors))
    suite.set("skipped", "0")
    return suite


def _case_name(position: int, prompt: Any) -> str:
    short = " ".join(_text(prompt).split())[:80]
    return f"row {position}" + (f": {short}" if short else "")


def _is_false(value: Any) -> bool:
    """A verdict of fail (``False``, numpy's too); no verdict (None, NaN, NA) is not a fail."""
    if value is None or isinstance(value, float):
        return False
    try:
        return not bool(value)
    except TypeError:  # pandas.NA
        return False


def _text(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return str(value)


def _number(value: Any) -> str:
    """A score as every display shows one: a percent with '%' (one scale, see ``scale``)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    try:
        return format_percent(float(value))
    except (TypeError, ValueError):
        return str(value)


def _clean(text: str) -> str:
    """Only characters XML 1.0 allows, and not without end."""
    cleaned = _NOT_XML.sub("\ufffd", text)
    return cleaned if len(cleaned) <= _MAX_TEXT else cleaned[:_MAX_TEXT] + " …"
