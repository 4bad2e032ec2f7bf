"""The sandboxed renderer: what a template author sees, and what a hostile template cannot do."""

from __future__ import annotations

import dataclasses
import datetime as dt
import gc
import re
import resource
import time
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from rubriclab import templates as T
from rubriclab.templates import (
    PromptLibrary,
    PromptTooLong,
    Template,
    TemplateError,
    TemplateSecurityError,
    format_braces,
    render,
    tojson,
)
from rubriclab.traces import example_trace

FIXTURES = Path(__file__).parent / "fixtures" / "prompts"


# --- objects like the ones users bind: pydantic spans, dataclass traces ---------------


class Message(BaseModel):
    role: str
    text: str


class Span(BaseModel):
    span_id: str
    name: str
    output_messages: list[Message]
    attributes: dict[str, Any] = {}
    started: dt.datetime = dt.datetime(2025, 1, 2, 3, 4, 5)


@dataclasses.dataclass
class Trace:
    trace_id: str
    spans: list[Span]

    def roots(self) -> list[Span]:
        return self.spans[:1]

    def _secret(self) -> str:  # private: templates must not reach it
        return "s3cret"


def make_trace() -> Trace:
    return Trace(
        trace_id="t1",
        spans=[
            Span(
                span_id="s1",
                name="agent",
                output_messages=[
                    Message(role="assistant", text="thinking"),
                    Message(role="assistant", text="Revenue grew 12% in Q3."),
                ],
                attributes={"gen_ai.request.model": "m"},
            ),
            Span(span_id="s2", name="tool", output_messages=[]),
        ],
    )


def refused(source: str, variables: dict[str, Any] | None = None) -> TemplateSecurityError:
    """Render ``source`` and return the sandbox error, checking it came quickly."""
    start = time.perf_counter()
    with pytest.raises(TemplateSecurityError) as info:
        render(source, variables or {"x": "text", "items": [1, 2, 3], "trace": make_trace()})
    assert time.perf_counter() - start < 2.0, "the sandbox must refuse fast"
    return info.value


# --- rendering what users write -----------------------------------------------------


def test_seed_worked_example_reads_the_final_answer_of_a_trace() -> None:
    trace = example_trace()
    out = render(
        "Final answer: {{ input_trace.roots()[0].output_messages[-1].text }}",
        {"input_trace": trace},
    )
    assert out == "Final answer: " + trace.roots()[0].output_messages[-1].text
    assert len(out) > len("Final answer: ") + 10


def test_methods_of_objects_rubriclab_does_not_declare_safe_are_refused() -> None:
    # a user's own dataclass: its fields read fine, its methods are not on the allowlist
    assert render("{{ t.trace_id }}", {"t": make_trace()}) == "t1"
    err = refused("{{ t.roots() }}", {"t": make_trace()})
    assert "attribute 'roots' of 'Trace' object is unsafe" in str(err)


@pytest.mark.parametrize(
    "source",
    [
        "{{ s.model_dump_json(indent=10**9) }}",
        "{{ s.model_dump() }}",
        "{{ s.parse_raw('x') }}",
        "{{ s.parse_file('/etc/hostname') }}",
        "{{ s.model_copy() }}",
        "{{ s.model_fields }}",
        "{{ s.copy() }}",
        "{{ s.json() }}",
        "{{ s | map(attribute='model_dump_json') | list }}",
    ],
)
def test_pydantic_methods_are_unreachable(source: str) -> None:
    err = refused(source.replace("{{ s |", "{{ [s] |"), {"s": make_trace().spans[0]})
    assert "is unsafe" in str(err)


def test_rubric_models_read_as_data() -> None:
    from rubriclab import Rubric

    rubric = Rubric.checklist(["Is it short?", "Is it polite?"])
    source = (
        "{{ rubric.is_checklist }} {% for c in criteria %}{{ c.name }}={{ c.question }}"
        "({{ c.levels | length }}) {% endfor %}{{ rubric.names | join(',') }}"
    )
    out = render(source, {"rubric": rubric, "criteria": rubric.criteria})
    assert out.startswith("True q1=Is it short?")
    for name in ("from_yaml", "save", "to_yaml", "score", "model_dump_json"):
        assert "is unsafe" in str(refused("{{ rubric." + name + " }}", {"rubric": rubric}))


