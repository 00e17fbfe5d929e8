"""The template dialect: delimiters, whitespace, lenient undefined, the verbatim fast path, the
sandbox, errors naming template and line, and the compile cache."""

from __future__ import annotations

import time
import tracemalloc

import pytest

from promptd.errors import TemplateRender, TemplateSyntax
from promptd.prompt.engine import CACHE_ENTRIES, Engine
from promptd.prompt.sandbox import MAX_OUTPUT_CHARS

TOOLS = {"tools": {"by_kind": {"read": "read_file", "plan": "todo_write"}}, "params": {"edit": {"old_string": "old_text"}}, "os_name": "macos"}


@pytest.fixture
def engine():
    return Engine()


def render(engine, source, variables=TOOLS):
    return engine.render(source, variables, "t")


def test_variables_blocks_and_comments_use_the_dollar_delimiters(engine):
    source = "${# gone #}Read with ${{ tools.by_kind.read }}${% if tools.by_kind.plan %}, plan with ${{ tools.by_kind.plan }}${% endif %}."
    assert render(engine, source) == "Read with read_file, plan with todo_write."


def test_the_dash_strips_whitespace_on_its_side_only(engine):
    source = "a\n${%- if tools.by_kind.read %}\nb\n${%- endif %}\nc"
    assert render(engine, source) == "a\nb\nc"
    assert render(engine, "a  ${{- os_name -}}  b") == "amacosb"
    assert render(engine, "a\n${% if tools.by_kind.read %}\nb\n${% endif %}\nc") == "a\n\nb\n\nc"


def test_blocks_are_neither_trimmed_nor_left_stripped(engine):
    assert render(engine, "x\n    ${% if true %}y${% endif %}\nz") == "x\n    y\nz"


def test_the_templates_final_newline_is_dropped_and_others_kept(engine):
    assert render(engine, "${{ os_name }}\n") == "macos"
    assert render(engine, "${{ os_name }}\n\n") == "macos\n"


def test_a_template_without_markers_is_returned_verbatim_with_its_final_newline(engine):
    text = "Plain text with {{ braces }}, ${VAR} and {# no comment #}.\n"
    assert render(engine, text) == text
    assert not engine.is_cached(text)


def test_comments_never_ship_even_when_they_are_the_only_markup(engine):
    assert render(engine, "Plain text ${# a note for the prompt owner #}and more.\n") == "Plain text and more."
    assert render(engine, "Plain ${# note #}${{ os_name }}") == "Plain macos"


def test_literal_double_braces_and_shell_variables_pass_through_a_template(engine):
    assert render(engine, "{{ x }} ${HOME} $${{ os_name }} {% raw %}") == "{{ x }} ${HOME} $macos {% raw %}"


def test_a_missing_tool_renders_empty_and_is_false_in_a_condition(engine):
    assert render(engine, "[${{ tools.by_kind.web }}]${% if tools.by_kind.web %}web${% else %}none${% endif %}") == "[]none"
    assert render(engine, "[${{ no_such_variable }}]") == "[]"


def test_attribute_access_on_an_undefined_value_is_an_error_naming_template_and_line(engine):
    with pytest.raises(TemplateRender) as caught:
        render(engine, "line one\n${{ tools.by_kind.web.name }}")
    assert caught.value.kind == "template_render"
    assert caught.value.data["template"] == "t" and caught.value.data["line"] == 2


def test_mapping_attributes_are_keys_first_and_the_reading_methods_stay_callable(engine):
    variables = {"tools": {"by_kind": {"keys": "key_tool", "read": "r"}}}
    assert render(engine, "${{ tools.by_kind.keys }}", variables) == "key_tool"
    assert render(engine, "${% for k, v in tools.by_kind.items() %}${{ k }}=${{ v }};${% endfor %}", variables) == "keys=key_tool;read=r;"
    assert render(engine, "[${{ tools.by_kind.pop }}][${{ tools.by_kind.update }}]", variables) == "[][]"


def test_params_name_parameters_by_tool_kind(engine):
    assert render(engine, "${{ params.edit.old_string }}") == "old_text"


