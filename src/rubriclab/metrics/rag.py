"""RAG metrics: is the answer grounded in the retrieved context, relevant to the question, and
did retrieval find what was needed? Judged item by item, with evidence, by prompts of our own.

Each metric reads the row's ``context`` column (one text, or a list of passages, kept as JSON
by the data step) and asks the judge for items, not a bare number: the answer's claims
(``faithfulness``), its statements (``answer_relevance``), every passage
(``context_relevance``, ``context_precision``) or the reference's statements
(``context_recall``). Each item lands in ``{metric}/criteria`` as one entry (the claim as its
question, the verdict as its label, the quoted evidence and the passage number), so the
drill-down shows which claim failed and why. The score is computed here from the items, never
taken from the judge.

A quote is checked: a claim the judge calls SUPPORTED whose evidence is not in the context
(whitespace and case aside) counts as unsupported, labelled so. The passage metrics ask with
one schema property per passage id, so every passage gets a verdict. Anchors: Ragas
(faithfulness, context precision / recall), DeepEval, Phoenix, MLflow's RetrievalGroundedness.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from .. import schemas
from ..ask import Ask, InvalidAnswer, ask_all, user_messages
from ..critique import Outcome
from ..parse import extract_json
from ..templates import TemplateError, load_builtin
from .base import Judged, Rows, judged

if TYPE_CHECKING:
    from ..data import Case
    from ..judges import Judge
    from ..rubric import Rubric

__all__ = [
    "ANSWER_RELEVANCE",
    "CONTEXT_PRECISION",
    "CONTEXT_RECALL",
    "CONTEXT_RELEVANCE",
    "FAITHFULNESS",
    "RAG",
    "RagMetric",
    "context_passages",
]

Aspect = Literal[
    "faithfulness", "answer_relevance", "context_relevance", "context_precision", "context_recall"
]
ASPECTS: tuple[str, ...] = (
    "faithfulness",
    "answer_relevance",
    "context_relevance",
    "context_precision",
    "context_recall",
)
_REASK = 1
_MAX_PASSAGES = 50


@dataclass(frozen=True)
class _Kind:
    """How one aspect asks and reads: its prompt, its items, the good verdict."""

    prompt: str
    items: str  # the answer's key holding the items
    text_key: str  # the item's own text ("claim", "statement"); "" for passages
    noun: str  # "claim", "statement", "passage"
    verdicts: tuple[str, ...]  # allowed, the good one first
    needs: tuple[str, ...]  # case fields that must be there
    quoted: bool  # the good verdict must quote the context
    describe: str


_KINDS: dict[str, _Kind] = {
    "faithfulness": _Kind(
        "rag_faithfulness",
        "claims",
        "claim",
        "claim",
        ("SUPPORTED", "UNSUPPORTED", "CONTRADICTED"),
        ("response", "context"),
        True,
        "share of the answer's claims the retrieved context supports (claim by claim)",
    ),
    "answer_relevance": _Kind(
        "rag_answer_relevance",
        "statements",
        "statement",
        "statement",
        ("RELEVANT", "IRRELEVANT"),
        ("response",),
        False,
        "share of the answer's statements that address the question",
    ),
    "context_relevance": _Kind(
        "rag_context_relevance",
        "passages",
        "",
        "passage",
        ("RELEVANT", "IRRELEVANT"),
        ("context",),
        False,
        "share of the retrieved passages that help answer the question",
    ),
    "context_precision": _Kind(
        "rag_context_relevance",
        "passages",
        "",
        "passage",
        ("RELEVANT", "IRRELEVANT"),
        ("context",),
        False,
        "relevant passages ranked first: average precision over the retrieved order",
    ),
    "context_recall": _Kind(
        "rag_context_recall",
        "statements",
        "statement",
        "statement",
        ("ATTRIBUTED", "NOT_ATTRIBUTED"),
        ("context", "reference"),
        True,
        "share of the reference answer's statements the retrieved context holds",
    ),
}


def context_passages(context: str | None) -> list[str]:
    """A row's context as passages: a JSON list of texts (how a list cell arrives) is split,
    any other text is one passage; empty passages are dropped."""
    if context is None or not context.strip():
        return []
    text = context.strip()
    if text.startswith("["):
        try:
            value = json.loads(text)
        except ValueError:
            value = None
        if isinstance(value, list):
            return [_passage_text(v) for v in value if _passage_text(v).strip()]
    return [context]


def _passage_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping):  # {"text": ..., "source": ...} as retrievers give them
        for key in ("text", "content", "page_content", "passage"):
            if isinstance(value.get(key), str):
                return str(value[key])
    return json.dumps(value, ensure_ascii=False)


@dataclass(frozen=True)
class RagMetric:
    """One RAG aspect judged item by item over the ``context`` column (see the module doc).

    ``pass_mark`` is the score a row needs to pass (faithfulness: 1.0, every claim supported,
    by default; the others 0.5). ``judge`` overrides the run's judge for this metric.
    """

    aspect: Aspect
    name: str = ""
    pass_mark: float | None = None
    judge: Judge | str | None = None
    max_prompt_chars: int = 100_000

    kind: ClassVar[Literal["pointwise"]] = "pointwise"
    #: the items are written per row by the judge: no fixed rubric to show
    rubric: ClassVar[Rubric | None] = None

    def __post_init__(self) -> None:
        if self.aspect not in _KINDS:
            raise ValueError(f"RAG aspect {self.aspect!r} is not one of: {', '.join(ASPECTS)}")
        if not self.name:
            object.__setattr__(self, "name", self.aspect)
        if "/" in self.name:
            raise ValueError(f"metric name {self.name!r} must contain no '/'")
        if self.pass_mark is None:
            object.__setattr__(self, "pass_mark", 1.0 if self.aspect == "faithfulness" else 0.5)
        mark = self.pass_mark
        if isinstance(mark, bool) or not isinstance(mark, int | float) or not 0 <= mark <= 1:
            raise ValueError(f"metric {self.name!r}: pass_mark must be a number in [0, 1]")
        if not 1_000 <= self.max_prompt_chars <= 1_000_000:
            raise ValueError(f"metric {self.name!r}: max_prompt_chars must be 1,000-1,000,000")

    @property
    def description(self) -> str:
        return _KINDS[self.aspect].describe

    def with_options(self, **changes: Any) -> RagMetric:
        """A copy with some fields changed (metrics are immutable so they can be shared)."""
        return replace(self, **changes)

    async def judge_rows(self, rows: Rows) -> Judged:
        """One call per row that has what the aspect needs; the others carry why not."""
        from ..judges import get_judge

        judge = get_judge(self.judge) if self.judge is not None else rows.judge()
        kind = _KINDS[self.aspect]
        outcomes: list[Outcome | None] = [None] * len(rows.cases)
        asks: list[tuple[int, Ask, list[str]]] = []
        for i, case in enumerate(rows.cases):
            passages = context_passages(case.context)
            missing = _missing(case, kind, passages)
            if missing:
                outcomes[i] = Outcome(error=missing)
                continue
            try:
                ask = self._ask(case, kind, passages)
            except TemplateError as exc:
                outcomes[i] = Outcome(error=str(exc))
                continue
            asks.append((i, ask, passages))
        if asks:
            await ask_all([a for _, a, _ in asks], judge, _REASK, desc=f"{self.name}: judging")
        for i, ask, passages in asks:
            outcomes[i] = self._outcome(ask, kind, passages)
        done = [o if o is not None else Outcome(error="not judged") for o in outcomes]
        return judged(self.name, done, [judge])

    # -- asking --------------------------------------------------------------------------------
    def _ask(self, case: Case, kind: _Kind, passages: list[str]) -> Ask:
        variables = {
            "prompt": case.prompt,
            "response": case.response or "",
            "reference": case.reference or "",
            # numbered here, so the template only places text
            "context": "\n".join(
                f'<passage id="{i}">\n{p}\n</passage>' for i, p in enumerate(passages, start=1)
            ),
            "passage_ids": "\n".join(f"p{i}" for i in range(1, len(passages) + 1)),
        }
        text = load_builtin(kind.prompt).render(variables, max_prompt_chars=self.max_prompt_chars)
        schema = _schema(kind, len(passages))
        fmt = schemas.response_format(f"rag_{kind.items}", schema)
        n = len(passages)

        def read(answer: str) -> Any:
            return _read(answer, kind, n)

        return Ask(user_messages(text), fmt, 0, read)

    def _outcome(self, ask: Ask, kind: _Kind, passages: list[str]) -> Outcome:
        out = Outcome()
        out.account(ask.replies)
        out.raw_output = ask.raw
        if ask.error is not None or not isinstance(ask.parsed, _Read):
            out.error = ask.error or "the judge gave no usable answer"
            return out
        items = [_checked(item, kind, passages) for item in ask.parsed.items]
        good = [bool(item["level"]) for item in items]
        out.criteria = items
        out.score = _score(self.aspect, good)
        out.rationale = ask.parsed.rationale
        if not items:
            out.rationale = (f"(no {kind.noun}s found) " + out.rationale).strip()
        assert self.pass_mark is not None
        out.passed = out.score + 1e-9 >= self.pass_mark
        bad = len(good) - sum(good)
        if out.passed:
            out.verdict = "pass"
        elif self.aspect in ("faithfulness", "context_recall", "answer_relevance") and bad:
            label = {"faithfulness": "unsupported", "context_recall": "not in the context"}.get(
                self.aspect, "irrelevant"
            )
            out.verdict = f"fail ({bad} of {len(good)} {kind.noun}s {label})"
        else:
            out.verdict = "fail (score below pass mark)"
        return out


def _missing(case: Case, kind: _Kind, passages: list[str]) -> str | None:
    if case.error:
        return case.error
    if "context" in kind.needs and not passages:
        return "no context in this row (column 'context'): nothing to check against"
    if "context" in kind.needs and len(passages) > _MAX_PASSAGES:
        return f"{len(passages)} passages in this row's context; at most {_MAX_PASSAGES}"
    if "response" in kind.needs and not (case.response or "").strip():
        return "no response in this row (column 'response')"
    if "reference" in kind.needs and not (case.reference or "").strip():
        return "no reference in this row (column 'reference'): context recall needs one"
    return None


def _object(properties: dict[str, Any]) -> dict[str, Any]:
    """A strict JSON-schema object: every property required, nothing else allowed."""
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }


def _schema(kind: _Kind, passages: int) -> dict[str, Any]:
    verdict = {"type": "string", "enum": list(kind.verdicts)}
    rationale = {"type": "string", "description": "overall rationale"}
    if kind.items == "passages":
        per = {
            f"p{i}": _object(
                {
                    "reasoning": {"type": "string"},
                    "evidence": {"type": "string"},
                    "verdict": verdict,
                }
            )
            for i in range(1, passages + 1)
        }
        return _object({"passages": _object(per), "rationale": rationale})
    fields: dict[str, Any] = {kind.text_key: {"type": "string"}, "reasoning": {"type": "string"}}
    if kind.quoted:
        fields["passage"] = {"type": "integer", "minimum": 0, "maximum": passages}
        fields["evidence"] = {"type": "string"}
    fields["verdict"] = verdict
    item = _object(fields)
    return _object({kind.items: {"type": "array", "items": item}, "rationale": rationale})


@dataclass(frozen=True)
class _Read:
    items: list[dict[str, Any]]
    rationale: str


def _read(answer: str, kind: _Kind, passages: int) -> _Read:
    """The judge's items, each with a known verdict; the passage metrics need every id."""
    data = extract_json(answer, expect=dict)
    if not isinstance(data, Mapping) or kind.items not in data:
        raise InvalidAnswer(f"the answer has no {kind.items!r}; answer with the JSON shape asked")
    raw = data[kind.items]
    rationale = data.get("rationale")
    rationale = rationale if isinstance(rationale, str) else ""
    entries: list[tuple[str, Any]]
    if kind.items == "passages":
        if not isinstance(raw, Mapping):
            raise InvalidAnswer("'passages' must map each passage id (p1, p2, ...) to a verdict")
        ids = [f"p{i}" for i in range(1, passages + 1)]
        absent = [p for p in ids if p not in raw]
        if absent:
            raise InvalidAnswer(f"no verdict for passage(s) {', '.join(absent)}")
        entries = [(p, raw[p]) for p in ids]
    else:
        if not isinstance(raw, list):
            raise InvalidAnswer(f"{kind.items!r} must be a list")
        entries = [(str(i + 1), e) for i, e in enumerate(raw)]
    items = []
    for key, entry in entries:
        if not isinstance(entry, Mapping):
            raise InvalidAnswer(f"{kind.noun} {key} is not an object")
        verdict = str(entry.get("verdict", "")).strip().upper().replace(" ", "_")
        if verdict not in kind.verdicts:
            raise InvalidAnswer(
                f"{kind.noun} {key}: verdict {entry.get('verdict')!r} is not one of "
                f"{', '.join(kind.verdicts)}"
            )
        text = _str(entry.get(kind.text_key)) if kind.text_key else ""
        if kind.text_key and not text.strip():
            raise InvalidAnswer(f"{kind.noun} {key} has no {kind.text_key!r} text")
        passage = entry.get("passage")
        if kind.items == "passages":
            passage = int(key[1:])
        elif not isinstance(passage, int) or isinstance(passage, bool):
            passage = 0
        items.append(
            {
                "key": key,
                "text": text,
                "verdict": verdict,
                "passage": passage,
                "evidence": _str(entry.get("evidence")),
                "reasoning": _str(entry.get("reasoning")),
            }
        )
    return _Read(items, rationale)


