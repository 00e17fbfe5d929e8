"""The guard lint: every ${{ tools.by_kind.X }} inside a condition that implies tools.by_kind.X."""

from __future__ import annotations

import pytest

from promptd.prompt.lint import lint
from promptd.prompt.pipeline import shipped_source
from promptd.prompt.vault import TEMPLATES


def kinds(source, exempt=()):
    # The guard rule alone: these sources read names of their own (`items`, `m`, ...).
    return [(v.line, v.column, v.kind) for v in lint(source, exempt, strict=False) if v.kind != "not_portable"]


@pytest.mark.parametrize(
    "source",
    [
        "${%- if tools.by_kind.read %}${{ tools.by_kind.read }}${%- endif %}",
        "${% if tools.by_kind.read %}${{ tools.by_kind.read }}${% endif %}",
        "${% if tools.by_kind['read'] %}${{ tools.by_kind['read'] }}${% endif %}",
        "${% if not tools.by_kind.read %}none${% else %}${{ tools.by_kind.read }}${% endif %}",
        "${% if tools.by_kind.a and tools.by_kind.b %}${{ tools.by_kind.a }}/${{ tools.by_kind.b }}${% endif %}",
        "${% if tools.by_kind.a %}${% if tools.by_kind.b %}${{ tools.by_kind.a }}${{ tools.by_kind.b }}${% endif %}${% endif %}",
        "${% if not tools.by_kind.a %}x${% elif tools.by_kind.b %}${{ tools.by_kind.a }}${{ tools.by_kind.b }}${% endif %}",
        "${% if not (tools.by_kind.a or tools.by_kind.b) %}x${% else %}y${% endif %}",
        "${% if not tools.by_kind.a or not tools.by_kind.b %}x${% else %}${{ tools.by_kind.a }}${{ tools.by_kind.b }}${% endif %}",
        '${% if tools.by_kind.read == "hashline_read" %}${{ tools.by_kind.read }}${% endif %}',
        "${{ tools.by_kind.read if tools.by_kind.read else 'cat' }}",
        "${% for kind, name in tools.by_kind.items() %}${{ name }}${% endfor %}",
        "${% if tools.by_kind.read %}${% for i in [1] %}${{ tools.by_kind.read }}${% endfor %}${% endif %}",
        "no markers at all: {{ tools.by_kind.read }}",
    ],
)
def test_guarded_references_pass(source):
    assert kinds(source) == []


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("${{ tools.by_kind.read }}", [(1, 5, "unguarded_tool")]),
        ("x\n  ${{ tools.by_kind['edit'] | upper }}", [(2, 7, "unguarded_tool")]),
        ("${% if tools.by_kind.read %}a${% else %}${{ tools.by_kind.read }}${% endif %}", [(1, 45, "unguarded_tool")]),
        ("${% if tools.by_kind.a or tools.by_kind.b %}${{ tools.by_kind.a }}${% endif %}", [(1, 49, "unguarded_tool")]),
        ("${% if tools.by_kind.a %}${{ tools.by_kind.b }}${% endif %}", [(1, 30, "unguarded_tool")]),
        ("${% if tools.by_kind.a %}${% elif tools.by_kind.b %}${{ tools.by_kind.a }}${% endif %}", [(1, 57, "unguarded_tool")]),
        ("${% if not tools.by_kind.a %}${{ tools.by_kind.a }}${% endif %}", [(1, 34, "unguarded_tool")]),
        ("${% if tools.by_kind.a is defined %}${{ tools.by_kind.a }}${% endif %}", [(1, 41, "unguarded_tool")]),
        ("${% if tools.by_kind.a != '' %}${{ tools.by_kind.a }}${% endif %}", [(1, 36, "unguarded_tool")]),
        ("${{ 'x' if tools.by_kind.a else tools.by_kind.a }}", [(1, 33, "unguarded_tool")]),
        ("${% if tools.by_kind.a %}${% endif %}${{ tools.by_kind.a }}", [(1, 42, "unguarded_tool")]),
        # `a and b` outputs a when a is empty: the right side is guarded, the left is not.
        ("${{ tools.by_kind.read and tools.by_kind.read | upper }}", [(1, 5, "unguarded_tool")]),
        ("${% for k in ['a'] %}${{ tools.by_kind[k] }}${% endfor %}", [(1, 26, "dynamic_tool")]),
        (
            "${% if tools.by_kind.a %}\n${{ tools.by_kind.a }} ${{ tools.by_kind.b }}\n${% endif %}${{ tools.by_kind.a }}",
            [(2, 28, "unguarded_tool"), (3, 17, "unguarded_tool")],
        ),
    ],
)
def test_unguarded_references_are_reported_with_line_and_column(source, expected):
    assert kinds(source) == expected


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        # An alias carries the name to wherever the variable is written.
        ("${% set t = tools.by_kind.read %}${{ t }}", [(1, 13, "unguarded_tool")]),
        ("${% set ns = namespace() %}${% set ns.t = tools.by_kind.read %}", [(1, 43, "unguarded_tool")]),
        ("${% with t = tools.by_kind.read %}${{ t }}${% endwith %}", [(1, 14, "unguarded_tool")]),
        ("${% for t in [tools.by_kind.read] %}${{ t }}${% endfor %}", [(1, 15, "unguarded_tool")]),
        ("${% for t in tools.by_kind.read %}${{ t }}${% endfor %}", [(1, 14, "unguarded_tool")]),
        # Arguments of filters, calls and macros, and macro defaults.
        ("${{ 'x'|replace('x', tools.by_kind.read) }}", [(1, 22, "unguarded_tool")]),
        ("${% macro m(a) %}${{ a }}${% endmacro %}${{ m(tools.by_kind.read) }}", [(1, 47, "unguarded_tool")]),
        ("${% macro m(a=tools.by_kind.read) %}${{ a }}${% endmacro %}", [(1, 15, "unguarded_tool")]),
        ("${% filter replace('x', tools.by_kind.read) %}x${% endfilter %}", [(1, 25, "unguarded_tool")]),
        ("${% call(x=tools.by_kind.read) m(tools.by_kind.edit) %}${% endcall %}", [(1, 12, "unguarded_tool"), (1, 34, "unguarded_tool")]),
        ("${% set t %}${{ tools.by_kind.read }}${% endset %}", [(1, 17, "unguarded_tool")]),
        # On a later line, after a guard that has ended.
        ("${% if tools.by_kind.read %}ok${% endif %}\n  ${% set t = tools.by_kind.read %}", [(2, 15, "unguarded_tool")]),
        # The mapping itself, copied or reached indirectly, and a computed key of the namespace.
        ("${% set t = tools.by_kind %}${{ t.read }}", [(1, 13, "aliased_tools")]),
        ("${% set t = tools %}${{ t.by_kind.read }}", [(1, 13, "aliased_tools")]),
        ("${{ (tools|attr('by_kind')).read }}", [(1, 6, "aliased_tools")]),
        ("${{ (tools.by_kind or {}).read }}", [(1, 6, "aliased_tools")]),
        ("${{ tools['by_kind'].read }}", [(1, 5, "unguarded_tool")]),
        ("${% for k in ['by_kind'] %}${{ tools[k].read }}${% endfor %}", [(1, 32, "dynamic_tool")]),
    ],
)
def test_a_tool_name_copied_into_a_variable_loop_or_argument_is_reported(source, expected):
    assert kinds(source) == expected


