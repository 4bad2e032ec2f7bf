"""Ask, parse, re-ask: the one loop every judged step (critique, rubric writing, template
metrics) sends its questions through.

Each :class:`Ask` is one question and how to read its answer. :func:`ask_all` sends every
pending question to the judge at once (the engine bounds concurrency), reads each answer, and
asks again, with the unreadable answer and the reason in the conversation, when the answer
cannot be read. A cut-off answer (``finish_reason == "length"``) is asked again with a larger
token limit (``max_tokens``, or ``max_completion_tokens`` for a judge whose model takes that
instead); a failed call is not re-asked (the engine already retried it). Whatever
happens, the replies and the last error stay on the :class:`Ask`, so the row keeps them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sized
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .judges.base import Request
from .judges.media import image_part
from .parse import ParseError
from .scoring import ScoreError

if TYPE_CHECKING:
    from .data import Case
    from .judges import Judge, Reply

__all__ = ["REASK_MESSAGE", "Ask", "InvalidAnswer", "ask_all", "user_messages"]

REASK_MESSAGE = (
    "Your answer could not be used: {reason}. Answer again with JSON only, in exactly the shape "
    "asked for, with an entry for every id."
)

_CUT_OFF = "judge answer cut off"
_LIMIT_FIELDS = ("max_tokens", "max_completion_tokens")


class InvalidAnswer(Exception):
    """A judge answer that parsed but does not fit what was asked (missing id, bad level...).

    ``answer`` is what was read when the answer is usable but flagged (a pairwise choice
    that contradicts its own criteria): it is asked again, and if the last answer is still
    flagged, the caller gets it on :attr:`Ask.flagged` to report as such.
    """

    def __init__(self, message: str, *, answer: Any = None) -> None:
        super().__init__(message)
        self.answer = answer


@dataclass
class Ask:
    """One judge request and how to read its answer; asked again when the answer is unusable."""

    messages: list[dict[str, Any]]
    response_format: dict[str, Any]
    sample: int
    read: Callable[[str], Any]
    replies: list[Reply] = field(default_factory=list)
    parsed: Any = None
    error: str | None = None
    params: dict[str, Any] = field(default_factory=dict)
    """Extra request fields for the next ask (a larger token limit after a cut-off)."""
    flagged: Any = None
    """The last answer when it was read but flagged (``InvalidAnswer.answer``), else None."""

    @property
    def raw(self) -> str | None:
        """The last answer's text (or the last error body when no answer had text)."""
        texts = [r.text for r in self.replies if r.text is not None]
        return texts[-1] if texts else (self._error_body())

    def _error_body(self) -> str | None:
        for r in reversed(self.replies):
            if r.error is not None and getattr(r.error, "raw", None):
                return str(r.error.raw)
        return None


def user_messages(text: str, case: Case | None = None) -> list[dict[str, Any]]:
    """One user message: the prompt text, with the case's images as content parts."""
    if case is None or not case.media:
        return [{"role": "user", "content": text}]
    parts = [{"type": "text", "text": text}, *(image_part(m.source) for m in case.media)]
    return [{"role": "user", "content": parts}]


