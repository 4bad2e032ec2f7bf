"""Built-in prompts for the predefined Vertex-style rubric metrics, in our own words.

They speak Vertex's formats (so ``utils.parse_*`` and any user parser read the answers): rubric
generation returns ``{"questions": [...]}`` in a ```json fence, pointwise critique writes one
``<question>`` block per question ending ``Verdict: [[YES]]``/``[[NO]]``, and pairwise critique
writes ``[[Response A Answers:]]`` / ``[[Response B Answers:]]`` sections and a final
``[[SxS Rating: ...]]``. Templates use Vertex's ``{placeholder}`` style with ``{{ }}`` for literal
braces. As in Vertex, Response A is the baseline and Response B the candidate.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["FOCUS", "PromptSet", "generation_prompt", "pairwise_prompt", "pointwise_prompt"]


@dataclass(frozen=True)
class _Focus:
    title: str
    text: str
    max_items: int = 12
    multimodal: bool = False


#: what each predefined metric's rubric checks (no braces in these texts: they are spliced in)
FOCUS: dict[str, _Focus] = {
    "instruction_following": _Focus(
        "instruction following",
        "Split the prompt into the instructions it gives or clearly implies: the task itself, "
        "every constraint (length, format, audience, language, what to include or leave out) "
        "and any order asked for. Write one question per instruction.",
    ),
    "text_quality": _Focus(
        "text quality",
        "Cover these six areas, most important first, with more questions for the first ones: "
        "following the instructions; groundedness and correctness; harmlessness; relevance and "
        "concision; style and format; completeness and detail.",
        max_items=16,
    ),
    "multimodal_understanding": _Focus(
        "multimodal understanding",
        "Check that the response reads the attached image(s) correctly and uses them as the "
        "prompt asks: the objects, damage, text or details that are really visible, conclusions "
        "that what is visible supports, and the instructions of the prompt.",
        multimodal=True,
    ),
}

_FENCE = "```"


def generation_prompt(key: str) -> str:
    """The rubric-generation template for one predefined metric (placeholder: ``{prompt}``)."""
    focus = FOCUS[key]
    media = (
        "The prompt comes with one or more images. First describe, in one short paragraph, what "
        'the images show that matters for judging an answer; put it in "description". Base '
        "the questions on what is visible.\n\n"
        if focus.multimodal
        else ""
    )
    shape = (
        '  "description": "What the image shows that matters for judging.",\n'
        if focus.multimodal
        else ""
    )
    return (
        "# Your job\n"
        "Write the rubric for judging answers to the user prompt below. A rubric is a short list "
        "of yes/no questions that any careful reader could answer about a response, where YES "
        "always means the response did the right thing.\n\n"
        f"# What the rubric checks: {focus.title}\n{focus.text}\n\n"
        f"{media}"
        "# How to write the questions\n"
        "- One observable requirement per question, phrased 'Does the response ...?'.\n"
        "- Tie each question to this prompt: its facts, numbers, limits, audience and format. "
        "Keep exact numbers exact.\n"
        "- Ask only about what the prompt states or clearly implies. Do not answer the prompt.\n"
        "- No two questions may test the same thing. Put the most important first. "
        f"Write at most {focus.max_items} questions.\n\n"
        "# Output\n"
        "Reply with the rubric only, as JSON in a fenced block:\n"
        f"{_FENCE}json\n"
        "{{\n"
        f"{shape}"
        '  "questions": ["Does the response ...?", "Does the response ...?"]\n'
        "}}\n"
        f"{_FENCE}\n\n"
        "<user_prompt>\n{prompt}\n</user_prompt>\n"
    )


_BLOCK = (
    "<question>\n"
    "Check: what the question needs, and what the response actually does, in a few sentences.\n"
    "Question: the question, copied exactly\n"
    "Verdict: [[YES]] or [[NO]]\n"
    "</question>\n"
)


def _media_section(multimodal: bool) -> str:
    if not multimodal:
        return ""
    return (
        "The prompt came with image(s), attached to this message. What they show, as described "
        "when the rubric was written:\n{description}\n\n"
    )


def pointwise_prompt(key: str) -> str:
    """Pointwise critique template (placeholders: ``{prompt}``, ``{response}``, ``{rubrics}``)."""
    multimodal = FOCUS[key].multimodal
    return (
        "# Your job\n"
        "Judge one AI response against a rubric of yes/no questions about "
        f"{FOCUS[key].title}. Answer every question, in the order given, with one block each:\n\n"
        f"{_BLOCK}\n"
        "Say YES only when the response fully meets the question; anything missing, wrong or "
        "only partly done is NO. Judge the response as written, not what its author may have "
        "meant. After the last block, write [[Rubric Score: k/n]], where k is the number of YES "
        "verdicts and n the number of questions.\n\n"
        f"{_media_section(multimodal)}"
        "# The user prompt\n{prompt}\n\n"
        "# The response to judge\n<response>\n{response}\n</response>\n\n"
        "# The rubric\n{rubrics}\n"
    )


def pairwise_prompt(key: str) -> str:
    """Pairwise critique template: Response A is ``{baseline_model_response}``, B ``{response}``."""
    multimodal = FOCUS[key].multimodal
    return (
        "# Your job\n"
        "Two AI responses, A and B, answer the same prompt. Judge each against the same rubric "
        f"of yes/no questions about {FOCUS[key].title}, then say which is better. Which "
        "response comes first says nothing about its quality, and neither does its length.\n\n"
        "Write exactly this, in this order:\n"
        "[[Response A Answers:]]\n"
        f"{_BLOCK}"
        "(one block per rubric question, in the order given)\n"
        "[[Rubric Score: k/n]]\n"
        "[[Response B Answers:]]\n"
        "(the same blocks for Response B)\n"
        "[[Rubric Score: k/n]]\n"
        "Then a few sentences comparing the two, and last a single line:\n"
        "[[SxS Rating: X]]\n"
        "where X is one of: A >> B (A is clearly better), A > B (A is slightly better), "
        "A = B (equally good), B > A (B is slightly better), B >> A (B is clearly better).\n\n"
        "Say YES only when a response fully meets the question. k is the number of YES "
        "verdicts, n the number of questions.\n\n"
        f"{_media_section(multimodal)}"
        "# The user prompt\n{prompt}\n\n"
        "# Response A\n<response_a>\n{baseline_model_response}\n</response_a>\n\n"
        "# Response B\n<response_b>\n{response}\n</response_b>\n\n"
        "# The rubric\n{rubrics}\n"
    )


@dataclass(frozen=True)
class PromptSet:
    """The three prompts of one predefined metric."""

    generation: str
    pointwise: str
    pairwise: str

    @classmethod
    def for_metric(cls, key: str) -> PromptSet:
        return cls(generation_prompt(key), pointwise_prompt(key), pairwise_prompt(key))
