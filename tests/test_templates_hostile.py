"""A hostile-template corpus: every payload is refused on its own, fast, with no side effect.

Each payload renders in a child process under a 2 GiB address-space cap (``RLIMIT_AS``) and a
time limit, with the values rubriclab really binds (a span, a trace, a rubric and its criteria,
a data row). For every payload the test asserts: the render failed with
:class:`TemplateSecurityError` or another clean :class:`TemplateError`; it used under 5 s of CPU; the
canary file the payload tries to write (or a command it tries to run would write) does not exist;
the secret file's content appears in no output or error. A child that dies (a process-ending
payload) fails the test. ``{canary}`` and ``{secret}`` in a payload stand for those paths.
"""

from __future__ import annotations

import concurrent.futures
import json
import os
import re
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
PER_PAYLOAD_SECONDS = 5.0
MEMORY_CAP = 2 * 1024**3

# pickle protocol 0 text that runs a shell command when unpickled
_PICKLE = "cos\\nsystem\\n(S'touch {canary}'\\ntR."
_RCE = "__import__('os').system('touch {canary}')"

HOSTILE: dict[str, list[str]] = {
    # 1. methods of bound pydantic models: loaders, dumpers, file readers and writers
    "pydantic methods": [
        '{{ rubric.parse_raw("' + _PICKLE + "\", content_type='application/pickle', "
        "allow_pickle=True) }}",
        '{{ input_span.parse_raw("' + _PICKLE + "\", content_type='application/pickle', "
        "allow_pickle=True) }}",
        '{{ criteria[0].parse_raw("' + _PICKLE + "\", content_type='application/pickle', "
        "allow_pickle=True) }}",
        "{{ criteria[0].levels[0].parse_raw('x') }}",
        "{{ input_trace.parse_raw('x') }}",
        "{{ rubric.parse_file('{secret}') }}",
        "{{ input_span.parse_file('{secret}') }}",
        "{{ rubric.from_yaml('{secret}') }}",
        "{{ rubric.from_json('{\"criteria\": []}') }}",
        "{{ rubric.save('{canary}') }}",
        "{{ rubric.to_yaml() }}",
        "{{ rubric.model_dump_json(indent=10**9) }}",
        "{{ input_span.model_dump_json(indent=10**9) }}",
        "{{ input_trace.model_dump_json(indent=10**9) }}",
        "{{ input_span.status.model_dump_json(indent=10**9) }}",
        "{{ input_span.json(indent=10**9) }}",
        "{{ input_span.schema_json(indent=10**9) }}",
        "{{ input_span.model_json_schema() }}",
        "{{ input_span.model_dump() }}",
        "{{ input_span.dict() }}",
        "{{ input_span.model_copy(update={'name': 'x'}) }}",
        "{{ input_span.copy() }}",
        "{{ input_span.model_validate_json('{}') }}",
        "{{ input_span.model_construct() }}",
        "{{ input_span.model_fields }}",
        "{{ input_span.model_config }}",
        "{{ input_trace.from_otlp('{secret}') }}",
        "{{ input_trace.to_dataframe() }}",
        "{{ input_trace.model_post_init(None) }}",
        "{{ input_span.start.strftime('%Y' * 100000) }}",
        "{{ input_span.start.replace(year=1) }}",
        "{{ input_span.start.astimezone() }}",
        "{{ input_span.start.isoformat('x' * 100) }}",
        "{{ row.when.to_pydatetime() }}",
        "{{ row.when.tz_localize('UTC') }}",
        "{{ row.count.to_bytes(5000000000, 'big') }}",
        "{{ rubric.score({}) }}",
        "{{ input_trace.find(kind=(['a' * 1999999] * 99999)) }}",
        "{{ input_trace.find(name='a' * 1999999) | length }}{{ undefined_after }}",
        "{{ input_trace.children(input_span.__class__) }}",
        "{{ input_trace.get(range) }}",
        "{% macro m() %}{% endmacro %}{{ input_trace.find(kind=m) }}",
        "{{ input_span.summary(width=10**9) ~ input_trace.tree(10**9) ~ undefined_after }}",
    ],
    # 2. the classic server-side template injection payloads
    "classic SSTI": [
        "{{ ''.__class__.__mro__[1].__subclasses__() }}",
        "{{ ().__class__.__base__.__subclasses__() }}",
        "{{ [].__class__.__base__.__subclasses__()[40]('{secret}').read() }}",
        "{{ {}.__class__.__bases__[0].__subclasses__() }}",
        "{{ (1).__class__.__mro__ }}",
        "{{ x.__class__.__mro__[1].__subclasses__() }}",
        "{{ cycler.__init__.__globals__.os.popen('touch {canary}').read() }}",
        "{{ joiner.__init__.__globals__.os.popen('touch {canary}') }}",
        "{{ namespace.__init__.__globals__.os.popen('touch {canary}') }}",
        "{{ lipsum.__globals__['os'].popen('touch {canary}').read() }}",
        "{{ lipsum.__globals__.__builtins__.open('{secret}').read() }}",
        "{{ self._TemplateReference__context.cycler.__init__.__globals__.os }}",
        "{{ self.__init__.__globals__.__builtins__.open('{secret}').read() }}",
        "{{ self.__dict__ }}",
        "{{ self._TemplateReference__context.environment }}",
        "{{ request.application.__globals__.__builtins__.__import__('os') }}",
        "{{ config.__class__.__init__.__globals__['os'].popen('touch {canary}') }}",
        "{{ config.items() }}",
        "{{ url_for.__globals__.os.popen('touch {canary}') }}",
        "{{ get_flashed_messages.__globals__.__builtins__.open('{secret}').read() }}",
        "{{ g.pop.__globals__.__builtins__ }}",
        "{{ range.__self__ }}",
        "{{ range.__globals__.os.system('touch {canary}') }}",
        "{{ range.__call__ }}",
        "{{ range(1).__class__.__mro__ }}",
        "{% for c in ''.__class__.__mro__[1].__subclasses__() %}{{ c }}{% endfor %}",
        "{% set s = x.__class__ %}{{ s.__mro__ }}",
        "{% with a = x.__class__ %}{{ a }}{% endwith %}",
        "{% filter upper %}{{ x.__class__ }}{% endfilter %}",
        "{% for i in items %}{{ loop.__class__.__mro__ }}{% endfor %}",
        "{% for i in items %}{{ loop.__init__.__globals__ }}{% endfor %}",
        "{% for i in items %}{{ loop.cycle.__globals__ }}{% endfor %}",
        "{% for i in items %}{{ loop._iterator }}{% endfor %}",
        "{% macro m() %}{% endmacro %}{{ m.__globals__ }}",
        "{% macro m() %}{% endmacro %}{{ m._func.__globals__['os'] }}",
        "{% macro m() %}{% endmacro %}{{ m._environment }}",
        "{% macro m() %}{{ caller.__globals__ }}{% endmacro %}{% call m() %}x{% endcall %}",
        "{{ input_trace.roots.__self__.__class__ }}",
        "{{ input_trace.roots.__func__ }}",
        "{{ input_span.summary.__globals__ }}",
        "{{ input_span.__init__.__globals__['os'] }}",
        "{{ input_span.__dict__ }}",
        "{{ input_span.__pydantic_private__ }}",
        "{{ input_trace._by_id }}",
        "{{ input_span.attributes.__class__ }}",
        "{{ input_span.attributes.copy() }}",
        "{{ input_span.attributes.setdefault('a', 1) }}",
        "{{ input_span.tool_calls.append(1) }}",
        "{{ input_trace.walk().__class__ }}",
        "{{ items.append(4) }}",
        "{{ d.update({'b': 2}) }}",
        "{{ d.keys.__self__ }}",
        "{{ d.get.__self__.__class__ }}",
        "{{ d.fromkeys(items) }}",
        "{{ d.items().__class__ }}",
        "{{ (1).bit_length() }}",
        "{{ (1.5).hex() }}",
        "{{ x.__len__() }}",
        "{{ dict(a=1) }}",
        "{{ undefined_thing.__class__ }}",
    ],
    # 3. attribute access through filters and item syntax
    "filters and items": [
        "{{ x | attr('__class__') }}",
        "{{ x | attr('\\x5f\\x5fclass\\x5f\\x5f') }}",
        "{{ x['__class__'] }}",
        "{{ x['\\x5f\\x5fclass\\x5f\\x5f'] }}",
        "{{ input_span['parse_file']('{secret}') }}",
        "{{ [x] | map(attribute='__class__') | list }}",
        "{{ [input_span] | map(attribute='model_dump_json') | list }}",
        "{{ [x] | sort(attribute='__class__') }}",
        "{{ [x] | groupby('__class__') }}",
        "{{ [x] | selectattr('__class__') | list }}",
        "{{ [x] | rejectattr('__class__') | list }}",
        "{{ [x] | unique(attribute='__class__') | list }}",
        "{{ [x] | min(attribute='__class__') }}",
        "{{ [x] | sum(attribute='__class__') }}",
        "{{ [x] | join(attribute='__class__') }}",
        "{{ [input_span] | map(attribute='__init__.__globals__') | list }}",
        "{{ input_trace.walk() | map(attribute='parse_file') | list }}",
        "{{ x | pprint }}",
        "{{ x | xmlattr }}",
        "{{ x | format(1) }}",
        "{{ x | safe }}",
        "{{ x | urlize }}",
        "{{ x | center(10**9) }}",
        "{{ x | random }}",
        "{{ items | map('attr', '__class__') | list }}",
    ],
    # 4. format-string tricks
    "format strings": [
        "{{ '{0.__class__}'.format(x) }}",
        "{{ '{0.__init__.__globals__}'.format(input_span) }}",
        "{{ '{0.__class__.__mro__}'.format_map({'0': x}) }}",
        "{{ '{:>1000000000}'.format(1) }}",
        "{% set f = 'a{}'.format %}{{ f(1) }}",
        "{{ ('{0.' ~ '__class__}').format(x) }}",
        "{{ '%s' % x }}",
        "{{ '%999999999d' % 1 }}",
        "{{ '%(a)s' % d }}",
        "{{ x.__format__('>1000000000') }}",
        "{{ x.translate({120: 'y' * 1000000}) }}",
        "{{ x.maketrans('a', 'b') }}",
        "{{ x.encode() }}",
        "{{ x.expandtabs(10**9) }}",
    ],
    # 5. sizes: whatever builds it, a value past the limits is refused before memory runs out
    "sizes": [
        "{{ (['a' * 1999999] * 99999) | join }}",
        "{{ ['a' * 1999999] * 99999 }}",
        "{{ (['a' * 1999999] * 99999) | string }}",
        "{{ x ~ (['a' * 1999999] * 99999) }}",
        "{{ (['a' * 1999999] * 99999) is lower }}",
        "{{ x.encode() * 1000000000 }}",
        "{{ x.encode().center(1000000000) }}",
        "{{ (5000000000).to_bytes(5000000000, 'big') }}",
        "{{ x | wordwrap(1, wrapstring='w' * 1000000) }}",
        "{{ ('a ' * 999999) | wordwrap(1, wrapstring='xx') }}",
        "{{ ([[1] * 100000] * 100000) | sum(start=[]) }}",
        "{{ ([[1] * 1000] * 100) | sum(start=[]) }}",
        "{{ ([range(10000) | list] * 10000) | tojson }}",
        "{{ ([['a' * 1000000] * 10] * 10) | tojson }}",
        "{% set a = 10**1000 %}{% set a = a*a %}{% set a = a*a %}{% set a = a*a %}"
        "{% set a = a*a %}{% set a = a*a %}{% set a = a*a %}{% set a = a*a %}{% set a = a*a %}"
        "{{ a > 0 }}",
        "{{ 2 ** (10**9) }}",
        "{{ 'a' * 10**9 }}",
        "{{ [1] * 10**9 }}",
        "{{ range(10**9) | list }}",
        "{{ 'a'.center(10**9) }}",
        "{{ 'a'.ljust(10**9, 'b') }}",
        "{{ 'a'.zfill(10**9) }}",
        "{{ ('a' * 100000).replace('', 'b' * 1000) }}",
        "{{ ('a' * 100000) | replace('a', 'b' * 1000) }}",
        "{{ 'a\\nb' | indent(10**9) }}",
        "{{ items | batch(10**9, 'x') | list }}",
        "{{ items | slice(10**9) | list }}",
        "{{ ('a ' * 999999).split() }}",
        "{{ ('a' * 1999999) | upper | list }}",
        "{{ ('\u00df' * 1999999) | upper }}",
        "{{ ('a' * 1500000) ~ ('b' * 1500000) }}",
        "{{ [0] * 90000 + [1] * 90000 }}",
        "{% set z = range(10000) | list %}{{ [z] * 10000 == [z | list] * 10000 }}",
        "{% set t = (range(10000) | list) %}{{ [[t] * 1000] | unique | list }}",
        "{% set s = 'x' * 1999999 %}{% set a = s ~ '1' %}{% set b = s ~ '2' %}"
        "{% set c = s ~ '3' %}{% set d2 = s ~ '4' %}{% set e = s ~ '5' %}{% set f = s ~ '6' %}"
        "{% set g = s ~ '7' %}{% set h = s ~ '8' %}{% set i = s ~ '9' %}{% set j = s ~ '0' %}"
        "{% set k = s ~ 'a' %}{{ k | length }}",
        "{% macro grow(s, n) %}{{ grow(s ~ s, n - 1) if n else s | length }}{% endmacro %}"
        "{{ grow('a', 60) }}",
    ],
    # 6. CPU: a render finishes within its time budget or is refused
    "cpu": [
        "{% for i in range(10000) %}{{ range(10000) | list | sort | length }}{% endfor %}",
        "{% for i in range(10000) %}{% for j in range(10000) %}{% endfor %}{% endfor %}",
        "{% macro f(n) %}{% if n %}{{ f(n - 1) }}{{ f(n - 1) }}{% endif %}{% endmacro %}"
        "{{ f(40) }}",
        "{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}",
        "{% for i in range(10000) %}{{ (range(10000) | list | unique | list) | length }}"
        "{% endfor %}",
        "{% for i in range(10000) %}{{ ('a' * 1000000) | wordcount }}{% endfor %}",
        "{% for i in range(10000) %}{{ range(10000) | map('string') | join | length }}{% endfor %}",
        "{% for i in range(10000) %}{{ ([input_trace] * 1000) | tojson | length }}{% endfor %}",
        "{% for n in items recursive %}{{ loop(items) }}{% endfor %}",
        "{{ 5 | round(-100000000) }}",
        "{{ 5 | round(100000000, 'floor') }}",
        "{{ (10 ** 30000) | round(-30) }}",
    ],
    # 7. output of macros and blocks, joined by Jinja itself, is bounded too
    "blocks": [
        "{% macro m() %}{% for i in range(10000) %}{{ big }}{% endfor %}{% endmacro %}"
        "{{ m() | length }}",
        "{% set b %}{% for i in range(10000) %}{{ big }}{% endfor %}{% endset %}{{ b | length }}",
        "{% filter upper %}{% for i in range(10000) %}{{ big }}{% endfor %}{% endfilter %}",
        "{% macro m() %}{{ caller() }}{{ caller() }}{% endmacro %}"
        "{% call m() %}{% for i in range(9000) %}{{ big }}{% endfor %}{% endcall %}",
        "{{ ('a ' * 600000) | wordwrap(10) | length }}",
    ],
    # 8. templates too big or too deep to compile quickly
    "compile": [
        "{{ x }}" * 14000,
        "{% set a = (a,) %}" * 5000,
        "{% set a = 1 %}" + "{% set a = (a,) %}" * 1200 + "{{ a == a }}{{ [a] | tojson }}{{ a }}",
        "x" * 100_001,
        "{{" + "(" * 5000 + "1" + ")" * 5000 + "}}",
        "{{ x" + ".y" * 4000 + " }}",
        "{{ x" + " | upper" * 4000 + " }}",
        "{% set a = [] %}" + "{% set a = [a] %}" * 1500 + "{{ a | tojson }}{{ a == a }}",
    ],
    # 10. shared references (issue 25): a lazy filter's filler and every item it yields is
    # counted at its full size, however many times one string is repeated; comparing filters
    # and operators measure what they compare first
    "shared references": [
        "{% set s = 'x' * 1900000 %}{% for row in [s] | batch(100000, s) %}"
        "{{ row | sort | length }}{% endfor %}",
        "{% set s = 'x' * 1900000 %}{% for row in [s] | batch(100000, s) %}"
        "{{ row | unique | list | length }}{% endfor %}",
        "{% set s = 'x' * 1900000 %}{% for row in [s] | batch(100000, s) %}"
        "{{ row | max | length }}{% endfor %}",
        "{% set s = 'x' * 1900000 %}{% for row in [s] | batch(100000, s) %}"
        "{{ row | min | length }}{% endfor %}",
        "{% set s = 'x' * 1900000 %}{% for row in [s] | batch(100000, s) %}"
        "{{ (s ~ '') in row }}{% endfor %}",
        "{% set s = 'x' * 1900000 %}{% for row in [s] | batch(100000, s) %}"
        "{{ row == row | list }}{% endfor %}",
        "{% set s = 'x' * 1900000 %}{% for row in [s] | batch(100000, s) %}"
        "{{ (s ~ '') is in row }}{% endfor %}",
        "{% set s = 'x' * 1900000 %}{{ [s] | batch(100000, s) | list | length }}",
        "{% set s = 'x' * 1900000 %}{{ ([s] | batch(100000, s) | first) | length }}",
        "{% set s = 'x' * 1900000 %}{{ [s] | batch(100000, s) | map('length') | list }}",
        "{% set s = 'x' * 1900000 %}{{ [s] | slice(100000, s) | list | length }}",
        "{% set s = 'x' * 1900000 %}{{ [s] | batch(100000, s) | sort | length }}",
        "{% set s = 'x' * 1900000 %}{% for row in [s] | batch(100000, s) %}"
        "{{ row | groupby('x') | length }}{% endfor %}",
    ],
    # 11. bound data that repeats its parts (YAML aliases: a billion items in a few KB)
    "aliased data": [
        "{{ aliased }}",
        "{{ aliased | string | length }}",
        "{{ aliased | tojson }}",
        "{{ aliased.i | tojson(indent=2) }}",
        "{{ [aliased] | tojson }}",
        "{{ aliased.i | sort | length }}",
        "{{ aliased.i | unique | list | length }}",
        "{{ aliased.i | max }}",
        "{{ aliased.i == aliased.i | list }}",
        "{{ 'lol' in aliased.i | list }}",
        "{{ aliased.i | join | length }}",
        "{{ aliased | dictsort | length }}",
    ],
    # 12. traces: printing a 20,000-span chain costs its length, never its square
    "traces": [
        "{{ chain }}",
        "{{ chain | string | length }}",
        "{{ chain.tree() | length }}",
        "{{ chain ~ '' }}",
        "{{ chain.walk() }}",
    ],
    # 13. values whose text is a memory address, and text that wraps in quadratic time
    "printing": [
        "{{ range }}",
        "{{ [range] }}",
        "{{ items | batch(2) }}",
        "{{ items | map('string') }}",
        "{{ items | select }}",
        "{{ (' ' * 199999) | wordwrap(5) }}",
        "{{ ('\u3000' * 199999) | wordwrap(5) }}",
        "{{ ('\t' * 199999 ~ 'x') | wordwrap(3) }}",
    ],
    # 9. paths: includes and imports cannot reach files
    "includes": [
        "{% include '{secret}' %}",
        "{% include '../../../../../../..{secret}' %}",
        "{% include secret_path %}",
        "{% import '{secret}' as s %}{{ s }}",
        "{% extends '{secret}' %}",
        "{% from '{secret}' import x %}{{ x }}",
    ],
}