async def ask_all(
    asks: Iterable[Ask],
    judge: Judge,
    reask: int,
    desc: str,
    *,
    total: int | None = None,
    done: Callable[[Ask], None] | None = None,
) -> None:
    """Ask every question; re-ask unreadable or cut-off answers up to ``reask`` more times.

    ``asks`` may be lazy (a generator that renders each prompt when the engine asks for the
    next request): the first calls then leave before the rest are built, and each answer is
    read (parsed, validated, scored) as it arrives, while later calls are in flight.
    ``done(ask)`` is called as a question is settled (read, or failed for good); one still
    unreadable after the last re-ask is left to the caller. ``total`` sizes the progress bar.
    """
    taken: list[Ask] = []
    history: dict[int, list[dict[str, Any]]] = {}  # the conversation of a re-asked question
    retry: list[Ask] = []

    def request(ask: Ask) -> Request:
        return Request(
            history.get(id(ask), ask.messages),
            response_format=ask.response_format,
            sample=ask.sample,
            params=ask.params,
        )

    def requests() -> Iterator[Request]:
        for ask in asks:
            taken.append(ask)
            yield request(ask)

    def answered(k: int, reply: Reply) -> None:
        ask = taken[k]
        if _take(ask, reply, judge, history, retry) and done is not None:
            done(ask)

    if total is None and isinstance(asks, Sized):
        total = len(asks)
    await judge.amap(requests(), desc=desc, on_reply=answered, total=total)
    for _ in range(reask):
        pending, retry = retry, []
        if not pending:
            return
        label = f"{desc} (re-asking {len(pending)})"
        replies = await judge.amap([request(a) for a in pending], desc=label)
        for ask, reply in zip(pending, replies, strict=True):
            if _take(ask, reply, judge, history, retry) and done is not None:
                done(ask)


def _take(
    ask: Ask,
    reply: Reply,
    judge: Judge,
    history: dict[int, list[dict[str, Any]]],
    retry: list[Ask],
) -> bool:
    """Record ``reply`` on ``ask``: read (True), failed for good (True), or queued to be
    asked again (False)."""
    ask.replies.append(reply)
    ask.flagged = None  # only the last answer counts
    if reply.error is not None:
        failed = f"judge call failed: {reply.error}"
        cut = ask.error if ask.error and ask.error.startswith(_CUT_OFF) else None
        ask.error = f"{cut}; asking again with a larger max_tokens: {failed}" if cut else failed
        return True  # the engine already retried transport errors; do not re-ask
    if reply.finish_reason == "length":
        # a cut-off answer is never scored, however much of it parses: ask the same
        # question again with room to finish (the cut text stays as the raw output)
        ask.error = _cut_off_message(reply, judge, ask.params)
        larger = _larger_max_tokens(reply, judge, ask.params)
        kept = {k: v for k, v in ask.params.items() if k not in _LIMIT_FIELDS}
        ask.params = {**kept, judge.token_limit_field: larger}  # the field this judge sends
        retry.append(ask)
        return False
    text = reply.text or ""
    try:
        ask.parsed = ask.read(text)
        ask.error = None
        return True
    except (ParseError, InvalidAnswer, ScoreError) as exc:
        reason = exc.args[0] if exc.args else type(exc).__name__
        ask.error = f"unreadable judge answer: {reason}"
        ask.flagged = exc.answer if isinstance(exc, InvalidAnswer) else None
        history[id(ask)] = [
            *history.get(id(ask), ask.messages),
            {"role": "assistant", "content": text},
            {"role": "user", "content": REASK_MESSAGE.format(reason=reason)},
        ]
        retry.append(ask)
        return False


def _limit(judge: Judge, params: Mapping[str, Any]) -> int | None:
    """The output-token limit a request was sent with: its own, else the judge's."""
    for name in _LIMIT_FIELDS:
        value = params.get(name)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return judge.token_limit


def _cut_off_message(reply: Reply, judge: Judge, params: Mapping[str, Any]) -> str:
    limit = _limit(judge, params)
    used = reply.usage.completion_tokens
    name = judge.token_limit_field
    where = f"{name} {limit}" if limit is not None else f"{name} (the endpoint's limit)"
    tokens = f" after {used} tokens" if used else ""
    return (
        f"{_CUT_OFF} at {where}{tokens} (finish_reason 'length'); raw text kept; "
        "raise the judge's max_tokens or shorten what it is asked to write"
    )


def _larger_max_tokens(reply: Reply, judge: Judge, params: Mapping[str, Any]) -> int:
    """Twice the limit the answer hit (at least 1024 more), to re-ask a cut-off answer once."""
    limit = _limit(judge, params) or reply.usage.completion_tokens or 1024
    return int(max(2 * limit, limit + 1024))