def test_none_renders_as_the_reference_prints_it_and_undefined_as_empty_text(engine):
    # Unset context fields are "" before they reach a template; `none` itself prints as MiniJinja does.
    assert render(engine, "[${{ none }}][${{ value }}][${{ missing }}]", {"value": None}) == "[none][none][]"


def test_no_autoescaping_of_html(engine):
    assert render(engine, "${{ v }}", {"v": "<b>&</b>"}) == "<b>&</b>"


@pytest.mark.parametrize(
    "source",
    [
        "${{ ''.__class__ }}",
        "${{ os_name.__class__.__mro__ }}",
        "${{ self.__init__.__globals__ }}",
        "${{ range.__globals__ }}",
        "${{ cycler.__init__.__globals__.os }}",
        "${% for c in ''.__class__.__base__.__subclasses__() %}${{ c }}${% endfor %}",
    ],
)
def test_a_template_reaching_for_python_internals_fails_with_a_clear_error(engine, source):
    with pytest.raises(TemplateRender) as caught:
        render(engine, source)
    assert caught.value.kind == "template_render" and caught.value.data["error"] == "security"


def test_data_cannot_be_modified_from_a_template(engine):
    variables = {"tools": {"by_kind": {"read": "r"}}, "items": [1]}
    with pytest.raises(TemplateRender):
        render(engine, "${{ items.append(2) }}", variables)
    assert variables["items"] == [1]


@pytest.mark.parametrize("source", ["${{ 'x' * 100000000 }}", "${{ [1] * 100000000 }}", "${{ 10 ** 100000 }}", "${% for i in range(1000000) %}${% endfor %}"])
def test_runaway_sizes_are_refused(engine, source):
    with pytest.raises(TemplateRender):
        render(engine, source)


# -- size bounds: refused before the value exists -----------------------------------------------

# Each vector, unbounded, holds the GIL for seconds or allocates hundreds of MiB before the output
# check could see it. Bounded, it is refused in milliseconds having allocated next to nothing.
REFUSAL_SECONDS = 1.0
REFUSAL_PEAK_BYTES = 64 << 20


def assert_refused_quickly(engine, source, variables=TOOLS):
    tracemalloc.start()
    started = time.process_time()
    try:
        with pytest.raises(TemplateRender) as caught:
            engine.render(source, variables, "t")
    finally:
        elapsed = time.process_time() - started
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    assert caught.value.kind == "template_render" and caught.value.data["error"] == "security"
    assert elapsed < REFUSAL_SECONDS, f"took {elapsed:.2f} s"
    assert peak < REFUSAL_PEAK_BYTES, f"allocated {peak >> 20} MiB"


@pytest.mark.parametrize(
    "source",
    [
        "${{ ((((9**64)**64)**64)**64) }}",
        "${{ 2 ** 5000 }}",
        "${{ 10 ** 100000 }}",
        "${% set n = 9 ** 64 %}${{ n * n * n * n * n * n * n * n * n * n * n * n * n * n * n * n * n * n * n * n * n }}",
        "${% set ns = namespace(n=3) %}${% for i in range(40) %}${% set ns.n = ns.n * ns.n %}${% endfor %}",
    ],
)
def test_an_integer_power_or_product_too_large_is_refused_before_it_is_computed(engine, source):
    assert_refused_quickly(engine, source)


@pytest.mark.parametrize("source", ["${{ 1e300 ** 2 }}", "${{ 1e308 ** 1.5 }}", "${{ (9 ** 64) ** 50.5 }}"])
def test_a_float_power_that_overflows_is_a_clean_refusal(engine, source):
    assert_refused_quickly(engine, source)


def test_powers_and_products_of_a_reasonable_size_still_work(engine):
    assert render(engine, "${{ 2 ** 100 }}") == str(2**100)
    assert render(engine, "${{ 9 ** 64 }}|${{ (-2) ** 3 }}|${{ 2 ** -1 }}|${{ 4 ** 0.5 }}|${{ 1 ** 100000000 }}") == f"{9**64}|-8|0.5|2.0|1"
    assert render(engine, "${{ (2 ** 2000) * (2 ** 2000) }}") == str(2**4000)


