"""The offline demo: the seed notebook's two workflows and the lesson's support-reply rubric.

``rubriclab demo`` runs all three on the mock judge (or any judge), prints the summaries and
writes a self-contained HTML report. The data here is also what the notebooks and tests use.
"""

from __future__ import annotations

import sys
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

import pandas as pd

from .judges import get_judge
from .rubric import Rubric

if TYPE_CHECKING:
    from .result import EvalResult

__all__ = [
    "LESSON_EXAMPLES",
    "SUMMARY_PROMPTS",
    "car_damage_frame",
    "demo_image",
    "lesson_verdicts",
    "run_demo",
    "summary_frame",
    "support_frame",
    "support_rubric",
]

# The seed notebook's ten summarisation prompts. (In the seed, a missing comma joins the recipe
# and the legal clause into one string, leaving nine; here they are ten, as intended.)
SUMMARY_PROMPTS: tuple[str, ...] = (
    "Summarize the following meeting transcript, focusing on the main decisions and action items. "
    "Transcript: 'Alex: OK, team. The primary goal for Q3 is to launch the new feature set, codenamed "
    "'Phoenix'. Sarah, your team will handle the front-end development, and Mike, your team is "
    "responsible for the back-end infrastructure. The deadline for code completion is August 15th. "
    "Marketing, led by Chloe, will begin the promotional campaign on August 1st. All teams must "
    "provide weekly progress reports.'",
    "Provide a one-sentence summary of the following product description. Description: 'The new "
    "Chrono-Max 5000 is a state-of-the-art timepiece featuring a self-winding 25-jewel Swiss "
    "movement, a scratch-resistant sapphire crystal display, and a waterproof titanium case rated "
    "for depths up to 200 meters. It also includes a perpetual calendar, a moon phase indicator, and "
    "a dual-time zone function, all elegantly designed for both formal and casual wear.'",
    "Explain the scientific concept described below in simple terms, suitable for a middle school "
    "student. Concept: 'The theory of plate tectonics describes the large-scale motion of seven "
    "large plates and the movements of a larger number of smaller plates of the Earth's "
    "lithosphere. The movement of the plates results in seismic activity such as earthquakes, and "
    "the formation of geologic features like mountains, volcanoes, and oceanic trenches.'",
    "Condense the following historical event summary into a tweet (280 characters or less). "
    "Summary: 'The Industrial Revolution, which took place from the 18th to 19th centuries, was a "
    "period during which predominantly agrarian, rural societies in Europe and America became "
    "industrial and urban. The iron and textile industries, along with the development of the "
    "steam engine, played central roles in this transformation, which also saw major social and "
    "economic changes, including the rise of factories and a new working class.'",
    "Summarize the plot of the following movie. Plot: 'A young farm boy, who dreams of adventure, "
    "discovers a message from a captured princess. He embarks on a journey with a wise old mentor, "
    "a cocky pilot, and a loyal furry co-pilot to rescue her from the clutches of an evil empire "
    "and its fearsome enforcer. Along the way, he learns about a mystical energy field that grants "
    "him special abilities and ultimately joins a rebellion to restore freedom to the galaxy.'",
    "Generate a brief summary of the key findings from the following research abstract. Abstract: "
    "'Our study investigated the effects of daily meditation on stress and cognitive function in a "
    "cohort of 150 adults. Participants were randomly assigned to either a daily 20-minute guided "
    "meditation group or a control group. After eight weeks, the meditation group showed a "
    "statistically significant reduction in self-reported stress levels and improved performance "
    "on tasks measuring attention and working memory compared to the control group.'",
    "Summarize the main arguments presented in the following opinion piece. Piece: 'The widespread "
    "adoption of remote work represents the most significant shift in the labor market in a "
    "century. While critics point to challenges in collaboration and corporate culture, the "
    "benefits—including increased employee flexibility and satisfaction, reduced operational costs "
    "for companies, and a positive environmental impact from less commuting—far outweigh the "
    "drawbacks. To remain competitive, businesses must embrace this new paradigm.'",
    "Create a short summary of the following financial news report. Report: 'Global markets "
    "experienced a volatile week, with the Tech Index falling by 3.5% due to investor concerns over "
    "rising inflation and potential interest rate hikes by the central bank. In contrast, the "
    "commodities sector saw a surge, with oil prices reaching a two-year high amidst geopolitical "
    "tensions and supply chain disruptions. Analysts advise a cautious approach for the upcoming "
    "quarter.'",
    "Condense the following recipe into three main steps. Recipe: 'To prepare classic spaghetti "
    "carbonara, first cook 400g of spaghetti in salted boiling water until al dente. While the "
    "pasta cooks, fry 150g of diced pancetta in a pan until crisp. In a separate bowl, whisk "
    "together 4 large egg yolks, 50g of grated Pecorino Romano cheese, and a generous amount of "
    "black pepper. Once the pasta is cooked, drain it, reserving some pasta water. Quickly toss the "
    "hot pasta with the egg and cheese mixture, adding the crispy pancetta and a splash of pasta "
    "water to create a creamy sauce. Serve immediately.'",
    "Provide a brief summary of the following legal clause, explaining its main purpose. Clause: "
    "'Force Majeure: Neither party shall be liable for any failure or delay in performing their "
    "obligations under this contract if such failure or delay is due to any cause beyond their "
    "reasonable control, including but not limited to acts of God, war, terrorism, civil unrest, "
    "or significant interruptions in public utilities.'",
)

