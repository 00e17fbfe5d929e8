"""The same template and inputs render the same bytes in every process: no value prints as a
Python object description (with its memory address), nothing draws random text, and set and hash
order never show. A prompt whose bytes change from one process to the next costs the host its
provider's prompt cache."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

from promptd.errors import TemplateRender
from promptd.prompt.engine import engine

CONTEXT = {"items": [3, 1, 2, 1], "words": ["b", "a", "c"], "m": {"b": 1, "a": 2}, "users": [{"name": "x", "age": 3}, {"name": "y", "age": 1}], "text": "Hello <b>world</b> it's foo_bar", "n": -7.5}

# Each filter, test and global the dialect offers, printed whole (not joined), so a lazy result
# shows how it prints.
FILTERS = {
    "abs": "${{ n|abs }}", "attr": "${{ m|attr('a') }}", "batch": "${{ items|batch(3, 0) }}", "bool": "${{ 1|bool }}",
    "capitalize": "${{ text|capitalize }}", "center": "${{ 'x'|center(5) }}", "count": "${{ items|count }}",
    "d": "${{ nope|d('z') }}", "default": "${{ nope|default(items) }}", "dictsort": "${{ m|dictsort }}",
    "e": "${{ text|e }}", "escape": "${{ text|escape }}", "filesizeformat": "${{ 123456|filesizeformat }}",
    "first": "${{ items|first }}", "float": "${{ '1.5'|float }}", "forceescape": "${{ text|forceescape }}",
    "format": "${{ '%s-%s'|format(1, 2) }}", "groupby": "${{ users|groupby('age') }}", "indent": "${{ 'a\nb'|indent(2) }}",
    "int": "${{ '12'|int }}", "items": "${{ m|items }}", "join": "${{ words|join('-') }}", "last": "${{ items|last }}",
    "length": "${{ items|length }}", "lines": "${{ 'a\nb'|lines }}", "list": "${{ 'ab'|list }}", "lower": "${{ text|lower }}",
    "map": "${{ users|map(attribute='name') }}", "max": "${{ items|max }}", "min": "${{ items|min }}",
    "pprint": "${{ m|pprint }}", "reject": "${{ items|reject('odd') }}", "rejectattr": "${{ users|rejectattr('age', 'odd') }}",
    "replace": "${{ text|replace('o', '0') }}", "reverse": "${{ items|reverse }}", "round": "${{ n|round }}",
    "safe": "${{ text|safe }}", "select": "${{ items|select('odd') }}", "selectattr": "${{ users|selectattr('age', 'odd') }}",
    "slice": "${{ items|slice(2) }}", "sort": "${{ words|sort }}", "split": "${{ 'a b'|split }}", "string": "${{ (items|reverse)|string }}",
    "striptags": "${{ text|striptags }}", "sum": "${{ items|sum }}", "title": "${{ text|title }}", "tojson": "${{ m|tojson }}",
    "trim": "${{ '  x '|trim }}", "truncate": "${{ text|truncate(9) }}", "unique": "${{ items|unique }}", "upper": "${{ text|upper }}",
    "urlencode": "${{ m|urlencode }}", "urlize": "${{ 'see https://x.y'|urlize }}", "wordcount": "${{ text|wordcount }}",
    "wordwrap": "${{ text|wordwrap(8) }}", "xmlattr": "${{ m|xmlattr }}",
}  # fmt: skip
GLOBALS = {
    "range": "${{ range(3) }}", "dict": "${{ dict(b=1, a=2) }}", "namespace": "${% set ns = namespace(a=1, b=[2]) %}${{ ns }}",
    "cycler": "${% set c = cycler('a', 'b') %}${{ c.next() }}${{ c.next() }}", "joiner": "${% set j = joiner(', ') %}${{ j() }}x${{ j() }}y",
}  # fmt: skip
METHODS = ["${{ m.keys() }}", "${{ m.values() }}", "${{ m.items() }}", "${{ text.split() }}", "${{ {'b': 1, 'a': 2} }}", "${{ (1, 2) }}", "${{ [m, words] }}"]
TESTS = "${{ [items is sequence, m is mapping, text is string, 1 is number, none is none, 1 is odd, 2 is even, nope is undefined, items is iterable] }}"

CORPUS = [*FILTERS.values(), *GLOBALS.values(), *METHODS, TESTS]

RENDER_ALL = """
import json, sys
from promptd.prompt.engine import engine
cases, context = json.loads(sys.stdin.read())
out = []
for source in cases:
    try:
        out.append(engine().render(source, context, "t"))
    except Exception as exc:
        out.append("ERROR " + type(exc).__name__ + " " + str(exc.data.get("error")))
print(json.dumps(out))
"""


def render_in_a_process(hash_seed: str) -> list[str]:
    env = dict(os.environ, PYTHONHASHSEED=hash_seed)
    done = subprocess.run([sys.executable, "-c", RENDER_ALL], input=json.dumps([CORPUS, CONTEXT]), capture_output=True, text=True, env=env, timeout=120, check=True)
    return json.loads(done.stdout)


def test_the_corpus_covers_every_filter_and_global_the_dialect_offers():
    env = engine().environment_for(False)
    assert set(FILTERS) == set(env.filters)
    assert set(GLOBALS) == set(env.globals)


def test_every_filter_global_and_method_renders_the_same_bytes_in_two_processes_with_other_hash_seeds():
    first, second = render_in_a_process("1"), render_in_a_process("2")
    assert first == second
    for source, text in zip(CORPUS, first):
        assert not text.startswith("ERROR"), (source, text)
        assert not re.search(r"0x[0-9a-f]{4,}|<[\w.]+ object|\bgenerator\b|range\(", text), (source, text)


@pytest.mark.parametrize(
    ("source", "printed"),
    [
        ("${{ [3, 1, 2]|reverse }}", "[2, 1, 3]"),
        ("${{ range(3) }}", "[0, 1, 2]"),
        ("${{ {'a': 1}|items }}", '[["a", 1]]'),
        ("${{ namespace(a=1) }}", '{"a": 1}'),
        ("${{ [1, 2, 3]|select('odd') }}", "[1, 3]"),
        ("${{ {'a': 1}.keys() }}", '["a"]'),
    ],
)
def test_a_lazy_sequence_prints_as_the_reference_prints_a_list(source, printed):
    assert engine().render(source, {}, "t") == printed


@pytest.mark.parametrize("source", ["${{ joiner() }}", "${{ cycler(1) }}", "${% macro m() %}x${% endmacro %}${{ m }}", "${% for i in [1] %}${{ loop }}${% endfor %}"])
def test_a_value_with_no_printed_form_is_a_render_error_not_an_object_description(source):
    with pytest.raises(TemplateRender):
        engine().render(source, {}, "t")


@pytest.mark.parametrize("source", ["${{ [1, 2]|random }}", "${{ lipsum() }}"])
def test_nothing_draws_random_text(source):
    with pytest.raises(Exception) as refused:
        engine().render(source, {}, "t", strict=True)
    assert refused.value.kind in {"template_syntax", "template_render"}
