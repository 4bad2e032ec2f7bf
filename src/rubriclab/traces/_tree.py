"""``Trace``: spans as a tree (roots, children, walk, find, final answer, DataFrame view)."""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Iterator, Mapping, Sequence
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from jinja2.sandbox import unsafe
from pydantic import PrivateAttr

if TYPE_CHECKING:
    import pandas as pd

from ..columns import preview
from ..scale import format_count
from ._base import TraceError, TraceWarning, _normalise_kind
from ._formats import (
    _link_tool_calls,
    _parsed,
    _span_from_canonical,
    _spans_from_otlp_payload,
    _spans_from_payload,
)
from ._model import Span, TokenUsage, ToolCall, _io_previews, _ReadOnlyModel

MAX_OUTLINE_INDENT = 32  # levels of indentation in Trace.tree(); deeper spans show their depth


class Trace(_ReadOnlyModel):
    """One agent run: its spans and the tree they form.

    Building a Trace checks the tree: duplicate span ids and parent cycles are errors naming the
    spans; a parent that is not in the trace is a warning, and that span is treated as a root.
    """

    trace_id: str
    spans: list[Span]

    _by_id: dict[str, Span] = PrivateAttr(default_factory=dict)
    _children: dict[str | None, list[Span]] = PrivateAttr(default_factory=dict)
    _depth: dict[str, int] = PrivateAttr(default_factory=dict)
    _order: list[Span] = PrivateAttr(default_factory=list)
    _problem: str | None = PrivateAttr(default=None)

    def __init__(self, spans: Iterable[Span], trace_id: str | None = None) -> None:
        span_list = list(spans)
        if trace_id is None:
            if not span_list:
                raise TraceError("a trace needs at least one span")
            trace_id = span_list[0].trace_id
        fields: dict[str, Any] = {"trace_id": trace_id, "spans": span_list}
        super().__init__(**fields)
        if self._problem is not None:
            raise TraceError(self._problem)

    def model_post_init(self, context: Any, /) -> None:
        # pydantic would wrap a raise here in a ValidationError; record it for __init__ instead
        self._problem = self._index()

    def _index(self) -> str | None:
        by_id: dict[str, Span] = {}
        for span in self.spans:
            if span.trace_id != self.trace_id:
                return (
                    f"span {span.name!r} (id {span.span_id}) belongs to trace {span.trace_id}, "
                    f"not {self.trace_id}: load several traces with rubriclab.load_traces"
                )
            if span.span_id in by_id:
                first = by_id[span.span_id]
                return (
                    f"trace {self.trace_id}: span id {span.span_id} is used twice (spans "
                    f"{first.name!r} and {span.name!r}); span ids must be unique in a trace"
                )
            by_id[span.span_id] = span
        position = {span.span_id: i for i, span in enumerate(self.spans)}
        children: dict[str | None, list[Span]] = {}
        for span in self.spans:
            parent = span.parent_id if span.parent_id in by_id else None
            if span.parent_id is not None and parent is None:
                warnings.warn(
                    f"trace {self.trace_id}: span {span.name!r} (id {span.span_id}) names parent "
                    f"{span.parent_id}, which is not in the trace; treating it as a root",
                    TraceWarning,
                    stacklevel=4,
                )
            children.setdefault(parent, []).append(span)
        for kids in children.values():
            kids.sort(key=lambda s: (s.start, position[s.span_id]))
        order: list[Span] = []
        depth: dict[str, int] = {}
        stack = [(root, 0) for root in reversed(children.get(None, []))]
        while stack:
            span, level = stack.pop()
            order.append(span)
            depth[span.span_id] = level
            stack.extend((kid, level + 1) for kid in reversed(children.get(span.span_id, [])))
        if len(order) < len(self.spans):
            return _describe_cycle(self.trace_id, by_id, depth)
        self._by_id, self._children, self._depth, self._order = by_id, children, depth, order
        return None

    def _checked(self) -> None:
        if self._problem is not None:
            raise TraceError(self._problem)

    def _resolve(self, span: Span | str) -> Span:
        self._checked()
        span_id = span if isinstance(span, str) else span.span_id
        found = self._by_id.get(span_id)
        if found is None:
            raise TraceError(f"span {span_id} is not in trace {self.trace_id}")
        return found

    def __repr__(self) -> str:
        roots = ", ".join(repr(r.name) for r in self.roots()) if self._problem is None else "?"
        return f"Trace({self.trace_id!r}, {format_count(len(self.spans), 'span')}, roots=[{roots}])"

    def __hash__(self) -> int:
        return hash((self.trace_id, len(self.spans)))

    def __str__(self) -> str:
        return self.tree()

    def get(self, span_id: str) -> Span | None:
        """The span with this id, or None."""
        self._checked()
        return self._by_id.get(span_id)

    def roots(self) -> list[Span]:
        """Spans without a parent in this trace, earliest first."""
        self._checked()
        return list(self._children.get(None, []))

    def children(self, span: Span | str) -> list[Span]:
        """A span's direct children (given the span or its id), earliest first."""
        return list(self._children.get(self._resolve(span).span_id, []))

    def parent(self, span: Span | str) -> Span | None:
        """A span's parent, or None for a root (including one whose parent is missing)."""
        found = self._resolve(span)
        return None if found.parent_id is None else self._by_id.get(found.parent_id)

    def depth(self, span: Span | str) -> int:
        """How deep a span sits: 0 for a root."""
        return self._depth[self._resolve(span).span_id]

    def walk(self) -> list[Span]:
        """Every span depth-first, siblings in start-time order (a parent before its children)."""
        self._checked()
        return list(self._order)

    def find(
        self, name: str | None = None, kind: str | None = None, status: str | None = None
    ) -> list[Span]:
        """Spans matching every filter given, in walk order (``kind`` accepts 'llm', 'chat', ...)."""
        wanted_kind = None if kind is None else _normalise_kind(kind)
        return [
            s
            for s in self.walk()
            if (name is None or s.name == name)
            and (wanted_kind is None or s.kind == wanted_kind)
            and (status is None or s.status.code == status.lower())
        ]

    def tool_calls(self) -> list[ToolCall]:
        """Every tool call in the run once, in walk order; executed calls (TOOL spans) win."""
        executed = {c.id: c for s in self.walk() if s.kind == "TOOL" for c in s.tool_calls if c.id}
        seen: set[str] = set()
        calls: list[ToolCall] = []
        for span in self.walk():
            for call in span.tool_calls:
                if call.id is None:
                    if span.kind == "TOOL":
                        calls.append(call)
                    continue
                if call.id not in seen:
                    seen.add(call.id)
                    calls.append(executed.get(call.id, call))
        return calls

    @property
    def start(self) -> datetime:
        """When the earliest span started."""
        return min(s.start for s in self.spans)

    @property
    def end(self) -> datetime:
        """When the last span ended."""
        return max(s.end for s in self.spans)

    @property
    def duration(self) -> timedelta:
        """Wall time from the first start to the last end."""
        return self.end - self.start

    @property
    def final_answer(self) -> str | None:
        """The run's answer: the root's last output text, else the last LLM span's (or None)."""
        for root in self.roots():
            if root.output_text:
                return root.output_text
        llm_spans = [s for s in self.walk() if s.kind == "LLM" and s.output_text]
        if not llm_spans:
            return None
        return max(enumerate(llm_spans), key=lambda pair: (pair[1].end, pair[0]))[1].output_text

    @property
    def errors(self) -> list[Span]:
        """Spans that ended in an error, in walk order."""
        return [s for s in self.walk() if s.is_error]

    def summary(self, width: int = 80) -> str:
        """One line about the run: spans, time, errors and the final answer."""
        answer = self.final_answer
        line = (
            f"trace {self.trace_id}: {format_count(len(self.spans), 'span')}, "
            f"{self.duration / timedelta(seconds=1):.2f}s, {format_count(len(self.errors), 'error')}"
        )
        return line + (f" | answer: {preview(answer, width)}" if answer else "")

    def tree(self, width: int = 60) -> str:
        """The run as an indented outline, one ``Span.summary`` per line."""
        return "\n".join(self.outline(width))

    def outline(self, width: int = 60) -> Iterator[str]:
        """The lines of :meth:`tree`, one at a time (printing can stop when it has enough).

        Indentation stops growing at ``MAX_OUTLINE_INDENT`` levels and deeper spans show their
        depth instead, so the outline grows with the number of spans, never with its square (a
        20,000-span chain would otherwise indent its way to 400M characters)."""
        for span in self.walk():
            depth = self._depth[span.span_id]
            pad = "  " * min(depth, MAX_OUTLINE_INDENT)
            if depth > MAX_OUTLINE_INDENT:
                pad += f"[depth {depth}] "
            yield pad + span.summary(width)

    @unsafe
    def to_dataframe(self) -> pd.DataFrame:
        """One row per span in walk order: ids, depth, name, kind, timing, status, model, tokens,
        and input/output previews. (Not callable from templates: a DataFrame can write files.)"""
        import pandas as pd

        rows = []
        for span in self.walk():
            shown_in, shown_out = _io_previews(span, 120)
            usage = span.usage or TokenUsage()
            rows.append(
                {
                    "trace_id": span.trace_id,
                    "span_id": span.span_id,
                    "parent_id": span.parent_id,
                    "depth": self.depth(span),
                    "name": span.name,
                    "kind": span.kind,
                    "start": span.start,
                    "duration_ms": span.duration_ms,
                    "status": span.status.code,
                    "status_message": span.status.message,
                    "model": span.model,
                    "input_tokens": usage.input_tokens,
                    "output_tokens": usage.output_tokens,
                    "total_tokens": usage.total_tokens,
                    "input_preview": shown_in,
                    "output_preview": shown_out,
                }
            )
        frame: pd.DataFrame = pd.DataFrame(rows)
        for column in ("input_tokens", "output_tokens", "total_tokens", "depth"):
            frame[column] = frame[column].astype("Int64")
        return frame

    @classmethod
    @unsafe
    def from_otlp(cls, export: Mapping[str, Any] | Sequence[Any] | str) -> Trace:
        """The trace in an OTLP JSON export (parsed, or as JSON text; files: ``load_traces``)."""
        return _single(_spans_from_otlp_payload(_parsed(export, "Trace.from_otlp")), "from_otlp")

    @classmethod
    @unsafe
    def from_openinference(cls, spans: Mapping[str, Any] | Sequence[Any] | str) -> Trace:
        """The trace in OpenInference span records (Phoenix-style JSON) or an OTLP export."""
        payload = _parsed(spans, "Trace.from_openinference")
        return _single(_spans_from_payload(payload, "auto"), "from_openinference")

    @classmethod
    @unsafe
    def from_spans(cls, spans: Iterable[Mapping[str, Any] | Span]) -> Trace:
        """A trace from spans in our canonical shape (dicts with Span's fields, or Spans)."""
        built = [
            s if isinstance(s, Span) else _span_from_canonical(s, i) for i, s in enumerate(spans)
        ]
        return _single(built, "from_spans")