def _checked(item: Mapping[str, Any], kind: _Kind, passages: list[str]) -> dict[str, Any]:
    """One item as a ``criteria`` entry; a quoted verdict whose quote is not in the context
    is not taken (the judge may not invent its evidence)."""
    verdict = str(item["verdict"])
    good = verdict == kind.verdicts[0]
    label = verdict
    evidence = str(item["evidence"])
    passage = int(item["passage"])
    if good and kind.quoted:
        found = _find_quote(evidence, passages, passage)
        if found is None:
            good = False
            label = f"{kind.verdicts[1]} (the quoted evidence is not in the context)"
        else:
            passage = found
    if kind.items == "passages":
        question = _preview(passages[passage - 1]) if 0 < passage <= len(passages) else ""
        name = f"passage {passage}"
    else:
        question = str(item["text"])
        name = f"{kind.noun} {item['key']}"
    return {
        "name": name,
        "question": question,
        "level": 1 if good else 0,
        "label": label,
        "evidence": evidence,
        "reasoning": str(item["reasoning"]),
        "weight": 1.0,
        "critical": None,
        "passed_critical": None,
        "passage": passage or None,
    }


def _norm(text: str) -> str:
    text = text.replace("\u2018", "'").replace("\u2019", "'")
    text = text.replace("\u201c", '"').replace("\u201d", '"')
    return " ".join(re.sub(r"[^\w\s'\"%$.,-]", " ", text.lower()).split()).strip(" .,")