def test_attribute_access_loops_and_allowed_filters_work_on_models() -> None:
    source = (
        "{% for s in trace.spans %}{{ loop.index }}. {{ s.name | upper }} "
        "({{ s.output_messages | length }} msgs){% if not loop.last %}; {% endif %}{% endfor %}"
        " | {{ trace.spans | map(attribute='span_id') | join(',') }}"
        " | {{ trace.spans[0].attributes['gen_ai.request.model'] }}"
        " | {{ trace.spans | selectattr('name', 'equalto', 'tool') | list | length }}"
        " | {{ (3.14159 | round(2)) ~ '' }} | {{ range(3) | list | sum }}"
    )
    out = render(source, {"trace": make_trace()})
    assert out == "1. AGENT (2 msgs); 2. TOOL (0 msgs) | s1,s2 | m | 1 | 3.14 | 3"


def test_default_span_prompt_from_seed_renders_span_as_json() -> None:
    seed_template = "Step (raw canonical span):\n{{ input_span | tojson(2, max_chars=12000) }}\n"
    out = render(seed_template, {"input_span": make_trace().spans[0]})
    assert out.startswith('Step (raw canonical span):\n{\n  "span_id": "s1",')
    assert out.endswith("}")  # like Jinja, a single trailing newline is dropped
    assert '"started": "2025-01-02T03:04:05"' in out
    assert "\n  " in out  # indent 2


def test_prompts_are_text_not_html() -> None:
    out = render("{{ x }} {{ y | tojson }}", {"x": "<b>&'", "y": {"k": "<i>"}})
    assert out == '<b>&\' {"k": "<i>"}'


def test_template_is_compiled_once_and_reports_its_variables() -> None:
    source = "{{ prompt }} / {% for q in questions %}{{ q }}{% endfor %}{% set local = 1 %}"
    first = T.compile_template(source, name="t")
    assert T.compile_template(source, name="t") is first
    assert first.variables == frozenset({"prompt", "questions"})
    assert first.render({"prompt": "p", "questions": ["a", "b"]}) == "p / ab"
    assert first.render({"prompt": "q", "questions": []}) == "q / "


# --- tojson --------------------------------------------------------------------------


def test_tojson_dumps_models_dataclasses_and_dates() -> None:
    text = tojson(make_trace())
    assert text.startswith('{"trace_id": "t1", "spans": [{"span_id": "s1"')
    assert tojson({"when": dt.date(2025, 5, 1), "tags": {"b", "a"}}) == (
        '{"when": "2025-05-01", "tags": ["a", "b"]}'
    )
    assert tojson("é") == '"é"'


def test_tojson_max_chars_cuts_only_that_value_with_a_visible_marker() -> None:
    long = {"text": "x" * 500}
    out = render("before {{ v | tojson(max_chars=40) }} after", {"v": long})
    full = tojson(long)
    assert out.startswith("before " + full[:40] + " …[truncated by tojson(max_chars=40)")
    assert f"{len(full) - 40:,} of {len(full):,} characters omitted]" in out
    assert out.endswith(" after")
    assert tojson(long, max_chars=10_000) == full  # under the cap: untouched


@pytest.mark.parametrize("args", ["10**8", "-1", "'x'"])
def test_tojson_rejects_silly_indents(args: str) -> None:
    with pytest.raises(TemplateError, match="indent must be an integer from 0 to 16"):
        render("{{ v | tojson(" + args + ") }}", {"v": [1]})


# --- errors name the template and the line ---------------------------------------------


def test_undefined_variable_names_template_and_line() -> None:
    source = "\n".join(["# Instructions", "", "", "", "", "Response:", "{{ respons }}"])
    with pytest.raises(TemplateError) as info:
        render(source, {"response": "hi"}, name="checklist_critique")
    assert str(info.value) == "template 'checklist_critique' line 7: 'respons' is undefined"
    assert info.value.template_name == "checklist_critique"
    assert info.value.lineno == 7


