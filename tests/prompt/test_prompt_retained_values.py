"""What a template keeps is charged to the render's budget (prompt/limits.py): slices, the results
of filters and methods that copy a value without growing it (`list`, `split`, `trim`), the text of
macros and blocks, and what a namespace stores. Each of these is bounded by a value that exists
already, but a loop keeping one per iteration in a namespace would otherwise hold without limit."""

from __future__ import annotations

import pytest
from jinja2.compiler import CodeGenerator

from promptd.errors import TemplateRender
from promptd.prompt import limits
from promptd.prompt.engine import Engine

# A text of a mebibyte (the same with a space in front, which strip and trim copy it without), and
# a loop keeping a copy of it per iteration.
BIG = {"big": "x" * (1 << 20), "padded": " " + "x" * (1 << 20)}
KEEP = "${% set ns = namespace(a=[]) %}${% for i in range(1000) %}${% set ns.a = ns.a + [COPY] %}${% endfor %}${{ ns.a | length }}"


@pytest.fixture(scope="module")
def engine():
    return Engine()


def _refusal(engine, source, variables=None) -> TemplateRender:
    with pytest.raises(TemplateRender) as caught:
        engine.render(source, variables or {}, "custom")
    return caught.value


@pytest.mark.parametrize(
    "copy",
    ["big[i:]", "big[:-1]", "big | list", "big.split('y')", "padded.strip()", "padded | trim", "m()"],
    ids=["slice", "slice_end", "list_filter", "split", "strip_method", "trim_filter", "macro_output"],
)
def test_a_loop_keeping_copies_of_a_large_text_is_refused_by_the_render_budget(engine, copy):
    source = "${% macro m() %}${{ big }}${% endmacro %}" + KEEP.replace("COPY", copy)
    error = _refusal(engine, source, BIG)
    assert (error.kind, error.data["error"]) == ("template_render", "security")


def test_a_namespace_storing_a_new_list_each_iteration_is_charged_for_its_items(engine):
    items = ", ".join(["i"] * 400)
    source = f"${{% set ns = namespace(a=[]) %}}${{% for i in range(100000) %}}${{% set ns.a = [ns.a, {items}] %}}${{% endfor %}}${{{{ 1 }}}}"
    error = _refusal(engine, source)
    assert error.data["error"] == "security"


def test_the_namespace_slice_example_of_the_docs_is_refused(engine):
    source = "${% set ns = namespace(a=[]) %}${% set big = 'x' * 1000000 %}${% for i in range(100000) %}${% set ns.a = ns.a + [big[i:]] %}${% endfor %}${{ ns.a | length }}"
    assert _refusal(engine, source).data["error"] == "security"


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("${{ text[1:3] }}", "bc"),
        ("${{ text[::-1] }}", "edcba"),
        ("${{ text[:] }}|${{ text[2:] }}|${{ text[:2] }}", "abcde|cde|ab"),
        ("${{ items[1:] | join(',') }}", "2,3"),
        ("${{ (text | list)[1:3] | join }}", "bc"),
        ("${{ text.split('c') | join('/') }}", "ab/de"),
        ("${% set ns = namespace(n=0, s='') %}${% for i in range(3) %}${% set ns.n = ns.n + i %}${% set ns.s = ns.s ~ text[i:i + 1] %}${% endfor %}${{ ns.n }} ${{ ns.s }}", "3 abc"),
        ("${% macro m(x) %}<${{ x }}>${% endmacro %}${% for i in items %}${{ m(i) }}${% endfor %}", "<1><2><3>"),
    ],
)
def test_slices_copies_and_namespaces_in_ordinary_use_render_as_before(engine, source, expected):
    assert engine.render(source, {"text": "abcde", "items": [1, 2, 3]}, "custom") == expected


def test_a_slice_of_something_that_cannot_be_sliced_fails_as_python_does(engine):
    error = _refusal(engine, "${{ number[1:] }}", {"number": 5})
    assert error.data["error"] == "TypeError"


def test_a_thousand_steps_building_30_kib_still_fit_the_budget(engine):
    # The figure docs/templates-design.md promises, with every kept copy now charged.
    source = "${% set ns = namespace(s='') %}${% for i in range(1000) %}${% set ns.s = ns.s ~ piece %}${% endfor %}${{ ns.s | length }}"
    assert engine.render(source, {"piece": "x" * 30}, "custom") == "30000"


def test_compiled_templates_call_the_slice_and_namespace_hooks(engine):
    code = engine.environment.compile("${% set ns = namespace() %}${% set ns.a = t[1:2] %}${{ t[::2] }}", raw=True)
    assert "environment.sliced(" in code and "environment.keep(" in code and "[1:2]" not in code


@pytest.mark.parametrize("name", ["visit_Getitem", "visit_NSRef"])
def test_the_code_generator_methods_the_engine_replaces_still_exist_in_jinja(name):
    assert hasattr(CodeGenerator, name)


def test_charges_only_apply_inside_a_render_budget():
    limits.charge(10**12, "outside any render")  # no budget: nothing to charge
    with limits.render_budget(100), pytest.raises(Exception, match="larger than the sandbox allows"):
        limits.charge(101, "a slice")