@pytest.mark.parametrize(
    "source",
    [
        "${% if tools.by_kind.read %}${% set t = tools.by_kind.read %}${{ t }}${% endif %}",
        "${% if tools.by_kind.read %}${% for t in [tools.by_kind.read] %}${{ t }}${% endfor %}${% endif %}",
        "${% if tools.by_kind.read %}${% with t = tools.by_kind.read %}${{ t }}${% endwith %}${% endif %}",
        "${% if tools.by_kind.read %}${{ 'x'|replace('x', tools.by_kind.read) }}${% endif %}",
        "${% macro m(a) %}${{ a }}${% endmacro %}${% if tools.by_kind.read %}${{ m(tools.by_kind.read) }}${% endif %}",
        "${% if tools.by_kind.read %}${% macro m(a=tools.by_kind.read) %}${{ a }}${% endmacro %}${% endif %}",
        "${% for t in items if tools.by_kind.read %}${{ tools.by_kind.read }}${% endfor %}",
        "${% set t = tools.by_kind.read if tools.by_kind.read else 'cat' %}",
        # Tested only: the value never leaves the condition.
        "${% set ok = tools.by_kind.read is defined %}${% if ok %}x${% endif %}",
        "${% if tools.by_kind|length > 2 %}x${% endif %}",
        # What the mapping becomes through these can no longer be looked up by kind.
        "${% for kind, name in tools.by_kind|dictsort %}${{ name }}${% endfor %}",
        "${% set count = tools.by_kind|length %}${{ count }}",
        "${% for name in tools.by_kind.values() %}${{ name }}${% endfor %}",
    ],
)
def test_the_guarded_or_tested_forms_of_those_uses_pass(source):
    assert kinds(source) == []