#: nine levels of YAML aliases: 387,420,489 'lol's in 1 KB (the "billion laughs")
ALIAS_BOMB = "a: &a ['lol','lol','lol','lol','lol','lol','lol','lol','lol']\n" + "".join(
    f"{name}: &{name} [{', '.join([f'*{prev}'] * 9)}]\n"
    for prev, name in zip("abcdefgh", "bcdefghi", strict=True)
)


def _chain_trace(length: int) -> Any:
    """A trace whose spans each call the next: ``length`` levels deep."""
    import datetime as dt

    from rubriclab.traces import Span, Trace

    t0 = dt.datetime(2025, 1, 1, tzinfo=dt.timezone.utc)
    return Trace(
        Span(
            trace_id="t",
            span_id=f"s{i}",
            parent_id=f"s{i - 1}" if i else None,
            name=f"step {i}",
            kind="CHAIN",
            start=t0,
            end=t0,
        )
        for i in range(length)
    )


def _payloads() -> list[tuple[str, int, str]]:
    return [(family, i, p) for family, items in HOSTILE.items() for i, p in enumerate(items)]


def _child() -> None:
    """Render the payloads given on stdin, one JSON line of outcome per payload."""
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))
    import time

    import numpy as np
    import pandas as pd
    import yaml

    from rubriclab import Rubric
    from rubriclab.templates import TemplateError, TemplateSecurityError, render
    from rubriclab.traces import example_trace

    job = json.loads(sys.stdin.read())
    trace = example_trace()
    chain = _chain_trace(20_000)
    aliased = yaml.safe_load(ALIAS_BOMB)
    rubric = Rubric.checklist(["Is it short?", "Is it polite?"])
    variables: dict[str, Any] = {
        "input_span": trace.walk()[1],
        "input_trace": trace,
        "rubric": rubric,
        "criteria": rubric.criteria,
        "x": "text",
        "items": [1, 2, 3],
        "d": {"a": 1},
        "secret_path": job["secret"],
        "big": "x" * 1_000_000,
        "row": {"count": np.int64(3), "when": pd.Timestamp("2025-01-01")},
        "chain": chain,
        "aliased": aliased,
    }
    for family, index, source in job["payloads"]:
        source = source.replace("{canary}", job["canary"]).replace("{secret}", job["secret"])
        # CPU seconds of the rendering thread: what the render budget counts (a busy machine
        # stalls a render for wall time it never spends, so wall time would test the machine)
        start = time.thread_time()
        try:
            text = render(source, variables, name=f"{family} {index}")
            outcome, message = "rendered", text[:2000]
        except TemplateSecurityError as exc:
            outcome, message = "refused", str(exc)
        except TemplateError as exc:
            outcome, message = "error", str(exc)
        except BaseException as exc:
            outcome, message = "escaped", f"{type(exc).__name__}: {exc}"[:2000]
        seconds = time.thread_time() - start
        out = {"family": family, "index": index, "outcome": outcome}
        out.update(message=message, seconds=seconds)
        print(json.dumps(out), flush=True)