def test_missing_attribute_inside_a_loop_names_the_line() -> None:
    with pytest.raises(TemplateError, match=r"line 3: 'int object' has no attribute 'text'"):
        render("a\n{% for i in items %}\n{{ i.text }}{% endfor %}", {"items": [1]})


def test_syntax_error_names_template_and_line() -> None:
    with pytest.raises(TemplateError) as info:
        render("ok\n{% if %}\n", {}, name="mine")
    assert info.value.lineno == 2
    assert str(info.value).startswith("template 'mine' line 2: syntax error:")


def test_runtime_errors_of_any_kind_become_template_errors() -> None:
    with pytest.raises(TemplateError, match="ZeroDivisionError"):
        render("{{ 1 // n }}", {"n": 0})


def test_error_inside_an_included_prompt_names_that_prompt() -> None:
    lib = PromptLibrary(FIXTURES)
    with pytest.raises(TemplateError, match=r"template 'broken_line3' line 3: 'respons'"):
        lib.load("broken_line3").render({})


# --- max_prompt_chars: refused, never truncated -------------------------------------------


def test_prompt_over_the_limit_is_refused_with_size_and_limit() -> None:
    with pytest.raises(PromptTooLong) as info:
        render("{{ x }}", {"x": "y" * 1500}, max_prompt_chars=1000, name="span_judge")
    err = info.value
    assert (err.chars, err.limit) == (1500, 1000)
    assert isinstance(err, TemplateError)
    assert "1,500 characters, over the limit of 1,000" in str(err)
    assert "never truncated" in str(err)
    assert render("{{ x }}", {"x": "y" * 1000}, max_prompt_chars=1000) == "y" * 1000


def test_size_is_exact_even_when_the_overflow_comes_early() -> None:
    with pytest.raises(PromptTooLong) as info:
        render(
            "{% for i in range(50) %}{{ x }}{% endfor %}", {"x": "z" * 100}, max_prompt_chars=1000
        )
    assert info.value.chars == 5000


@pytest.mark.parametrize("bad", [0, -5, True, "100"])
def test_max_prompt_chars_must_be_a_positive_int(bad: Any) -> None:
    with pytest.raises(ValueError, match="max_prompt_chars"):
        render("x", {}, max_prompt_chars=bad)


# --- the sandbox ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "source",
    [
        "{{ x.__class__ }}",
        "{{ x.__class__.__mro__ }}",
        "{{ trace.roots.__globals__ }}",
        "{{ trace.roots.__func__ }}",
        "{{ trace._secret() }}",
        "{{ cls.__subclasses__() }}",
        "{{ cls.mro() }}",
        "{{ self.__init__.__globals__ }}",
        "{{ self._TemplateReference__context }}",
        "{% if x.__class__ %}leak{% endif %}",
        "{{ items.append(4) }}",
        "{{ trace.spans.pop() }}",
        "{{ {'a': 1}.update({'b': 2}) }}",
    ],
)
def test_private_attributes_and_mutation_are_refused(source: str) -> None:
    err = refused(source, {"x": "s", "items": [1], "trace": make_trace(), "cls": int})
    assert "refused by the sandbox" in str(err)
    assert "unsafe" in str(err)


@pytest.mark.parametrize(
    ("source", "name"),
    [
        ("{{ cycler.__init__.__globals__ }}", "cycler"),
        ("{{ lipsum(10000) }}", "lipsum"),
        ("{% set ns = namespace(s='a') %}{{ ns.s }}", "namespace"),
        ("{{ config.items() }}", "config"),
        ("{{ joiner() }}", "joiner"),
        ("{{ dict(a=1) }}", "dict"),
    ],
)
def test_jinja_and_flask_globals_are_not_available(source: str, name: str) -> None:
    with pytest.raises(TemplateError, match=f"'{name}' is undefined"):
        render(source, {})