def test_exempt_kinds_need_no_guard():
    assert kinds("${{ tools.by_kind.search }}", exempt=["search"]) == []
    assert kinds("${{ tools.by_kind.search }}") == [(1, 5, "unguarded_tool")]


def test_a_syntax_error_is_one_violation_with_its_line():
    assert kinds("ok\n${% if tools.by_kind.read %}") == [(2, 1, "syntax")]


@pytest.mark.parametrize("path", ["primary.jinja", "subagent.jinja", "unsealed/apply_patch.jinja"])
def test_the_shipped_templates_pass_without_any_exemption(path):
    assert lint((TEMPLATES / path).read_text("utf-8"), exempt=()) == []


def test_the_shipped_sources_are_what_the_pipeline_renders():
    assert shipped_source("primary") == (TEMPLATES / "primary.jinja").read_text("utf-8")


# -- the holes the guard rule had, and the checks around it ---------------------------------------


def findings(source, **options):
    # Portability warnings have their own tests below (`.get()` is one).
    return [(v.line, v.column, v.kind) for v in lint(source, **options) if v.kind != "not_portable"]


def test_get_with_a_constant_kind_is_that_tool_and_needs_its_guard():
    assert findings('${{ tools.by_kind.get("read") }}') == [(1, 5, "unguarded_tool")]
    assert findings('${% if tools.by_kind.read %}${{ tools.by_kind.get("read") }}${% endif %}') == []
    assert findings("${% for k in ['read'] %}${{ tools.by_kind.get(k) }}${% endfor %}") == [(1, 29, "dynamic_tool")]
    assert findings('${% if tools.by_kind.get("read") %}x${% endif %}') == []


def test_no_tool_kind_is_exempt_by_default():
    assert findings("${{ tools.by_kind.search }}") == [(1, 5, "unguarded_tool")]


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("${% if params.edit.old_string %}x${% endif %}", [(1, 8, "unguarded_param")]),
        ("${{ params.edit.old_string }}", [(1, 5, "unguarded_param")]),
        ("${{ params['edit']['old_string'] }}", [(1, 5, "unguarded_param")]),
        ("${% if params.edit %}${{ params.edit.old_string }}${% endif %}", []),
        ("${% if params.edit and params.edit.old_string %}${{ params.edit.old_string }}${% endif %}", []),
        ("${% if params.edit %}${% else %}${{ params.edit.old_string }}${% endif %}", [(1, 37, "unguarded_param")]),
        ("${% if params.read %}${{ params.edit.new_string }}${% endif %}", [(1, 26, "unguarded_param")]),
    ],
)
def test_a_parameter_of_a_kind_is_read_only_inside_a_condition_on_that_kind(source, expected):
    assert findings(source) == expected


def test_names_no_render_defines_are_found_with_what_they_probably_meant():
    found = lint("Dir: ${{ working_dir }}\n${% if is_non_interactve %}HEADLESS${% endif %}")
    assert [(v.line, v.column, v.kind) for v in found] == [(1, 10, "undefined_variable"), (2, 8, "undefined_variable")]
    assert "`working_directory`" in found[0].message and "`is_non_interactive`" in found[1].message


def test_declared_flags_template_locals_and_globals_are_defined():
    assert findings("${% if host_flag %}x${% endif %}") == [(1, 8, "undefined_variable")]
    assert findings("${% if host_flag %}x${% endif %}", flags=["host_flag"]) == []
    assert findings("${% set n = namespace(c=0) %}${% for i in range(3) %}${{ i }}${{ loop.index }}${% endfor %}${{ n.c }}") == []
    assert findings("${% if host_flag %}x${% endif %}", strict=False) == []


def test_what_fails_only_at_compile_time_is_a_finding():
    assert findings("ok\n${{ os_name | shout }}") == [(2, 15, "syntax")]
    assert findings("${% if os_name is shouting %}x${% endif %}") == [(1, 19, "syntax")]