def _find_quote(evidence: str, passages: Sequence[str], hint: int) -> int | None:
    """The passage (1-based) holding the quote, the judge's own first; None when none does.
    A quote elided with "..." counts when each of its parts is in the passage, in order."""
    parts = [_norm(p) for p in re.split(r"\.\.\.|…", evidence)]
    parts = [p for p in parts if p]
    if not parts:
        return None
    order = list(range(1, len(passages) + 1))
    if 0 < hint <= len(passages):
        order.remove(hint)
        order.insert(0, hint)
    for i in order:
        text = _norm(passages[i - 1])
        at = 0
        for part in parts:
            found = text.find(part, at)
            if found < 0:
                break
            at = found + len(part)
        else:
            return i
    return None


def _score(aspect: str, good: Sequence[bool]) -> float:
    if not good:
        # no claims to be wrong about; nothing relevant said; an empty reference is refused
        return 1.0 if aspect == "faithfulness" else 0.0
    if aspect == "context_precision":
        hits = 0
        total = 0.0
        for k, g in enumerate(good, start=1):
            if g:
                hits += 1
                total += hits / k
        return total / hits if hits else 0.0
    value = sum(good) / len(good)
    return round(value, 12) if not math.isnan(value) else value


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ("" if value is None else str(value))


def _preview(text: str, limit: int = 160) -> str:
    one = " ".join(text.split())
    return one if len(one) <= limit else one[: limit - 1] + "…"