def _run_chunk(chunk: list[tuple[str, int, str]], canary: Path, secret: Path) -> dict[str, Any]:
    job = {"payloads": chunk, "canary": str(canary), "secret": str(secret)}
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    proc = subprocess.run(
        [sys.executable, "-c", "from tests.test_templates_hostile import _child; _child()"],
        input=json.dumps(job),
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=PER_PAYLOAD_SECONDS * len(chunk) + 30,
        check=False,
    )
    lines = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    return {"returncode": proc.returncode, "stderr": proc.stderr[-3000:], "results": lines}


@pytest.mark.timeout(600)
def test_every_hostile_template_is_refused_fast_with_no_side_effect(tmp_path: Path) -> None:
    payloads = _payloads()
    assert len(payloads) >= 100
    canary = tmp_path / "canary"
    secret = tmp_path / "secret.txt"
    token = f"SECRET-{uuid.uuid4().hex}"
    secret.write_text(f"{token}\n", encoding="utf-8")
    # two children (the CI machines have two cores); the slow families are spread over both
    chunks = [payloads[0::2], payloads[1::2]]
    with concurrent.futures.ThreadPoolExecutor(len(chunks)) as pool:
        runs = list(pool.map(lambda c: _run_chunk(c, canary, secret), chunks))
    results = []
    for chunk, run in zip(chunks, runs, strict=True):
        done = {(r["family"], r["index"]) for r in run["results"]}
        died = [(f, i, p) for f, i, p in chunk if (f, i) not in done]
        assert run["returncode"] == 0 and not died, (
            f"the child process ended (code {run['returncode']}) before rendering "
            f"{died[:1]}: {run['stderr']}"
        )
        results.extend(run["results"])
    failures = []
    for r in results:
        where = f"{r['family']} #{r['index']}: {HOSTILE[r['family']][r['index']]!r}"
        if r["outcome"] not in ("refused", "error"):
            failures.append(f"{where} was {r['outcome']}: {r['message'][:300]}")
        if r["seconds"] >= PER_PAYLOAD_SECONDS:
            failures.append(f"{where} used {r['seconds']:.1f} s of CPU")
        if token in r["message"]:
            failures.append(f"{where} leaked the secret file's content")
        if "ran out of memory" in r["message"]:  # a limit must stop it before memory runs out
            failures.append(f"{where} ran out of memory: {r['message'][:300]}")
    assert not failures, "\n".join(failures)
    assert not canary.exists(), "a payload wrote the canary file or ran a command"
    assert len(results) == len(payloads)
    refused = sum(r["outcome"] == "refused" for r in results)
    slowest = max(results, key=lambda r: r["seconds"])
    for r in sorted(results, key=lambda r: -r["seconds"])[:5]:
        print(f"{r['seconds']:.2f} s {r['family']} #{r['index']}: {r['message'][:150]}")
    print(
        f"{len(results)} hostile templates: {refused} refused by the sandbox, "
        f"{len(results) - refused} other clean errors; slowest "
        f"{slowest['seconds']:.2f} s ({slowest['family']} #{slowest['index']})"
    )


