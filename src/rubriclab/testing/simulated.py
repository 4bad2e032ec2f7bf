"""A simulated judge for offline tests of alignment: it reacts to what its prompt says.

It is not a language model and says so in every answer (``"simulated_judge": true`` and a
rationale starting "Simulated judge"). It reads rubriclab's own critique prompts (checklist,
analytic and pairwise) and answers each criterion by a rule it finds in the wording:

- ``at least N words`` / ``more than N words`` / ``at most N words`` / ``fewer than N words``;
- ``mentions 'word'`` / ``contains 'word'`` (quoted), ``does not mention 'word'``;
- a criterion with levels takes the highest level whose descriptor's rule holds.

When the wording states no such rule (a vague criterion), it falls back to a built-in rule that
is usually wrong: a length bias (YES above :data:`VAGUE_WORDS` words; levels rise with length).
When the prompt carries an examples block (``fewshot``), it follows, per criterion, the example
whose text is nearest to the response (word-set Jaccard similarity at least
:data:`EXAMPLE_SIMILARITY`), as a judge copying a close precedent would.

In optimizer mode (a prompt from ``alignment``'s rewrite step, recognised by its
``<disagreements>`` block) it proposes rewritten criteria built only from the disagreements it
is shown: a word-count threshold that separates people's YES from NO, and a keyword that
people's YES cases share and their NO cases lack.

Use it as the fake server's responder: ``FakeJudgeServer(simulated_responder)``, or
``python -m rubriclab.testing --simulated``.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = [
    "EXAMPLE_SIMILARITY",
    "SIMULATED_NOTE",
    "VAGUE_WORDS",
    "rule_of",
    "similarity",
    "simulated_answer",
    "simulated_responder",
]

#: the built-in (wrong) rule for a vague yes/no criterion: YES above this many words
VAGUE_WORDS = 40
#: follow the nearest example when its word-set similarity to the response is at least this
EXAMPLE_SIMILARITY = 0.5
SIMULATED_NOTE = "Simulated judge (rule-based, no language model was called)"

_WORD = re.compile(r"[A-Za-z0-9']+")
_QUOTED = r"['\"\u2018\u201c]([^'\"\u2019\u201d]{1,60})['\"\u2019\u201d]"
_RULES: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"\bat least (\d+) words", re.I), "min"),
    (re.compile(r"\b(?:more|longer) than (\d+) words", re.I), "gt"),
    (re.compile(r"\b(?:at most|no more than) (\d+) words", re.I), "max"),
    (re.compile(r"\b(?:fewer|less|shorter) than (\d+) words", re.I), "lt"),
    (re.compile(r"\b(?:does not|doesn't|never) (?:mention|contain|use)s? " + _QUOTED, re.I), "not"),
    (re.compile(r"\b(?:mention|contain|use|include)s? (?:the word )?" + _QUOTED, re.I), "has"),
]
_STOP = frozenset(
    [
        "the",
        "a",
        "an",
        "and",
        "or",
        "of",
        "to",
        "in",
        "on",
        "for",
        "with",
        "that",
        "this",
        "is",
        "are",
        "was",
        "be",
        "it",
        "as",
        "at",
        "by",
        "from",
        "your",
        "you",
        "our",
        "we",
        "they",
        "their",
        "there",
        "which",
        "what",
        "when",
        "have",
        "has",
        "not",
        "but",
        "can",
        "will",
        "would",
        "should",
    ]
)


def words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def similarity(a: str, b: str) -> float:
    """Jaccard similarity of the two texts' word sets (0 to 1)."""
    sa, sb = set(words(a)), set(words(b))
    if not sa and not sb:
        return 1.0
    return len(sa & sb) / len(sa | sb)


def rule_of(text: str) -> tuple[str, Any] | None:
    """The rule a criterion's wording states, as (kind, value); None when it states none."""
    for pattern, kind in _RULES:
        m = pattern.search(text)
        if m:
            value = m.group(1)
            return (kind, int(value)) if value.isdigit() else (kind, value.lower())
    return None


def _holds(rule: tuple[str, Any], response: str) -> bool:
    kind, value = rule
    n = len(words(response))
    low = response.lower()
    if kind == "has":
        return str(value) in low
    if kind == "not":
        return str(value) not in low
    limit = int(value)
    return {"min": n >= limit, "gt": n > limit, "max": n <= limit, "lt": n < limit}[kind]


# -- reading rubriclab's prompts -------------------------------------------------------------------


def _between(text: str, start: str, end: str, last: bool = True) -> str | None:
    i = text.rfind(start) if last else text.find(start)
    if i < 0:
        return None
    j = text.find(end, i + len(start))
    if j < 0:
        return None
    return text[i + len(start) : j]