CAR_PROMPT = (
    "You are an insurance agent specializing in car accident assessments. You will be provided "
    "with a conversation about a car accident and an image of the damaged car. Your task is to "
    "analyze the image and identify the primary type of damage visible. Use the conversation for "
    "context, but prioritize the visual evidence from the image. Provide your assessment including "
    "the primary damage type, the severity of the damage, and a rough estimation of the repair cost."
)

_CAR_ROWS: tuple[tuple[str, str, str], ...] = (
    (
        "bumper",
        "**Primary Damage:** Bumper.\n**Severity:** Moderate. The rear bumper is visibly dented, "
        "scratched, and partially detached from the vehicle's body.\n**Estimated Cost:** The repair "
        "cost is estimated to be between $500 and $1,500. This includes the cost of either repairing "
        "the existing bumper or replacing it, as well as painting to match the vehicle's color.",
        "**Damage Type:** Bumper\n**Severity:** Moderate\n**Estimated Cost:** $600 - $1,800. The "
        "bumper is visibly damaged and will likely need replacement and painting.",
    ),
    (
        "engine_compartment",
        "**Primary Damage:** Engine Compartment.\n**Severity:** Severe. The image shows a "
        "catastrophic front-end collision where the hood is completely buckled and the underlying "
        "engine components are exposed and likely damaged.\n**Estimated Cost:** The repair costs are "
        "expected to be substantial, likely ranging from $5,000 to over $10,000. Given the severity, "
        "the vehicle may be declared a total loss by the insurance company.",
        "**Damage Type:** Engine Compartment\n**Severity:** Severe\n**Estimated Cost:** Potentially "
        "over $10,000. The damage is extensive and appears to affect the engine. This could be a "
        "total loss.",
    ),
    (
        "hood",
        "**Primary Damage:** Hood.\n**Severity:** Moderate to Severe. The hood is significantly "
        "crumpled and bent upwards, indicating a forceful front-end impact.\n**Estimated Cost:** The "
        "cost for replacing and painting the hood is estimated to be between $1,000 and $2,500. This "
        "does not include potential underlying damage to the radiator, grille, or engine compartment "
        "which would increase the cost.",
        "**Damage Type:** Hood\n**Severity:** Moderate\n**Estimated Cost:** $1,200 - $3,000. This "
        "includes a new hood, paint, and labor. There may be additional costs for hidden damage.",
    ),
    (
        "lateral",
        "**Primary Damage:** Lateral.\n**Severity:** Severe. There is extensive damage along the "
        "driver's side of the vehicle, with both the front and rear doors significantly crushed "
        "inwards.\n**Estimated Cost:** The estimated repair cost is between $4,000 and $8,000. This "
        "type of damage often involves replacing multiple door panels, repainting, and potentially "
        "complex and costly repairs to the vehicle's frame and B-pillar.",
        "**Damage Type:** Lateral\n**Severity:** Severe\n**Estimated Cost:** $4,500 - $9,000. The "
        "damage spans two doors and may have affected the vehicle's frame, requiring significant "
        "repair work.",
    ),
    (
        "windshield",
        "**Primary Damage:** Windshield.\n**Severity:** Minor to Moderate. A large crack is visible "
        "running across the windshield.\n**Estimated Cost:** The replacement cost is estimated to be "
        "between $400 and $1,200. The final price will depend on the make and model of the vehicle "
        "and if it is equipped with Advanced Driver-Assistance Systems (ADAS) that require "
        "recalibration after the windshield is replaced.",
        "**Damage Type:** Windshield\n**Severity:** Minor\n**Estimated Cost:** $350 - $900. The cost "
        "depends on the vehicle model and whether recalibration of safety features is needed.",
    ),
)