@pytest.mark.timeout(300)
def test_tojson_max_chars_cuts_aliased_data_fast_in_a_memory_capped_child(tmp_path: Path) -> None:
    """Bound data that repeats its parts (a YAML alias bomb: 387M items in 1 KB) is cut by
    ``tojson(max_chars=)`` as the author asked, in well under a second and within the memory
    cap, never written whole first."""
    sources = [
        "{{ aliased | tojson(max_chars=100) }}",
        "{{ aliased.i | tojson(indent=2, max_chars=400) }}",
        "{{ [aliased, 1] | tojson(max_chars=100) }}",
    ]
    run = _run_chunk(
        [("cut", i, src) for i, src in enumerate(sources)], tmp_path / "c", tmp_path / "s"
    )
    assert run["returncode"] == 0 and len(run["results"]) == len(sources), run["stderr"]
    for r in run["results"]:
        assert r["outcome"] == "rendered", r["message"]
        assert "lol" in r["message"], r["message"]
        assert re.search(r"…\[truncated by tojson\(max_chars=\d+\): over ", r["message"]), r
        assert r["seconds"] < 1.0, r


# --- a refusal is its row's error; the run goes on (critique templates bind the rubric) ------

CRITIQUE_PAYLOADS = [
    '{{ rubric.parse_raw("' + _PICKLE + "\", content_type='application/pickle', "
    "allow_pickle=True) }}",
    "{{ rubric.save('{canary}') }}",
    "{{ rubric.model_dump_json(indent=10**9) }}",
    "{{ criteria[0].parse_file('{secret}') }}",
    "{{ rubric.from_yaml('{secret}') }}",
    "{{ (['a' * 1999999] * 99999) | join }}",
    "{% for i in range(10000) %}{{ range(10000) | list | sort | length }}{% endfor %}",
]