def _examples(text: str) -> list[dict[str, Any]]:
    block = _between(text, "<examples>\n", "\n</examples>", last=False)
    if block is None:
        return []
    try:
        data = json.loads(block)
    except ValueError:
        return []
    return [dict(e) for e in data if isinstance(e, Mapping)] if isinstance(data, list) else []


def _checklist_criteria(text: str) -> list[tuple[str, str, list[tuple[int, str]]]]:
    block = _between(text, "<questions>\n", "</questions>") or ""
    out = []
    for line in block.splitlines():
        name, sep, question = line.partition(": ")
        if sep:
            out.append((name.strip(), question.strip(), [(0, "NO"), (1, "YES")]))
    return out


_LEVEL_LINE = re.compile(r"^\s+(-?\d+) = (.*)$")


def _level_criteria(block: str) -> list[tuple[str, str, list[tuple[int, str]]]]:
    """``name (description):`` / ``name: question`` lines, each followed by ``  n = text``."""
    out: list[tuple[str, str, list[tuple[int, str]]]] = []
    for line in block.splitlines():
        m = _LEVEL_LINE.match(line)
        if m and out:
            out[-1][2].append((int(m.group(1)), m.group(2)))
            continue
        if not line.strip() or line.startswith(" "):
            continue
        head = line.rstrip()
        if head.endswith(":") and " (" in head:  # analytic: name (description):
            name, _, desc = head[:-1].partition(" (")
            out.append((name, desc[:-1] if desc.endswith(")") else desc, []))
        elif head.endswith(":"):
            out.append((head[:-1], "", []))
        else:
            name, sep, question = head.partition(": ")
            if sep:
                out.append((name, question, []))
    return out