@pytest.mark.parametrize(
    "source",
    [
        # printf-style, through the filter and the operator; widths and precisions, given or from *
        '${{ "%0300000000d"|format(1) }}',
        '${{ "%s and %0300000000d"|format("a", 1) }}',
        '${{ "%0300000000d" % 1 }}',
        '${{ "%*d" % (300000000, 1) }}',
        '${{ "%.300000000f" % 1.0 }}',
        '${{ "%(a)0300000000d" % {"a": 1} }}',
        '${{ ("%(a)3000000d" * 100) % {"a": 1} }}',
        # str.format and format_map: width, precision, a nested width, and the sum of fields
        '${{ "{:>300000000}".format(1) }}',
        '${{ "{:.300000000f}".format(1.0) }}',
        '${{ "{0:{1}}".format(1, 300000000) }}',
        '${{ "{a:>300000000}".format_map({"a": 1}) }}',
        '${{ ("{0:>3000000}" * 100).format(1) }}',
        # str methods taking widths and counts, however they are reached
        '${{ "x".ljust(300000000) }}',
        '${{ "x".rjust(300000000) }}',
        '${{ "x".center(300000000) }}',
        '${{ "1".zfill(300000000) }}',
        '${{ ("x"|attr("ljust"))(300000000) }}',
        '${{ ("x"|safe).ljust(300000000) }}',
        '${{ ("x".encode()).ljust(300000000) }}',
        "${{ (tab * 1000).expandtabs(1000000) }}",
        '${{ ("x" * 1000000).join(["a"] * 1000) }}',
        '${{ ("x" * 1000000).replace("x", "y" * 300) }}',
        '${{ ("ab" * 1000).translate({97: "x" * 300000}) }}',
        '${{ (1).to_bytes(300000000, "big") }}',
        # repetition
        '${{ "x" * 300000000 }}',
        '${{ ["x" * 1000000] * 1000 }}',
    ],
)
def test_text_operations_over_the_cap_are_refused_before_they_allocate(engine, source):
    assert_refused_quickly(engine, source, dict(TOOLS, tab="\t"))


@pytest.mark.parametrize(
    "source",
    [
        '${{ "x"|center(300000000) }}',
        '${{ ("a\n" * 100000)|indent(1000) }}',
        '${{ (["a"] * 1000)|join("x" * 1000000) }}',
        '${{ ("x" * 1000000)|replace("x", "y" * 300) }}',
        '${{ ("a " * 100000)|wordwrap(1, wrapstring="x" * 3000) }}',
        "${{ (range(100000)|list)|tojson(1000) }}",
        "${{ (range(1000)|list)|pprint }}",
        "${{ [1]|batch(300000000, 0)|list }}",
        "${{ [1]|slice(300000000)|list|length }}",
        "${% set ns = namespace(l=[[1] * 100000]) %}${% for i in range(6) %}${% set ns.l = ns.l + ns.l %}${% endfor %}${{ (ns.l|sum(start=[]))|length }}",
        '${{ ("<" * 1000000)|e }}',
    ],
)
def test_filters_and_globals_over_the_cap_are_refused_before_they_allocate(engine, source):
    assert_refused_quickly(engine, source)


@pytest.mark.parametrize(
    "source",
    [
        '${% set ns = namespace(s="x") %}${% for i in range(40) %}${% set ns.s = ns.s ~ ns.s %}${% endfor %}',
        '${% set ns = namespace(s="x") %}${% for i in range(40) %}${% set ns.s = ns.s + ns.s %}${% endfor %}',
        "${% set ns = namespace(l=[1]) %}${% for i in range(40) %}${% set ns.l = ns.l + ns.l %}${% endfor %}",
        '${% macro d(s, n) %}${{ d(s ~ s, n - 1) if n else s|length }}${% endmacro %}${{ d("x", 40) }}',
    ],
)
def test_doubling_a_value_again_and_again_is_refused_at_the_cap(engine, source):
    assert_refused_quickly(engine, source)