@pytest.mark.timeout(120)
def test_hostile_critique_templates_fail_their_rows_and_the_run_goes_on(
    fake_judge: Any, tmp_path: Path
) -> None:
    import pandas as pd

    import rubriclab as rl
    from tests import judge_scripts

    fake_judge.responder = judge_scripts.realistic
    canary = tmp_path / "canary"
    secret = tmp_path / "secret.txt"
    secret.write_text("SECRET-critique\n", encoding="utf-8")
    rubric = rl.Rubric.checklist(["Is it polite?"])
    hostile = [
        rl.metrics.RubricMetric(
            name=f"hostile{i}",
            rubric=rubric,
            template=p.replace("{canary}", str(canary)).replace("{secret}", str(secret)),
        )
        for i, p in enumerate(CRITIQUE_PAYLOADS)
    ]
    honest = rl.metrics.RubricMetric(name="honest", rubric=rubric)
    data = pd.DataFrame({"prompt": ["Refund?", "Hours?"], "response": ["Yes, thanks.", "9-5."]})
    judge = rl.Judge(fake_judge.url, model="judge-model", max_retries=0, cache=False)
    t = rl.evaluate(data, [*hostile, honest], judge=judge).table
    for metric in hostile:
        errors = t[f"{metric.name}/error"].tolist()
        assert all("refused by the sandbox" in e for e in errors), errors
        assert not any("SECRET" in e for e in errors)
    assert t["honest/error"].isna().all()
    assert t["honest/score"].notna().all()
    assert len(fake_judge.requests) == 2  # only the honest metric reached the judge
    assert not canary.exists()