@pytest.mark.parametrize(
    "source",
    [
        "{{ '{0.__class__}'.format(x) }}",
        "{{ '{0.__class__.__mro__}'.format_map({'0': x}) }}",
        "{{ '{:>1000000000}'.format(1) }}",
        "{% set f = 'a{}'.format %}{{ f(1) }}",
    ],
)
def test_str_format_is_refused(source: str) -> None:
    assert "str.format" in str(refused(source))


def test_printf_style_formatting_is_refused_but_modulo_works() -> None:
    assert "% operator on text" in str(refused("{{ '%999999999d' % 1 }}"))
    assert render("{{ 7 % 3 }}", {}) == "1"


@pytest.mark.parametrize("name", ["xmlattr", "format", "attr", "center", "pprint", "urlize"])
def test_filters_outside_the_allowlist_are_refused(name: str) -> None:
    with pytest.raises(TemplateSecurityError, match=f"filter '{name}' is not allowed") as info:
        render("{{ x | " + name + " }}", {"x": {"a": 1}})
    assert "allowed filters: abs" in str(info.value)


def test_unknown_filter_is_a_plain_template_error() -> None:
    with pytest.raises(TemplateError, match="no filter named 'nope'"):
        render("{{ x | nope }}", {"x": 1})


def test_allowlist_is_exactly_what_the_environment_offers() -> None:
    tmpl = Template("x")
    assert set(tmpl._jinja.environment.filters) == set(T.ALLOWED_FILTERS)
    assert set(tmpl._jinja.environment.globals) == {"range"}


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("{{ 'a' * 10**9 }}", "string of about 1,000,000,000 characters"),
        ("{{ 10**9 * 'a' }}", "string of about 1,000,000,000 characters"),
        ("{{ [1] * 10**9 }}", "list of 1,000,000,000 items"),
        ("{{ (1, 2) * 10**9 }}", "list of 2,000,000,000 items"),
        ("{{ range(10**9) | list }}", "range() of 1,000,000,000 items"),
        ("{% for i in range(10**6) %}{% endfor %}", "range() of 1,000,000 items"),
        ("{{ 2 ** (10**9) }}", "integer of about"),
        ("{{ 'a'.center(10**9) }}", "str.center()"),
        ("{{ 'a'.ljust(10**9) }}", "str.ljust()"),
        ("{{ 'a'.zfill(10**9) }}", "str.zfill()"),
        ("{{ ('\t' * 1000).expandtabs(10**7) }}", "str.expandtabs()"),
        ("{{ ('a' * 100000).replace('', 'b' * 1000) }}", "str.replace()"),
        ("{{ ('a' * 100000) | replace('a', 'b' * 1000) }}", "replace would build"),
        ("{{ ('x' * 1000000).join(range(3) | map('string')) }}", "str.join()"),
        ("{{ range(5000) | join('x' * 1000) }}", "join would build"),
        ("{{ 'a\nb' | indent(10**9) }}", "indent would build"),
        ("{{ items | batch(10**9, 'x') | list }}", "batch("),
        ("{{ items | slice(10**9) | list }}", "slice("),
        ("{{ ('a' * 1500000) + ('b' * 1500000) }}", "'+' would build"),
        ("{{ ('a' * 1500000) ~ ('b' * 1500000) }}", "'~' would build"),
        ("{{ [0] * 90000 + [1] * 90000 }}", "'+' would build a list"),
    ],
)
def test_huge_values_are_refused_before_they_are_built(source: str, message: str) -> None:
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    err = refused(source)
    assert message in str(err)
    grown_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert grown_kb < 200_000, "refusal must not allocate the huge value first"


def test_string_doubling_through_recursion_is_stopped() -> None:
    source = (
        "{% macro grow(s, n) %}{{ grow(s ~ s, n - 1) if n else s | length }}{% endmacro %}"
        "{{ grow('a', 60) }}"
    )
    assert "'~' would build a string" in str(refused(source))


def test_deep_macro_recursion_is_refused_with_a_clear_error() -> None:
    err = refused("{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}")
    assert f"nested more than {T.MAX_CALL_DEPTH} deep" in str(err)
    assert err.lineno == 1


