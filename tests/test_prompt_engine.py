"""The template dialect: delimiters, whitespace, lenient undefined, the verbatim fast path, the
sandbox, errors naming template and line, and the compile cache."""

from __future__ import annotations

import pytest

from promptd.errors import TemplateRender, TemplateSyntax
from promptd.prompt.engine import CACHE_ENTRIES, MAX_OUTPUT_CHARS, Engine

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
    text = "Plain text with {{ braces }}, ${VAR} and ${# not a comment here #}.\n"
    assert render(engine, text) == text
    assert engine.cached_sources() == []


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


def test_none_renders_as_empty_text_never_as_the_word(engine):
    assert render(engine, "[${{ none }}][${{ value }}]", {"value": None}) == "[][]"


def test_no_autoescaping_of_html(engine):
    assert render(engine, "${{ v }}", {"v": "<b>&</b>"}) == "<b>&</b>"


@pytest.mark.parametrize(
    "source",
    [
        "${{ ''.__class__ }}",
        "${{ os_name.__class__.__mro__ }}",
        "${{ self.__init__.__globals__ }}",
        "${{ lipsum.__globals__ }}",
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


def test_compiled_templates_are_cached_and_reused(engine):
    source = "${{ os_name }}"
    first = engine.compile(source, "t")
    assert engine.compile(source, "t") is first
    assert engine.is_cached(source)


def test_an_uncached_compile_leaves_nothing_in_the_cache(engine):
    assert render(engine, "${{ os_name }}") == "macos"
    engine.render("secret ${{ os_name }}", TOOLS, "apply_patch", cache=False)
    assert engine.cached_sources() == ["${{ os_name }}"]


def test_the_cache_is_bounded(engine):
    for i in range(CACHE_ENTRIES + 10):
        render(engine, f"${{{{ os_name }}}} {i}")
    assert len(engine.cached_sources()) == CACHE_ENTRIES