@pytest.mark.parametrize(
    "source",
    [
        # A list of a thousand references to one megabyte of text is small until it becomes text.
        '${% set ns = namespace(l=["x" * 1000000]) %}${% for i in range(12) %}${% set ns.l = ns.l + ns.l %}${% endfor %}${{ ns.l }}',
        '${% set ns = namespace(l=["x" * 1000000]) %}${% for i in range(12) %}${% set ns.l = ns.l + ns.l %}${% endfor %}${{ ns.l|string }}',
        '${% set ns = namespace(l=["x" * 1000000]) %}${% for i in range(12) %}${% set ns.l = ns.l + ns.l %}${% endfor %}${{ "%s" % (ns.l,) }}',
        '${% set ns = namespace(l=["x" * 1000000]) %}${% for i in range(12) %}${% set ns.l = ns.l + ns.l %}${% endfor %}${{ "{!r}".format(ns.l) }}',
        '${% set ns = namespace(l=["x" * 1000000]) %}${% for i in range(12) %}${% set ns.l = ns.l + ns.l %}${% endfor %}${{ "" ~ ns.l }}',
        # Nested lists sharing their halves: 2**40 leaves, 40 distinct lists.
        '${% macro d(l, n) %}${% if n %}${{ d([l, l], n - 1) }}${% else %}${{ l }}${% endif %}${% endmacro %}${{ d("x", 40) }}',
    ],
)
def test_a_value_whose_text_would_be_over_the_cap_is_refused_before_it_is_written(engine, source):
    assert_refused_quickly(engine, source)


def test_constant_filter_calls_are_not_folded_into_a_huge_value_at_compile_time(engine):
    # Each piece is under the cap, a hundred of them are not; folding would build and join them
    # all in the compiler, before any check.
    assert_refused_quickly(engine, "${{ " + " ~ ".join(['("x"|center(3000000))'] * 100) + " }}")


@pytest.mark.parametrize(
    "source",
    [
        "${{ [" + ", ".join(["'x'.center(3000000)"] * 100) + "]|length }}",
        "${% macro m() %}${{ varargs|length }}${% endmacro %}${{ m(" + ", ".join(["'x' * 1000000"] * 100) + ") }}",
        "${% for i in range(100) %}${% set s = 'x' * 1000000 %}${% endfor %}",
    ],
)
def test_many_values_each_under_the_cap_are_refused_once_a_render_has_built_too_much(engine, source):
    assert_refused_quickly(engine, source)


def test_a_template_assembling_its_text_in_pieces_stays_within_the_render_budget(engine):
    source = "${% set ns = namespace(s='') %}${% for i in range(1000) %}${% set ns.s = ns.s ~ 'line ' ~ i ~ '\\n' %}${% endfor %}${{ ns.s|length }}"
    assert int(render(engine, source)) > 8000


def test_formatting_and_text_operations_within_the_cap_are_unchanged(engine):
    cases = {
        '${{ "%s=%05.1f"|format("pi", 3.14159) }}': "pi=003.1",
        '${{ "%(a)s-%(b)3d" % {"a": "x", "b": 7} }}': "x-  7",
        '${{ "%*d|%-4s|%%" % (4, 2, "ab") }}': "   2|ab  |%",
        '${{ "{:>6}|{:.2f}|{!r}|{:,}".format("ab", 2.0, "q", 1234567) }}': "    ab|2.00|'q'|1,234,567",
        '${{ "{a}{b:^5}".format_map({"a": 1, "b": "c"}) }}': "1  c  ",
        '${{ "ab".ljust(4, ".") }}|${{ "7".zfill(3) }}|${{ "x".center(5, "*") }}': "ab..|007|**x**",
        '${{ ",".join(["a", "b"]) }}|${{ "aXa".replace("X", "yy") }}|${{ "a\tb".expandtabs(4) }}': "a,b|ayya|a   b",
        '${{ "x"|center(5) }}|${{ [1, 2]|join(", ") }}|${{ "a\nb"|indent(2) }}': "  x  |1, 2|a\n  b",
        '${{ {"a": [1, 2]}|tojson }}|${{ [1, 2, 3]|batch(2, 0)|list }}|${{ [[1], [2]]|sum(start=[]) }}': '{"a": [1, 2]}|[[1, 2], [3, 0]]|[1, 2]',
        "${{ 'a' ~ 1 ~ [2] }}|${{ 'ab' * 2 }}|${{ [1] + [2] }}|${{ 7 % 3 }}|${{ 'x' + 'y' }}": "a1[2]|abab|[1, 2]|1|xy",
    }
    for source, expected in cases.items():
        assert render(engine, source) == expected, source
    assert len(render(engine, "${{ 'x' * 1000000 }}")) == 1000000
    assert len(render(engine, "${{ ([1] * 100000)|join(',') }}")) == 199999