def test_nested_loops_are_stopped_by_the_step_budget() -> None:
    source = "{% for i in range(10000) %}{% for j in range(10000) %}{% endfor %}{% endfor %}"
    # a generous time budget, so that the step budget is what stops it even on a busy machine
    with pytest.raises(TemplateSecurityError, match="loops ran more than 1,000,000 steps"):
        render(source, {}, render_timeout=120)


def test_reasonable_recursion_and_loops_still_work() -> None:
    source = (
        "{% macro depth(n) %}{% if n %}{{ depth(n - 1) }}{% else %}bottom{% endif %}{% endmacro %}"
        "{{ depth(20) }} {% for i in range(300) %}{% for j in range(300) %}{% endfor %}{% endfor %}ok"
    )
    assert render(source, {}) == "bottom ok"


def test_recursive_loops_over_a_tree_work() -> None:
    tree = [
        {"name": "root", "children": [{"name": "a", "children": []}, {"name": "b", "children": []}]}
    ]
    source = (
        "{% for node in tree recursive %}{{ node.name }}"
        "{% if node.children %}({{ loop(node.children) }}){% endif %}{% endfor %}"
    )
    assert render(source, {"tree": tree}) == "root(ab)"


def test_a_failing_template_leaves_the_next_render_unaffected() -> None:
    tmpl = Template("{% for i in items %}{{ i }}{% endfor %}", name="loop")
    with pytest.raises(TemplateSecurityError):
        render("{% for i in range(10000) %}{% for j in range(10000) %}{% endfor %}{% endfor %}", {})
    assert tmpl.render({"items": range(5)}) == "01234"


# --- built-in prompts -------------------------------------------------------------------


def test_builtin_prompts_live_in_the_package_prompts_folder() -> None:
    assert Path(T.__file__).parent / "prompts" == T.PROMPTS_DIR
    assert T.PROMPTS_DIR.is_dir()


@pytest.mark.parametrize("name", T.builtin_names())
def test_every_shipped_prompt_compiles_in_the_sandbox(name: str) -> None:
    tmpl = T.load_builtin(name)
    assert tmpl.name == name
    assert T.load_builtin(name + ".jinja") is tmpl


def test_unknown_builtin_is_a_clear_error() -> None:
    with pytest.raises(TemplateError, match="no built-in template named 'no_such_prompt'"):
        T.load_builtin("no_such_prompt")
    with pytest.raises(TemplateError, match="no built-in template named"):
        T.load_builtin("../../etc/passwd")


def test_prompt_library_loads_by_name_with_includes() -> None:
    lib = PromptLibrary(FIXTURES)
    assert {"greeting", "checklist_critique", "_footer"} <= set(lib.names())
    assert lib.load("greeting").render({"name": "Ada"}) == "Hello Ada.\nAnswer in JSON."
    assert lib.load("greeting") is lib.load("greeting.jinja")
    out = lib.load("checklist_critique").render(
        {"response": "R", "questions": [{"id": "q1", "text": "Is it short?"}]}
    )
    assert "- [q1] Is it short?\n" in out


def test_include_cannot_leave_the_prompt_folder() -> None:
    lib = PromptLibrary(FIXTURES)
    tmpl = Template('{% include "../test_templates.py" %}', _environment=lib.environment)
    with pytest.raises(TemplateError):
        tmpl.render({})


def test_render_with_a_source_string_that_is_not_a_builtin_name() -> None:
    assert render("plain text", {}) == "plain text"


# --- Vertex-style {placeholder} templates ------------------------------------------------


def test_format_braces_fills_placeholders_and_keeps_doubled_braces() -> None:
    template = (
        'Schema:\n```json\n{{\n"questions": [],\n}}\n```\n<user_prompt>\n{prompt}\n</user_prompt>'
    )
    out = format_braces(template, {"prompt": "Summarize X"})
    assert (
        out
        == 'Schema:\n```json\n{\n"questions": [],\n}\n```\n<user_prompt>\nSummarize X\n</user_prompt>'
    )
    assert T.brace_placeholders("{a} {b} {a} {{c}}") == ["a", "b"]