SUPPORT_POLICY = (
    "Refunds: full refund within 30 days of delivery for unused items; opened items get store "
    "credit only. Shipping: standard delivery takes 3-5 business days; express (1-2 business days) "
    "costs $12. Damaged on arrival: we replace the item free of charge if the customer reports it "
    "within 7 days with a photo."
)

_SUPPORT_ROWS: tuple[tuple[str, str], ...] = (
    (
        "My blender arrived yesterday with a cracked jug. What can you do, and how fast?",
        "I'm sorry the jug arrived cracked! Please reply with a photo within 7 days of delivery and "
        "we'll send a replacement free of charge. Standard delivery takes 3-5 business days, or "
        "express (1-2 business days) for $12.",
    ),
    (
        "Can I return the headphones I opened last week for a refund?",
        "Of course! We'll refund you in full right away, no questions asked.",
    ),
    (
        "How long does standard shipping take?",
        "Standard shipping takes 3-5 business days.",
    ),
    (
        "I bought a lamp 45 days ago and never used it. Can I still get my money back?",
        "Thanks for reaching out. Our full-refund window is 30 days from delivery, so at 45 days a "
        "refund is no longer possible. I'm sorry I can't offer more here; if anything else comes up, "
        "I'm happy to help.",
    ),
    (
        "The kettle I got is dented. Also, do you ship express?",
        "ok send pic",
    ),
    (
        "Is store credit the only option for an opened item?",
        "Yes. Opened items are eligible for store credit only, while unused items can be fully "
        "refunded within 30 days of delivery. Our team would be glad to set up the credit for you "
        "today, and we appreciate your patience while we sort this out for you. We value your "
        "business enormously and hope to keep serving you for many years to come.",
    ),
)

#: the lesson's three worked examples (seed 003), as levels per criterion
LESSON_EXAMPLES: dict[str, dict[str, int]] = {
    "accurate_but_incomplete": {"accuracy": 3, "completeness": 2, "tone": 3, "conciseness": 1},
    "polite_but_wrong": {"accuracy": 1, "completeness": 3, "tone": 3, "conciseness": 3},
    "average_everywhere": {"accuracy": 2, "completeness": 2, "tone": 2, "conciseness": 2},
}


def support_rubric() -> Rubric:
    """The lesson's support-reply rubric: four weighted criteria, accuracy critical at 2, pass 70."""
    return Rubric.analytic(
        {
            "accuracy": {
                "weight": 0.4,
                "critical": 2,
                "description": "facts checked against the policy in the context",
                "levels": {
                    1: "contains a factual error or a promise not supported by the policy",
                    2: "all facts correct, but one is vague or imprecise",
                    3: "all facts correct and precise",
                },
            },
            "completeness": {
                "weight": 0.3,
                "levels": {
                    1: "misses the main question",
                    2: "answers the main question, misses a secondary part",
                    3: "answers every part of the question",
                },
            },
            "tone": {
                "weight": 0.2,
                "levels": {
                    1: "rude, cold, or overly casual",
                    2: "polite but stiff or generic",
                    3: "warm, clear, and professional",
                },
            },
            "conciseness": {
                "weight": 0.1,
                "levels": {
                    1: "much longer than needed or padded",
                    2: "slightly long",
                    3: "says what is needed, no more",
                },
            },
        },
        pass_mark=0.7,
        name="support_reply",
    )