def _describe_cycle(trace_id: str, by_id: Mapping[str, Span], reached: Mapping[str, int]) -> str:
    start = next(s for s in by_id.values() if s.span_id not in reached)
    path: list[Span] = []
    seen: dict[str, int] = {}
    current: Span | None = start
    while current is not None and current.span_id not in seen:
        seen[current.span_id] = len(path)
        path.append(current)
        current = by_id.get(current.parent_id) if current.parent_id else None
    loop = path[seen[current.span_id] :] if current is not None else path
    loop.append(loop[0])
    chain = " -> ".join(f"{s.name!r} (id {s.span_id})" for s in loop)
    return (
        f"trace {trace_id}: spans form a parent cycle, so the trace has no root: {chain} "
        f"(each arrow points to the parent); fix the parent id of one of them"
    )


def _group(spans: list[Span]) -> list[Trace]:
    by_trace: dict[str, list[Span]] = {}
    for span in spans:
        by_trace.setdefault(span.trace_id, []).append(span)
    return [Trace(_link_tool_calls(group), trace_id=tid) for tid, group in by_trace.items()]


def _single(spans: list[Span], method: str) -> Trace:
    traces = _group(spans)
    if not traces:
        raise TraceError(f"Trace.{method}: no spans found")
    if len(traces) > 1:
        ids = ", ".join(t.trace_id for t in traces[:5])
        raise TraceError(
            f"Trace.{method}: the input holds {len(traces)} traces ({ids}); "
            f"use rubriclab.load_traces to get them all"
        )
    return traces[0]