def test_format_braces_names_every_unknown_placeholder() -> None:
    with pytest.raises(TemplateError) as info:
        format_braces(
            "ok\n{prompt}\n{respons} {rubric}", {"prompt": "p", "response": "r"}, name="crit"
        )
    msg = str(info.value)
    assert msg.startswith("template 'crit' line 3: placeholder {respons}, {rubric} have no value")
    assert "the variables given are: prompt, response" in msg


@pytest.mark.parametrize(
    ("template", "message"),
    [
        ("a { b", "unmatched '{'"),
        ("a } b", "unmatched '}'"),
        ("{x.__class__}", "is not a placeholder"),
        ("{0}", "is not a placeholder"),
        ('{ "a": 1 }', "is not a placeholder"),
    ],
)
def test_format_braces_rejects_what_is_not_a_plain_placeholder(template: str, message: str) -> None:
    with pytest.raises(TemplateError, match=message):
        format_braces(template, {"x": 1})


def test_format_braces_values_are_inserted_verbatim_not_reformatted() -> None:
    assert format_braces("{a}", {"a": "{b} {{c}}"}) == "{b} {{c}}"


def test_format_braces_refuses_over_long_prompts() -> None:
    with pytest.raises(PromptTooLong):
        format_braces("{a}", {"a": "x" * 2000}, max_prompt_chars=1000)


# --- the time budget per render -----------------------------------------------------------


def test_a_render_past_its_time_budget_is_refused_and_the_budget_is_configurable() -> None:
    slow = "{% for i in range(10000) %}{{ range(10000) | list | sort | length }}{% endfor %}"
    # The cyclic collector's passes over the whole suite's heap (a gigabyte late in a full run)
    # are charged to this thread's CPU clock too; they are not the render's work, so they are
    # kept out of what this test measures.
    gc.collect()
    gc.disable()
    try:
        start = (
            time.thread_time()
        )  # CPU, as the budget counts it: a busy machine stalls, not spends
        with pytest.raises(
            TemplateSecurityError, match=r"time budget of 0\.2 s \(render_timeout\)"
        ):
            render(slow, {}, render_timeout=0.2)
        spent = time.thread_time() - start
    finally:
        gc.enable()
    assert spent < 1.0  # stopped at its budget, not at the loop's end
    assert render("{{ range(3) | list | sort | length }}", {}, render_timeout=0.2) == "3"


def test_a_render_stalled_by_a_busy_machine_is_not_refused_for_time_it_never_spent() -> None:
    """The budget is the rendering thread's CPU time: seconds lost waiting for a core (here a
    sleep, as a starved process sees it) do not count; seconds of work do."""
    from jinja2.exceptions import SecurityError

    from rubriclab.templates.limits import BUDGET, Budget, tick

    budget = Budget(timeout=0.05)
    token = BUDGET.set(budget)
    try:
        time.sleep(0.2)  # wall time passes, no CPU is used
        assert tick() is budget

        def work(seconds: float) -> None:  # CPU is spent
            end = time.thread_time() + seconds
            while time.thread_time() < end:
                tick()

        with pytest.raises(SecurityError, match=r"time budget of 0\.05 s"):
            work(0.1)
    finally:
        BUDGET.reset(token)


@pytest.mark.parametrize("bad", [0, -1, True, "2", 601, float("nan")])
def test_render_timeout_must_be_a_sensible_number_of_seconds(bad: Any) -> None:
    with pytest.raises(ValueError, match="render_timeout"):
        render("x", {}, render_timeout=bad)


def test_output_of_macros_and_blocks_is_bounded() -> None:
    source = "{% macro m() %}{% for i in range(100) %}{{ big }}{% endfor %}{% endmacro %}{{ m() }}"
    assert "a macro's or block's output" in str(refused(source, {"big": "x" * 100_000}))


def test_oversized_and_overdense_templates_are_refused_before_compiling() -> None:
    with pytest.raises(TemplateSecurityError, match="at most 100,000"):
        Template("x" * 100_001)
    with pytest.raises(TemplateSecurityError, match=re.escape("inside {{ }} and {% %} tags")):
        Template("{{ x }}" * 4000)
    assert Template("text " * 19_000 + "{{ x }}").render({"x": 1}).endswith("text 1")