def test_a_misspelled_tool_kind_is_questioned_and_a_declared_or_unrelated_one_is_not():
    assert findings("${% if tools.by_kind.excute %}x${% endif %}") == [(1, 8, "unknown_tool_kind")]
    assert findings("${% if tools.by_kind.excute %}x${% endif %}", tool_kinds=["excute"]) == []
    assert findings("${% if tools.by_kind.browser %}${{ tools.by_kind.browser }}${% endif %}") == []
    assert findings("${{ tools.bykind.read }}") == [(1, 5, "undefined_variable")]


def test_python_only_methods_and_filters_are_portability_warnings():
    found = lint("${% if os_name.startswith('win') %}${{ os_name | wordcount }}${% endif %}")
    assert [(v.column, v.kind, v.severity) for v in found] == [(16, "not_portable", "warning"), (50, "not_portable", "warning")]


def test_the_portability_rule_reads_its_names_from_data(monkeypatch):
    import promptd.prompt.lint as module

    monkeypatch.setattr(module, "PYTHON_ONLY_FILTERS", module.PYTHON_ONLY_FILTERS | {"upper"})  # as portability.JINJA2_ONLY_FILTERS grows
    assert [v.kind for v in module.lint("${{ os_name | upper }}", flags=["cache-buster"])] == ["not_portable"]


def test_a_sealed_envelope_is_refused_with_a_clear_reason():
    from promptd.errors import TemplateSyntax
    from promptd.prompt import vault

    sealed = vault.seal(b"${{ tools.by_kind.read }}", vault.DEFAULT_KEY, "apply_patch").decode()
    with pytest.raises(TemplateSyntax) as caught:
        lint(sealed)
    assert caught.value.data["reason"] == "sealed"
    assert lint('{"format": "something else"}') == []


def test_a_deeply_nested_envelope_is_refused_as_sealed_without_being_parsed():
    from conftest import call_in_process

    from promptd.methods.boundary import RpcFailure

    source = '{"format": "promptd-vault/1", "x": ' + "[" * 100_000 + "]" * 100_000 + "}"
    with pytest.raises(RpcFailure) as caught:
        call_in_process("prompt/lint", {"template": source})
    assert (caught.value.data["kind"], caught.value.data["reason"]) == ("template_syntax", "sealed")


def test_an_envelope_with_millions_of_members_is_refused_in_little_memory():
    import tracemalloc

    from promptd.errors import TemplateSyntax

    source = '{"format": "promptd-vault/1", "x": [' + "{}," * 5_000_000 + "{}]}"
    tracemalloc.start()
    try:
        with pytest.raises(TemplateSyntax) as caught:
            lint(source)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert caught.value.data["reason"] == "sealed"
    assert peak < 2 * len(source) + (4 << 20)  # the normalized copy at most, no parsed document


def test_an_envelope_is_recognised_by_its_format_member_in_the_head_only():
    from promptd.prompt.vault import ENVELOPE_HEAD_CHARS, has_envelope_head

    assert has_envelope_head('{"id": "primary", "version": 2, "format": "promptd-vault/1", "nonce": ""}')
    assert not has_envelope_head('{"note": "promptd-vault/1"}')
    assert not has_envelope_head('Sealed files say {"format": "promptd-vault/1"}')
    assert not has_envelope_head("{" + " " * ENVELOPE_HEAD_CHARS + '"format": "promptd-vault/1"}')


def test_lint_results_are_cached_by_content_and_options():
    import promptd.prompt.lint as module

    source = "${{ tools.by_kind.read }}\n" * 50 + "# unique 7f3a"
    first = module.lint(source)
    assert len(module._cache) >= 1 and module.lint(source) == first
    assert module.lint(source, exempt=["read"]) == []  # other options, another entry
    for index in range(module.CACHE_ENTRIES + 5):
        module.lint(f"x{index}")
    assert len(module._cache) == module.CACHE_ENTRIES


def test_crlf_and_a_bom_do_not_move_the_positions():
    assert findings("\ufeffa\r\n  ${{ tools.by_kind.read }}\r\n") == [(2, 7, "unguarded_tool")]


def test_a_name_set_inside_a_branch_is_the_templates_own():
    assert findings("${% if tools.by_kind.read %}${% set reader = tools.by_kind.read %}Use ${{ reader }}.${% endif %}") == []
    assert findings("${% if os_name %}${% macro m() %}x${% endmacro %}${{ m() }}${% endif %}") == []
