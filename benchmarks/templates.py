"""What the allowlist sandbox costs per render, on the prompts rubriclab really renders.

Usage: .venv/bin/python benchmarks/templates.py [--repeat 2000] [--baseline OLD_TEMPLATES_PY]

Renders each built-in prompt with the variables critique and generation bind (a case, a
6-question checklist or a 3-criterion analytic rubric), and the two seed 002 templates over the
example agent trace (the worked example, and the default span prompt with ``tojson``), and prints
microseconds per render. ``--baseline`` loads another copy of ``rubriclab/templates.py`` (e.g. the
one before the allowlist sandbox: ``git show main~N:src/rubriclab/templates.py > /tmp/old.py``;
it must import nothing relative) and prints its figures beside ours, with the ratio.
Timings are wall-clock on whatever machine runs this: on a shared machine they are noisy.
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rubriclab import Rubric
from rubriclab import templates as current
from rubriclab.data import Case
from rubriclab.metrics.template import DEFAULT_PROMPT_TEMPLATE
from rubriclab.traces import example_trace
from workload import QUESTIONS

WORKED_EXAMPLE = (
    "Final answer: {{ input_trace.roots()[0].output_messages[-1].text }}\n"
    "{% for call in input_trace.tool_calls() %}- {{ call.name }}: "
    "{{ call.result | tojson(max_chars=400) }}\n{% endfor %}"
)


def _cases() -> dict[str, dict[str, Any]]:
    case = Case(
        id="0",
        index=0,
        prompt="Summarise the meeting transcript in three sentences. " * 8,
        response="The team agreed on the August 15th code freeze; Chloe leads marketing. " * 4,
        reference="Code complete by August 15th; Chloe runs the campaign from August 1st.",
    )
    checklist = Rubric.checklist(QUESTIONS)
    analytic = Rubric.from_dict(
        {
            "criteria": {
                "accuracy": {"levels": {1: "wrong", 2: "vague", 3: "precise"}},
                "tone": {"levels": {1: "rude", 2: "stiff", 3: "warm"}},
                "brevity": {"levels": {1: "rambling", 2: "long", 3: "tight"}},
            }
        }
    )
    trace = example_trace()

    def crit(rubric: Rubric, **more: Any) -> dict[str, Any]:
        base = {**case.variables(), "criteria": rubric.criteria, "rubric": rubric}
        return {**base, "media_description": None, **more}

    return {
        "critique_checklist": crit(checklist),
        "critique_analytic": crit(analytic),
        "critique_pairwise": crit(
            checklist, response_a=case.response, response_b="No.", checklist=True
        ),
        "generate_checklist": {
            **case.variables(),
            "focus": "Whether the response follows every instruction.",
            "focus_name": "instruction following",
            "max_items": 8,
            "describe_media": False,
        },
        "seed 002 worked example": {"input_trace": trace},
        "seed 002 default span prompt": {"input_span": trace.walk()[1]},
    }


def _sources() -> dict[str, str]:
    out = {
        name: (current.PROMPTS_DIR / f"{name}.jinja").read_text()
        for name in current.builtin_names()
    }
    out["seed 002 worked example"] = WORKED_EXAMPLE
    out["seed 002 default span prompt"] = DEFAULT_PROMPT_TEMPLATE
    return out


def _time(
    renders: list[Callable[[dict[str, Any]], str]], variables: dict[str, Any], repeat: int
) -> list[float]:
    """Median microseconds per render of each renderer, over 7 interleaved rounds.

    Rounds alternate between the renderers so that load from other processes hits both alike.
    """
    for render in renders:
        render(variables)
    rounds: list[list[float]] = [[] for _ in renders]
    per = max(repeat // 7, 1)
    for _ in range(7):
        for i, render in enumerate(renders):
            start = time.perf_counter()
            for _ in range(per):
                render(variables)
            rounds[i].append((time.perf_counter() - start) / per * 1e6)
    return [statistics.median(r) for r in rounds]


def _load(path: Path) -> Any:
    spec = importlib.util.spec_from_file_location("baseline_templates", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=2000)
    parser.add_argument("--baseline", type=Path, help="another templates.py to compare with")
    args = parser.parse_args()
    variables = _cases()
    sources = _sources()
    baseline = _load(args.baseline) if args.baseline else None
    print(
        f"{'template':32} {'sandbox µs':>11}"
        + (f" {'baseline µs':>12} {'ratio':>6}" if baseline else "")
    )
    for name, source in sources.items():
        ours = current.Template(source, name=name)
        renders = [ours.render]
        if baseline is not None:
            theirs = baseline.Template(source, name=name)
            assert theirs.render(variables[name]) == ours.render(variables[name]), name
            renders.append(theirs.render)
        times = _time(renders, variables[name], args.repeat)
        line = f"{name:32} {times[0]:11.1f}"
        if baseline is not None:
            line += f" {times[1]:12.1f} {times[0] / times[1]:6.2f}"
        print(line)
    print("(every baseline render is checked to produce the same text as ours)" if baseline else "")


if __name__ == "__main__":
    main()