# -- the offline mock judge's answers to these prompts -------------------------------------------
# The mock fills any JSON schema, but random claims with random quotes would make every claim
# unsupported. It is taught these prompts instead: a sentence counts as supported when most of
# its words are in one passage, and the quote is that passage's closest sentence. Word overlap,
# not judgement: the answer is labelled a mock like every other mock answer.

_WORD = re.compile(r"[a-z0-9$%]+")
_STOP = frozenset(
    [
        "a",
        "an",
        "the",
        "is",
        "are",
        "was",
        "were",
        "be",
        "to",
        "of",
        "in",
        "on",
        "at",
        "for",
        "and",
        "or",
        "with",
        "by",
        "it",
        "its",
        "this",
        "that",
        "as",
        "from",
        "your",
        "you",
        "we",
        "our",
        "i",
        "what",
        "how",
        "do",
        "does",
        "can",
        "which",
        "who",
        "when",
        "where",
    ]
)


def _words(text: str) -> set[str]:
    """Content words, a plural's s dropped (refunds ~ refund)."""
    return {
        w[:-1] if len(w) > 3 and w.endswith("s") else w
        for w in _WORD.findall(text.lower())
        if w not in _STOP
    }


def _best(sentence: str, passages: Sequence[str]) -> tuple[int, str, float]:
    """The passage (1-based) and its sentence sharing most words with ``sentence``."""
    want = _words(sentence)
    best = (0, "", 0.0)
    for i, passage in enumerate(passages, start=1):
        for part in re.split(r"(?<=[.!?])\s+", passage):
            have = _words(part)
            share = len(want & have) / len(want) if want else 0.0
            if any(w[0].isdigit() and w not in have for w in want):
                share = 0.0  # a number the passage does not say is not supported by it
            if share > best[2]:
                best = (i, part.strip(), share)
    return best