def _level_for(question: str, levels: Sequence[tuple[int, str]], response: str) -> tuple[int, str]:
    """The level the wording gives ``response`` and why (its rule, or the vague fallback)."""
    scores = sorted(s for s, _ in levels)
    yes_no = scores == [0, 1] and {d for _, d in levels} <= {"NO", "YES", "no", "yes"}
    if yes_no or not levels:
        rule = rule_of(question)
        if rule is None:
            n = len(words(response))
            return int(n > VAGUE_WORDS), f"vague criterion: built-in length rule ({n} words)"
        return int(_holds(rule, response)), f"rule from the wording: {rule[0]} {rule[1]}"
    ruled = [(s, rule_of(d)) for s, d in levels]
    if any(r is not None for _, r in ruled):
        met = [s for s, r in ruled if r is not None and _holds(r, response)]
        return (max(met) if met else min(scores)), "rule from the level descriptors"
    n = len(words(response))
    step = min(len(scores) - 1, n // VAGUE_WORDS)
    return scores[step], f"vague criterion: built-in length rule ({n} words)"


def _nearest(
    examples: Sequence[Mapping[str, Any]], key: str, texts: Sequence[str], name: str
) -> tuple[Any, float] | None:
    """The label the nearest example (by ``texts``) gives criterion ``name``, if close enough."""
    best: tuple[Any, float] | None = None
    for ex in examples:
        given = ex.get(key)
        if not isinstance(given, Mapping) or name not in given:
            continue
        fields = ("response",) if len(texts) == 1 else ("response_A", "response_B")
        sim = sum(
            similarity(str(ex.get(f, "")), t) for f, t in zip(fields, texts, strict=True)
        ) / len(texts)
        if sim >= EXAMPLE_SIMILARITY and (best is None or sim > best[1]):
            best = (given[name], sim)
    return best


def _pointwise(text: str, checklist: bool) -> dict[str, Any]:
    response = _between(text, "<response>\n", "\n</response>") or ""
    if checklist:
        criteria = _checklist_criteria(text)
    else:
        criteria = _level_criteria(_between(text, "Rubric:\n", "Answer with JSON only") or "")
    examples = _examples(text)
    entries: dict[str, Any] = {}
    for name, question, levels in criteria:
        level, why = _level_for(question, levels, response)
        near = _nearest(examples, "people_gave", [response], name)
        if near is not None:
            shown, sim = near
            level = 1 if shown == "YES" else 0 if shown == "NO" else int(shown)
            why = f"followed the nearest example (similarity {sim:.2f})"
        if checklist:
            entries[name] = {"reasoning": why, "verdict": "YES" if level == 1 else "NO"}
        else:
            entries[name] = {"evidence": why, "level": level}
    key = "verdicts" if checklist else "criteria"
    return {key: entries, "rationale": SIMULATED_NOTE, "simulated_judge": True}


def _pairwise(text: str) -> dict[str, Any]:
    a = _between(text, "<response_A>\n", "\n</response_A>") or ""
    b = _between(text, "<response_B>\n", "\n</response_B>") or ""
    block = _between(text, "Criteria:\n", "Answer with JSON only") or ""
    examples = _examples(text)
    checklist = '"a": YES or NO' in text or '("a" and "b": YES or NO)' in text
    entries: dict[str, Any] = {}
    total = 0
    for name, question, levels in _level_criteria(block):
        if checklist:
            levels = []
        la, why = _level_for(question, levels, a)
        lb, _ = _level_for(question, levels, b)
        winner = "A" if la > lb else "B" if lb > la else "tie"
        near = _nearest(examples, "people_said_winner", [a, b], name)
        if near is not None:
            winner, sim = str(near[0]), near[1]
            why = f"followed the nearest example (similarity {sim:.2f})"
        total += {"A": 1, "B": -1}.get(winner, 0)
        shown_a: Any = ("YES" if la else "NO") if checklist else la
        shown_b: Any = ("YES" if lb else "NO") if checklist else lb
        entries[name] = {"evidence": why, "a": shown_a, "b": shown_b, "winner": winner}
    choice = "A better" if total > 0 else "B better" if total < 0 else "tie"
    return {
        "criteria": entries,
        "overall": {"reasoning": SIMULATED_NOTE, "choice": choice},
        "simulated_judge": True,
    }


# -- optimizer mode --------------------------------------------------------------------------------


def _optimizer(text: str) -> dict[str, Any]:
    block = _between(text, "<disagreements>\n", "\n</disagreements>", last=False) or "[]"
    try:
        shown = json.loads(block)
    except ValueError:
        shown = []
    yes = [str(d.get("response", "")) for d in shown if _is_yes(d.get("people"))]
    no = [str(d.get("response", "")) for d in shown if _is_no(d.get("people"))]
    for d in shown:  # pairwise: the side people preferred meets the criterion, the other not
        if "baseline" in d and d.get("people") in ("candidate", "baseline"):
            won, lost = str(d.get("response", "")), str(d["baseline"])
            if d["people"] == "baseline":
                won, lost = lost, won
            yes.append(won)
            no.append(lost)
    candidates: list[dict[str, Any]] = []
    threshold = _word_threshold(yes, no)
    if threshold is not None:
        candidates.append({"question": f"Does the response have at least {threshold} words?"})
    keyword = _keyword(yes, no)
    if keyword is not None:
        candidates.append({"question": f"Does the response mention '{keyword}'?"})
    return {"candidates": candidates, "rationale": SIMULATED_NOTE, "simulated_judge": True}


def _is_yes(value: Any) -> bool:
    return str(value).strip().upper() in ("YES", "1", "PASS")


def _is_no(value: Any) -> bool:
    return str(value).strip().upper() in ("NO", "0", "FAIL")


def _word_threshold(yes: Sequence[str], no: Sequence[str]) -> int | None:
    """The word count that best separates the YES texts (at or above) from the NO texts."""
    counts = sorted({len(words(t)) for t in [*yes, *no]})
    if not counts:
        return None
    best: tuple[int, int] | None = None
    for n in counts:
        right = sum(len(words(t)) >= n for t in yes) + sum(len(words(t)) < n for t in no)
        if best is None or right > best[0]:
            best = (right, n)
    if no and not yes:  # only too-generous answers shown: just above the longest NO
        return max(len(words(t)) for t in no) + 1
    assert best is not None
    return best[1]


def _keyword(yes: Sequence[str], no: Sequence[str]) -> str | None:
    """A word (5+ letters, not a stop word) most YES texts share and few NO texts have."""
    if not yes:
        return None
    in_yes = Counter(w for t in yes for w in set(words(t)) if len(w) >= 5 and w not in _STOP)
    in_no = Counter(w for t in no for w in set(words(t)))
    scored = [
        (in_yes[w] / len(yes) - (in_no[w] / len(no) if no else 0.0), w)
        for w in in_yes
        if in_yes[w] / len(yes) >= 0.8
    ]
    scored = [(s, w) for s, w in scored if s >= 0.6]
    if not scored:
        return None
    return max(scored, key=lambda sw: (sw[0], sw[1]))[1]


# -- entry points ----------------------------------------------------------------------------------


def _user_text(messages: Any) -> str:
    parts: list[str] = []
    for message in messages if isinstance(messages, list) else []:
        content = message.get("content") if isinstance(message, Mapping) else None
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):
            parts.extend(
                str(p.get("text", ""))
                for p in content
                if isinstance(p, Mapping) and p.get("type") == "text"
            )
    return "\n".join(parts)


def simulated_answer(text: str) -> dict[str, Any]:
    """The simulated judge's answer (as JSON data) to one prompt's text."""
    if "<disagreements>" in text:
        return _optimizer(text)
    if "<response_A>" in text:
        return _pairwise(text)
    if "<questions>" in text:
        return _pointwise(text, checklist=True)
    if "Rubric:\n" in text:
        return _pointwise(text, checklist=False)
    return {
        "answer": f"{SIMULATED_NOTE}: this prompt is not one it knows.",
        "simulated_judge": True,
    }