def test_data_row_values_bind_as_plain_data() -> None:
    import numpy as np
    import pandas as pd

    row = {
        "tags": np.array(["a", "b"]),  # a parquet list column arrives as an array
        "n": np.int64(3),
        "x": np.float64(1.5),
        "when": pd.Timestamp("2025-01-01"),
        "blob": b"\x00\x01",
    }
    out = render("{{ tags | join(',') }} {{ n + 1 }} {{ x * 2 }} {{ when }} {{ blob }}", row)
    assert out == "a,b 4 3.0 2025-01-01 00:00:00 <2 bytes>"
    assert render("{{ when.isoformat() }} {{ when.year }}", row) == "2025-01-01T00:00:00 2025"
    assert "is unsafe" in str(refused("{{ when.strftime('%Y') }}", row))
    assert "is unsafe" in str(refused("{{ n.to_bytes(5000000000, 'big') }}", row))


def test_round_precision_is_bounded() -> None:
    assert render("{{ 3.14159 | round(2) }} {{ 1234 | round(-2) }}", {}) == "3.14 1200"
    with pytest.raises(TemplateError, match="round precision must be between -30 and 30"):
        render("{{ 5 | round(-100000000) }}", {})


def test_sum_adds_every_number_even_ones_equal_to_start() -> None:
    # small ints are shared objects: a sum that skipped items identical to `start` gave 5 here
    assert render("{{ [5, 5] | sum(start=5) }} {{ [0, 2] | sum }}", {}) == "15 2"
    with pytest.raises(TemplateError, match="sum adds numbers"):
        render("{{ [[1]] | sum(start=[]) }}", {})


# --- issue 25: comparisons, lazy filters and printing -----------------------------------------


def test_comparisons_keep_their_meaning_through_the_sandbox() -> None:
    """``==``, ``in``, ``<`` chains go through the sandbox's size check and still mean what
    Python means: a chain stops at the first false link (the undefined name is never read)."""
    src = (
        "{{ 1 < 2 < 3 }} {{ 3 < 2 < nowhere }} {{ 'b' in 'abc' }} {{ 'z' not in items }} "
        "{{ [1, 2] == [1, 2] }} {{ items != items }} {{ 2 >= 2 > 1 <= 1 }} {{ d.a is eq 1 }}"
    )
    out = render(src, {"items": [1, 2, 3], "d": {"a": 1}})
    assert out == "True False True True True False True True"


def test_lazy_filters_still_loop_and_list() -> None:
    src = (
        "{% for row in items | batch(2, 0) %}{{ row }}{% endfor %}|"
        "{{ items | map('string') | join(',') }}|{{ items | select('odd') | list }}|"
        "{{ ['b', 'A', 'a'] | unique | list }}|{{ ['b', 'A'] | sort }}|{{ ['b', 'A'] | max }}"
    )
    assert render(src, {"items": [1, 2, 3]}) == "[1, 2][3, 0]|1,2,3|[1, 3]|['b', 'A']|['A', 'b']|b"


@pytest.mark.parametrize(
    ("source", "says"),
    [
        ("{{ range }}", "range is a function: call it"),
        ("{{ [range] }}", "range is a function: call it"),
        ("{{ items | batch(2) }}", "add | list"),
        ("{{ items | map('string') }}", "add | list"),
    ],
)
def test_functions_and_lazy_sequences_are_not_printed_as_memory_addresses(
    source: str, says: str
) -> None:
    with pytest.raises(TemplateSecurityError, match=re.escape(says)):
        render(source, {"items": [1, 2, 3]})


def test_wordwrap_of_long_runs_of_spaces_is_refused_at_once() -> None:
    start = time.process_time()
    with pytest.raises(TemplateSecurityError, match="wordwrap\\(5\\) of this text would take"):
        render("{{ (' ' * 199999) | wordwrap(5) }}")
    assert time.process_time() - start < 1.0
    assert render("{{ 'aaa bbb ccc' | wordwrap(4) }}") == "aaa\nbbb\nccc"