def _mock_rag(messages: Sequence[Mapping[str, Any]], sample: int) -> str | None:
    text = next((str(m.get("content", "")) for m in messages if m.get("role") == "user"), "")
    kind = next((k for k in _MOCK_OPENINGS if text.startswith(_MOCK_OPENINGS[k])), None)
    if kind is None:
        return None
    passages = [p.strip() for p in re.findall(r'<passage id="\d+">\n(.*?)\n</passage>', text, re.S)]
    question = _tag(text, "question")
    if kind == "passages":
        verdicts = {}
        for i, p in enumerate(passages, start=1):
            share = len(_words(question) & _words(p)) / max(1, len(_words(question)))
            good = share >= 0.3
            verdicts[f"p{i}"] = {
                "reasoning": f"(mock) shares {share:.0%} of the question's words",
                "evidence": p.split(".")[0] if good else "",
                "verdict": "RELEVANT" if good else "IRRELEVANT",
            }
        return json.dumps({"passages": verdicts, "rationale": "(mock) word overlap"})
    source = _tag(text, "reference_answer" if kind == "recall" else "answer")
    items = []
    for sentence in [s for s in re.split(r"(?<=[.!?])\s+", source) if s.strip()]:
        if kind == "relevance":
            share = len(_words(question) & _words(sentence)) / max(1, len(_words(question)))
            good = share >= 0.2
            items.append(
                {
                    "statement": sentence,
                    "reasoning": f"(mock) shares {share:.0%} of the question's words",
                    "verdict": "RELEVANT" if good else "IRRELEVANT",
                }
            )
            continue
        at, quote, share = _best(sentence, passages)
        good = share >= 0.6
        yes, no = (
            ("SUPPORTED", "UNSUPPORTED") if kind == "claims" else ("ATTRIBUTED", "NOT_ATTRIBUTED")
        )
        items.append(
            {
                ("claim" if kind == "claims" else "statement"): sentence,
                "reasoning": f"(mock) {share:.0%} of its words are in passage {at}"
                if at
                else "(mock) no passage shares its words",
                "passage": at if good else 0,
                "evidence": quote if good else "",
                "verdict": yes if good else no,
            }
        )
    key = "claims" if kind == "claims" else "statements"
    return json.dumps({key: items, "rationale": "(mock) word overlap, not judgement"})


def _tag(text: str, tag: str) -> str:
    match = re.search(rf"<{tag}>\n?(.*?)\n?</{tag}>", text, re.S)
    return match.group(1).strip() if match else ""


_MOCK_OPENINGS = {
    "claims": "You check whether an AI answer is grounded",
    "relevance": "You check whether an AI answer addresses",
    "passages": "You check the passages a retriever returned",
    "recall": "You check whether the retrieved context holds",
}


def _register_mock() -> None:
    from ..judges.mock import register_responder

    register_responder(_mock_rag)


_register_mock()


FAITHFULNESS = RagMetric("faithfulness")
ANSWER_RELEVANCE = RagMetric("answer_relevance")
CONTEXT_RELEVANCE = RagMetric("context_relevance")
CONTEXT_PRECISION = RagMetric("context_precision")
CONTEXT_RECALL = RagMetric("context_recall")

#: every RAG metric, by name
RAG: dict[str, RagMetric] = {
    m.name: m
    for m in (FAITHFULNESS, ANSWER_RELEVANCE, CONTEXT_RELEVANCE, CONTEXT_PRECISION, CONTEXT_RECALL)
}
