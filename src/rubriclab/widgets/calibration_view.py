"""``CalibrationView``: how far to trust a judge, on the user's own labels.

The confusion matrix of judge vs human verdicts as a heat map; clicking a cell lists those
comparisons a page at a time, each with its texts (question, both answers, both verdicts), and
opening one shows the judge's row and the person's row side by side (prompt,
answers, the judge's reasoning, the human label). Per-criterion bars show which criteria the
judge over- or under-scores, with bootstrap intervals.
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from typing import Any

import pandas as pd
import traitlets

from ..calibration import CriterionAgreement, PairwiseAgreement
from ..calibration.people import Calibration
from ..columns import mock_judge_of, to_plain
from ._assets import EsmBundle
from ._base import RubricView
from ._cells import is_missing, text_of
from ._static.calibration import calibration_html, calibration_text
from ._static.common import MOCK_TEXT, mock_html

__all__ = ["CalibrationView"]

PAGE_SIZE = 8
TEXT_CHARS = 600
#: id-like columns are shown in the item's heading, not as texts
_ID_HINTS = ("id", "model", "winner", "judge", "rater", "turn", "tstamp", "verdict")


class CalibrationView(RubricView):
    """Heat map of verdicts, the disagreements behind each cell, and per-criterion bars."""

    _esm = EsmBundle("calibration_view")

    summary = traitlets.Dict().tag(sync=True)
    labels = traitlets.List(traitlets.Unicode()).tag(sync=True)
    sides = traitlets.List(traitlets.Unicode()).tag(sync=True)
    confusion = traitlets.List(traitlets.List(traitlets.Int())).tag(sync=True)
    cell = traitlets.List(traitlets.Unicode()).tag(sync=True)
    items = traitlets.List(traitlets.Dict()).tag(sync=True)
    cell_total = traitlets.Int(0).tag(sync=True)
    page = traitlets.Int(0).tag(sync=True)
    page_size = traitlets.Int(PAGE_SIZE).tag(sync=True)
    item = traitlets.Int(-1).tag(sync=True)
    detail = traitlets.Dict(allow_none=True, default_value=None).tag(sync=True)
    criteria = traitlets.List(traitlets.Dict()).tag(sync=True)
    #: ``rl.calibrate(result)``: judge vs people's labels per metric and criterion
    people = traitlets.Dict(allow_none=True, default_value=None).tag(sync=True)

    def __init__(
        self,
        pairwise: PairwiseAgreement | Calibration | None = None,
        criteria: CriterionAgreement | None = None,
        *,
        judge: pd.DataFrame | None = None,
        human: pd.DataFrame | None = None,
        title: str | None = None,
        calibration: Calibration | None = None,
        mock_judge: str | None = None,
    ) -> None:
        if isinstance(pairwise, Calibration):
            pairwise, calibration = None, pairwise
        if pairwise is None and criteria is None and calibration is None:
            raise ValueError(
                "CalibrationView needs rl.pairwise_agreement(...) and/or "
                "rl.criterion_agreement(...) results, or rl.calibrate(result), to show"
            )
        self._pairwise = pairwise
        self._criteria = criteria
        self._frames = {"judge": judge, "human": human}
        self._listed: pd.DataFrame | None = None
        state: dict[str, Any] = {"title": title or "", "criteria": _criteria_rows(criteria)}
        if calibration is not None:
            state.update(
                people=people_payload(calibration),
                is_mock=calibration.is_mock,
                judge=calibration.judge,
            )
        # the MOCK banner whenever any input came from a mock judge (``mock_judge=`` says so
        # for figures made from data that lost the mark)
        mock = mock_judge or next(
            (
                m
                for m in (
                    getattr(pairwise, "mock_judge", None),
                    getattr(criteria, "mock_judge", None),
                    mock_judge_of(judge),
                )
                if m
            ),
            None,
        )
        if mock and not state.get("is_mock"):
            state.update(is_mock=True, judge=mock)
        if pairwise is not None:
            state.update(
                summary=_summary(pairwise),
                labels=[str(v) for v in pairwise.confusion.index],
                sides=list(pairwise.sides),
                confusion=[[int(c) for c in row] for row in pairwise.confusion.to_numpy()],
            )
        super().__init__(**state)

    @traitlets.validate("cell")
    def _valid_cell(self, proposal: Any) -> list[str]:
        value = [str(v) for v in proposal["value"]]
        if value and (len(value) != 2 or any(v not in self.labels for v in value)):
            raise traitlets.TraitError(
                f"a cell is [judge verdict, human verdict] from {self.labels}, got {value}"
            )
        return value

    @traitlets.observe("cell")
    def _on_cell(self, change: Any) -> None:
        with self.hold_sync():
            self.item = -1
            self.detail = None  # type: ignore[assignment]
            self.page = 0
            if not change["new"] or self._pairwise is None:
                self._listed = None
                self.items, self.cell_total = [], 0
                return
            left, right = self._pairwise.sides
            comp = self._pairwise.comparisons
            row, col = change["new"]
            chosen = comp[(comp[left].astype(str) == row) & (comp[right].astype(str) == col)]
            self._listed = chosen
            self.cell_total = len(chosen)
            self.items = self._page_items(0)

    def _page_items(self, page: int) -> list[dict[str, Any]]:
        """The comparisons on one page of the cell's list, each with its texts."""
        if self._listed is None or self._pairwise is None:
            return []
        start = page * self.page_size
        chunk = self._listed.iloc[start : start + self.page_size]
        return [{**_item(self._pairwise, r), "texts": self._texts(r)} for _, r in chunk.iterrows()]

    @traitlets.validate("page")
    def _valid_page(self, proposal: Any) -> int:
        pages = max(1, -(-self.cell_total // self.page_size))
        return min(max(int(proposal["value"]), 0), pages - 1)

    @traitlets.observe("page")
    def _on_page(self, change: Any) -> None:
        with self.hold_sync():
            self.item = -1
            self.detail = None  # type: ignore[assignment]
            self.items = self._page_items(int(change["new"]))

    def _texts(self, record: pd.Series) -> list[dict[str, Any]]:
        """The prose of one comparison (question, answers, judgments) from both frames, short."""
        assert self._pairwise is not None
        out: list[dict[str, Any]] = []
        seen: set[str] = set()
        for side in self._pairwise.sides:
            frame = self._frames["judge"] if side == "judge" else self._frames["human"]
            label = record.get(f"{side}_row")
            if frame is None or label is None or label not in frame.index:
                continue
            for k, v in frame.loc[label].items():
                name = str(k)
                if name in seen or is_missing(v) or any(h in name.lower() for h in _ID_HINTS):
                    continue
                text = text_of(v, TEXT_CHARS)
                if text and not text.replace(".", "").isdigit():
                    seen.add(name)
                    out.append({"name": name, "side": side, "text": text})
        return out[:6]

    @traitlets.observe("item")
    def _on_item(self, change: Any) -> None:
        pos = int(change["new"])
        if pos < 0 or self._listed is None or pos >= len(self.items):
            self.detail = None  # type: ignore[assignment]
            return
        assert self._pairwise is not None
        record = self._listed.iloc[self.page * self.page_size + pos]
        self.detail = self._detail(record)

    def _detail(self, record: pd.Series) -> dict[str, Any]:
        """Both sides of one comparison: each source row's text and its verdict."""
        assert self._pairwise is not None
        left, right = self._pairwise.sides
        out: dict[str, Any] = {"item": _item(self._pairwise, record), "sides": []}
        for side, row_col in ((left, f"{left}_row"), (right, f"{right}_row")):
            frame = self._frames["judge"] if side == "judge" else self._frames["human"]
            label = record.get(row_col)
            fields: list[dict[str, Any]] = []
            if frame is not None and label is not None and label in frame.index:
                source = frame.loc[label]
                fields = [
                    {"name": str(k), "text": text_of(v)}
                    for k, v in source.items()
                    if not is_missing(v)
                ]
            out["sides"].append(
                {
                    "name": side,
                    "verdict": str(record.get(side, "")),
                    "raw": text_of(record.get(f"{side}_raw"), 400),
                    "row": to_plain(label, str),
                    "fields": fields,
                }
            )
        return out

    def static_text(self) -> str:
        mock = f"[{MOCK_TEXT}]\n" if self.is_mock else ""
        return (
            mock
            + calibration_text(
                self.title, self.summary, self.labels, self.sides, self.confusion, self.criteria
            )
            + people_text(self.people)
        )

    def static_html(self) -> str:
        return (
            mock_html(self.is_mock, self.judge)
            + calibration_html(
                self.title, self.summary, self.labels, self.sides, self.confusion, self.criteria
            )
            + people_html(self.people)
        )


#: disagreements sent to the view (the rest stay in ``Calibration.disagreements``)
MAX_DISAGREEMENTS = 200


def people_payload(cal: Calibration) -> dict[str, Any]:
    """``rl.calibrate``'s figures as JSON for the view: every comparison and the first
    disagreements with their texts (all text capped, shown as text)."""
    data = cal.to_dict()
    listed = data["disagreements"][:MAX_DISAGREEMENTS]
    for d in listed:
        d["comment"] = text_of(d.get("comment"), TEXT_CHARS)
        d["judge"], d["people"] = str(d.get("judge")), str(d.get("people"))
    return {
        "labels": data["labels"],
        "reviewers": data["reviewers"],
        "items": data["items"],
        "disagreements": listed,
        "disagreement_total": len(data["disagreements"]),
    }


def _fmt_rate(item: dict[str, Any]) -> str:
    if item.get("rate") is None:
        return "n/a"
    low, high = item.get("rate_low"), item.get("rate_high")
    span = f" [{100 * low:.0f}–{100 * high:.0f}%]" if low is not None and high is not None else ""
    return f"{100 * item['rate']:.0f}% ({item['agree']}/{item['n']}){span}"


def _fmt_kappa(item: dict[str, Any]) -> str:
    k = item.get("kappa")
    if k is None:
        return "n/a"
    low, high = item.get("kappa_low"), item.get("kappa_high")
    span = f" [{low:.2f} to {high:.2f}]" if low is not None and high is not None else ""
    return f"{k:.2f}{span}"


def _fmt_reviewers(item: dict[str, Any]) -> str:
    r = item.get("reviewers")
    if not r:
        return ""
    alpha = r.get("krippendorff_alpha")
    return f"agree {r['agree']}/{r['units']}, alpha {'n/a' if alpha is None else f'{alpha:.2f}'}"


def people_text(people: dict[str, Any] | None) -> str:
    if not people:
        return ""
    lines = [f"\nJudge vs people ({people['labels']} labels, {len(people['reviewers'])} reviewers)"]
    for item in people["items"]:
        lines.append(
            f"  {item['metric']} / {item['criterion']}: agreement {_fmt_rate(item)}, "
            f"kappa {_fmt_kappa(item)}"
            + (f", reviewers {_fmt_reviewers(item)}" if item.get("reviewers") else "")
        )
    lines.append(f"  disagreements: {people['disagreement_total']}")
    return "\n".join(lines)


def people_html(people: dict[str, Any] | None) -> str:
    if not people:
        return ""
    esc = html.escape
    rows = "".join(
        "<tr>"
        + "".join(
            f"<td>{esc(str(v))}</td>"
            for v in (
                item["metric"],
                item["criterion"],
                _fmt_rate(item),
                _fmt_kappa(item),
                _fmt_reviewers(item),
            )
        )
        + "</tr>"
        for item in people["items"]
    )
    head = "".join(
        f"<th>{h}</th>"
        for h in ("metric", "criterion", "agreement [95%]", "Cohen's kappa [95%]", "reviewers")
    )
    return (
        "<div class='rl-people'><strong>Judge vs people</strong> "
        f"({people['labels']} labels; {people['disagreement_total']} disagreements)"
        f"<table><tr>{head}</tr>{rows}</table></div>"
    )


def _rate(agree: int, total: int) -> dict[str, Any]:
    return {"agree": agree, "total": total, "rate": agree / total if total else None}


def _summary(p: PairwiseAgreement) -> dict[str, Any]:
    out: dict[str, Any] = {
        "pairs": p.pairs,
        "with_ties": _rate(p.with_ties.agree, p.with_ties.total),
        "without_ties": _rate(p.without_ties.agree, p.without_ties.total),
        "random_with_ties": p.random_with_ties,
        "random_without_ties": p.random_without_ties,
        "kappa": _finite(p.kappa),
        "kappa_without_ties": _finite(p.kappa_without_ties),
        "disagreements": int((~p.comparisons["agree"]).sum()),
        "dropped": p.dropped,
        "unmatched": p.unmatched,
    }
    if p.judge_inconsistent is not None:
        out["judge_inconsistent"] = _rate(p.judge_inconsistent.agree, p.judge_inconsistent.total)
    if p.human_vs_human is not None:
        hvh = p.human_vs_human
        out["human_vs_human"] = {
            "with_ties": _rate(hvh.with_ties.agree, hvh.with_ties.total),
            "without_ties": _rate(hvh.without_ties.agree, hvh.without_ties.total),
        }
    return out


def _item(p: PairwiseAgreement, r: pd.Series) -> dict[str, Any]:
    left, right = p.sides
    reserved = {left, right, "first", "second", "agree", "opposite"}
    reserved |= {f"{s}_{x}" for s in (left, right) for x in ("raw", "row", "rater")}
    keys = {str(k): to_plain(v, str) for k, v in r.items() if k not in reserved}
    rater = next((r.get(f"{s}_rater") for s in (right, left) if f"{s}_rater" in r.index), None)
    return {
        "keys": keys,
        "first": text_of(r.get("first"), 200),
        "second": text_of(r.get("second"), 200),
        left: str(r.get(left)),
        right: str(r.get(right)),
        "rater": None if is_missing(rater) else text_of(rater, 100),
    }


def _criteria_rows(c: CriterionAgreement | None) -> list[dict[str, Any]]:
    if c is None:
        return []
    keep: Sequence[str] = (
        "n",
        "judge_mean",
        "human_mean",
        "mean_diff",
        "ci_low",
        "ci_high",
        "tendency",
        "exact",
        "within_one",
        "kappa_quadratic",
    )
    rows = []
    for name, row in c.table.iterrows():
        rows.append({"criterion": str(name), **{k: _finite(row.get(k)) for k in keep}})
    return rows


def _finite(value: Any) -> Any:
    if isinstance(value, str) or value is None:
        return value
    try:
        number = float(value)
    except (TypeError, ValueError):
        return to_plain(value, str)
    return None if math.isnan(number) or math.isinf(number) else number