def test_output_beyond_the_cap_is_refused(engine):
    source = "${% for i in range(100000) %}" + "x" * 64 + "${% endfor %}"
    assert 100000 * 64 > MAX_OUTPUT_CHARS
    with pytest.raises(TemplateRender):
        render(engine, source)


def test_a_syntax_error_names_template_and_line(engine):
    with pytest.raises(TemplateSyntax) as caught:
        engine.render("ok\n${% if x %}\nno end", {}, "custom")
    assert caught.value.kind == "template_syntax"
    assert caught.value.data["template"] == "custom" and caught.value.data["line"] >= 2


def test_errors_from_operators_on_data_are_render_errors_not_crashes(engine):
    for source in ("${{ 1 + 'a' }}", "${{ 1 // 0 }}", "${{ '%d' % 'x' }}"):
        with pytest.raises(TemplateRender):
            render(engine, source)


@pytest.fixture
def compiles(monkeypatch) -> list[str]:
    """The name of each template Jinja compiles, in order."""
    from promptd.prompt import engine as module

    seen: list[str] = []
    compile_tree = module.compile_tree

    def counted(env, source, tree, name, *args, **kwargs):
        seen.append(name)
        return compile_tree(env, source, tree, name, *args, **kwargs)

    monkeypatch.setattr(module, "compile_tree", counted)
    return seen


def test_a_second_render_of_the_same_source_does_not_compile_it_again(engine, compiles):
    assert render(engine, "${{ os_name }}") == render(engine, "${{ os_name }}") == "macos"
    assert compiles == ["t"] and engine.is_cached("${{ os_name }}")
    # Strict and lenient undefined are two templates: one compile each.
    engine.render("${{ os_name }}", TOOLS, "t", strict=True)
    engine.render("${{ os_name }}", TOOLS, "t", strict=True)
    assert compiles == ["t", "t"]


def test_an_uncached_render_is_compiled_every_time_and_leaves_nothing_in_the_cache(engine, compiles):
    for _ in range(2):
        assert engine.render("secret ${{ os_name }}", TOOLS, "apply_patch", cache=False) == "secret macos"
    assert compiles == ["apply_patch", "apply_patch"]
    assert not engine.is_cached("secret ${{ os_name }}")


def test_the_cache_is_bounded_and_forgets_the_least_recently_used_first(engine, compiles):
    sources = [f"${{{{ os_name }}}} {i}" for i in range(CACHE_ENTRIES + 10)]
    render(engine, sources[0])
    for source in sources[1:]:
        render(engine, source)
        render(engine, sources[0])  # used after every other: never the least recent
    assert [engine.is_cached(source) for source in sources[1:11]] == [False] * 10
    assert all(engine.is_cached(source) for source in [sources[0], *sources[11:]])
    del compiles[:]
    render(engine, sources[-1])
    render(engine, sources[1])
    assert compiles == ["t"]


def test_suggestions_are_offered_for_string_names_only():
    from promptd.prompt.names import suggest

    assert suggest(5, ["5", "a"]) == [] and suggest(None, ["a"]) == []
    assert suggest("reed", ["read", 5, None]) == ["read"]