def simulated_responder(body: dict[str, Any]) -> str:
    """A ``FakeJudgeServer`` responder: the simulated judge's answer to a chat request."""
    return json.dumps(simulated_answer(_user_text(body.get("messages"))))


# -- a labelled data set the simulated judge can be aligned on ----------------------------------

_POLITE = "Thank you so much for reaching out, and we are sorry for the trouble with your order."
_CURT = "Order noted."
_REFUND = "We will send a full refund to your card within five business days."
_CREDIT = "We can offer store credit or a replacement item instead."
_FILLERS = (
    "Our warehouse team checked the parcel scan history this morning.",
    "The courier confirmed the package left the depot on Tuesday afternoon.",
    "Your account shows two earlier purchases without any reported problem.",
    "Photos of the damaged box help our quality inspectors improve packaging.",
    "Please keep the original receipt until the case is fully closed.",
)
_NAMES = ("Ana", "Ben", "Chloe", "Dev", "Eli", "Fatima", "Gus", "Hana", "Ivo", "Jun")

#: the rules the simulated people follow (the vague rubric never states them)
PEOPLE_RULES = {
    "detail": "YES when the response has at least 25 words",
    "refund": "YES when the response mentions 'refund'",
    "tone": "YES when the response thanks the customer",
    "overall": "pass when at least two of the three are YES",
}


def alignment_demo(n: int = 120, seed: int = 0) -> tuple[Any, Any]:
    """``(data, labels)``: support replies and people's labels for the metric ``"support"``.

    Replies are built from a few scripts (polite or curt, refund or credit, 0-4 detail
    sentences) with a customer name and ticket number varied; people label them by
    :data:`PEOPLE_RULES`. Two reviewers label each row; the second sometimes changes their mind
    (a later label that must win). Use with :func:`alignment_rubrics`.
    """
    import random

    import pandas as pd

    rng = random.Random(seed)
    rows = []
    labels = []
    for i in range(n):
        polite, refund, fill = rng.random() < 0.5, rng.random() < 0.5, rng.randrange(5)
        parts = [f"Dear {rng.choice(_NAMES)}, ticket {rng.randrange(1000, 9999)}."]
        parts.append(_POLITE if polite else _CURT)
        parts.append(_REFUND if refund else _CREDIT)
        parts.extend(_FILLERS[:fill])
        response = " ".join(parts)
        rows.append({"prompt": "My order arrived damaged. What will you do?", "response": response})
        said = {
            "detail": len(words(response)) >= 25,
            "refund": "refund" in response.lower(),
            "tone": "thank you" in response.lower(),
        }
        verdicts: dict[str, str] = {k: "yes" if v else "no" for k, v in said.items()}
        verdicts["overall"] = "pass" if sum(said.values()) >= 2 else "fail"
        when = pd.Timestamp("2026-01-01") + pd.Timedelta(minutes=3 * i)
        second_thoughts = rng.random() < 0.15
        for name, value in verdicts.items():
            given = [("ana", value, 0), ("ben", value, 2)]
            if second_thoughts:  # ben first said the opposite, then changed his mind
                flipped = {"yes": "no", "no": "yes", "pass": "fail", "fail": "pass"}[value]
                given.append(("ben", flipped, 1))
            for reviewer, said_value, minute in given:
                labels.append(
                    {
                        "row": i,
                        "metric": "support",
                        "criterion": name,
                        "value": said_value,
                        "reviewer": reviewer,
                        "time": when + pd.Timedelta(minutes=minute),
                        "comment": "",
                    }
                )
    return pd.DataFrame(rows), pd.DataFrame(labels)


def alignment_rubrics() -> tuple[Any, Any]:
    """``(vague, clear)`` rubrics for :func:`alignment_demo`: the vague one states no rule the
    simulated judge can apply; the clear one states the people's rules, with a pass mark
    (90%) stricter than theirs."""
    from ..rubric import Criterion, Rubric

    vague = Rubric(
        criteria=[
            Criterion.yes_no("Is the response detailed enough?", name="detail"),
            Criterion.yes_no(
                "Does the response resolve the customer's problem well?", name="refund"
            ),
            Criterion.yes_no("Is the tone of the response right?", name="tone"),
        ],
        pass_mark=0.9,
    )
    clear = Rubric(
        criteria=[
            Criterion.yes_no("Does the response have at least 25 words?", name="detail"),
            Criterion.yes_no("Does the response mention 'refund'?", name="refund"),
            Criterion.yes_no("Does the response mention 'thank you'?", name="tone"),
        ],
        pass_mark=0.9,
    )
    return vague, clear