def demo_image(name: str) -> str:
    """Path of one of the shipped car-damage pictures (bumper, engine_compartment, ...)."""
    path = resources.files("rubriclab").joinpath("demo_images").joinpath(f"{name}.png")
    return str(path)


def summary_frame() -> pd.DataFrame:
    return pd.DataFrame({"prompt": list(SUMMARY_PROMPTS)})


def car_damage_frame() -> pd.DataFrame:
    """The seed's five car-damage rows, with local pictures instead of bucket URIs."""
    return pd.DataFrame(
        {
            "prompt": [CAR_PROMPT] * len(_CAR_ROWS),
            "image": [demo_image(name) for name, _, _ in _CAR_ROWS],
            "baseline_model_response": [base for _, _, base in _CAR_ROWS],
            "response": [resp for _, resp, _ in _CAR_ROWS],
        }
    )


def support_frame() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "prompt": [q for q, _ in _SUPPORT_ROWS],
            "context": [SUPPORT_POLICY] * len(_SUPPORT_ROWS),
            "response": [r for _, r in _SUPPORT_ROWS],
        }
    )


def lesson_verdicts() -> list[tuple[str, float, str]]:
    """The lesson's worked examples scored by the library: (name, percent, verdict)."""
    rubric = support_rubric()
    out = []
    for name, levels in LESSON_EXAMPLES.items():
        s = rubric.score(levels)
        out.append((name, s.percent, s.verdict or ""))
    return out


def _print_summary(title: str, result: EvalResult, out: TextIO) -> None:
    print("\n" + result.summary_text(title), file=out)


def run_demo(
    judge: Any = "mock",
    *,
    report: str | Path | None = "rubriclab-demo.html",
    out: TextIO | None = None,
    progress: bool = True,
) -> dict[str, EvalResult]:
    """Run the three workflows, print their summaries, and write an HTML report."""
    from . import metrics as m
    from .evaluation import evaluate

    stream = out or sys.stdout
    judge_obj = get_judge(judge)
    if judge_obj.is_mock:
        print(
            "Judge: MOCK (offline, deterministic; its verdicts are not real judgments)", file=stream
        )
    else:
        print(f"Judge: {judge_obj.describe()}", file=stream)

    print(
        "\n== The lesson's worked examples (support-reply rubric, scored in code) ==", file=stream
    )
    for name, percent, verdict in lesson_verdicts():
        print(f"{name:<26} {percent:>5.1f}% {verdict}", file=stream)

    results: dict[str, EvalResult] = {}
    results["text_quality"] = evaluate(
        summary_frame(), [m.TEXT_QUALITY], judge=judge_obj, model=judge_obj
    )
    _print_summary(
        "Summaries: generated text-quality checklists (seed, custom metric)",
        results["text_quality"],
        stream,
    )
    results["car_damage"] = evaluate(
        car_damage_frame(), [m.pairwise.MULTIMODAL_UNDERSTANDING], judge=judge_obj
    )
    _print_summary(
        "Car damage: multimodal pairwise, candidate vs baseline (seed)",
        results["car_damage"],
        stream,
    )
    results["support"] = evaluate(
        support_frame(),
        [m.RubricMetric(name="support", rubric=support_rubric())],
        judge=judge_obj,
    )
    _print_summary(
        "Support replies: weighted analytic rubric with a critical criterion (lesson)",
        results["support"],
        stream,
    )
    if report is not None:
        path = write_report(results, Path(report))
        print(f"\nReport written to {path}", file=stream)
    return results


def write_report(results: dict[str, EvalResult], path: Path) -> Path:
    """A self-contained HTML page with every result's static view (no scripts, no network)."""
    from .widgets.report import write_report_html

    return write_report_html(path, results, "rubriclab demo")
