"""The pipeline: modes x audiences x overrides, golden outputs of the shipped templates, the sweep
over tool subsets, audience and non-interactive handling, and errors instead of empty prompts."""

from __future__ import annotations

import itertools
import os
from pathlib import Path

import pytest
from support import rendering

from promptd.errors import InvalidContext, TemplateRender, TemplateSyntax
from promptd.prompt import pipeline
from promptd.prompt.context import parse_context

GOLDEN = Path(__file__).resolve().parent / "golden"
# Regenerate after an intended template change: PROMPTD_UPDATE_GOLDEN=1 pytest tests/prompt/test_prompt_pipeline.py
UPDATE = os.environ.get("PROMPTD_UPDATE_GOLDEN") == "1"

ALL_TOOLS = {
    "read": "read_file",
    "edit": "edit_file",
    "list": "list_dir",
    "search": "grep",
    "execute": "run_terminal_command",
    "plan": "todo_write",
    "web": "web_search",
    "task": "spawn_subagent",
    "memory": "memory_search",
    "patch": "apply_patch",
}
ENVIRONMENT = {"os_name": "macos", "shell_path": "/bin/zsh", "working_directory": "/Users/example/project", "current_date": "2025-07-16"}


def render(context: dict, tools=ALL_TOOLS, **kwargs):
    return rendering.render(parse_context(context), tools, **kwargs)


# -- modes x audiences x overrides -------------------------------------------------------------

BODY = "Body for ${{ system_prompt_label }}."
OVERRIDES = {"none": "none", "codex": "codex", "custom": {"custom": "Custom base for ${{ audience }}."}}


@pytest.mark.parametrize("mode", ["extend", "full"])
@pytest.mark.parametrize("audience", ["primary", "subagent"])
@pytest.mark.parametrize("override", sorted(OVERRIDES))
def test_every_mode_audience_and_override_picks_the_right_template(mode, audience, override):
    result = render({"prompt_mode": mode, "audience": audience, "system_prompt": OVERRIDES[override], "prompt_body": BODY})
    if mode == "full":
        assert result.template == "full" and result.text == "Body for Grok."
        return
    expected = {"none": audience, "codex": "apply_patch", "custom": "custom"}[override]
    assert result.template == expected
    assert result.text.endswith("\n\nBody for Grok.")
    base = result.text[: -len("\n\nBody for Grok.")]
    if override == "custom":
        assert base == f"Custom base for {audience}."
    else:
        assert base == render({"audience": audience, "system_prompt": override}).text


def test_extend_without_a_body_is_the_base_alone():
    assert render({}).text == render({"prompt_body": "   \n"}).text
    assert not render({}).text.endswith("\n")


def test_the_result_carries_the_sha256_and_length_of_the_text():
    import hashlib

    result = render({"system_prompt_label": "Ünï"})
    assert result.sha256 == hashlib.sha256(result.text.encode("utf-8")).hexdigest()
    assert result.chars == len(result.text)


def test_full_mode_without_a_body_is_an_error_not_an_empty_prompt():
    with pytest.raises(InvalidContext) as caught:
        render({"prompt_mode": "full"})
    assert caught.value.data["field"] == "prompt_body"


def test_an_empty_custom_template_is_an_error():
    with pytest.raises(InvalidContext) as caught:
        render({"system_prompt": {"custom": "  "}})
    assert caught.value.data["field"] == "system_prompt.custom"


def test_a_template_rendering_to_nothing_is_an_error():
    with pytest.raises(TemplateRender) as caught:
        render({"system_prompt": {"custom": "${% if tools.by_kind.nothing %}x${% endif %}"}})
    assert caught.value.data["template"] == "custom"


def test_errors_in_the_body_name_the_body():
    with pytest.raises(TemplateSyntax) as caught:
        render({"prompt_body": "fine\n${% if %}"})
    assert caught.value.data["template"] == "body" and caught.value.data["line"] == 2
    with pytest.raises(TemplateRender) as caught:
        render({"prompt_body": "${{ tools.by_kind.zzz.name }}"})
    assert caught.value.data["template"] == "body"


# -- audience, non-interactive, variables --------------------------------------------------------

ROLES = {"role_instructions": "Review every diff for missing tests.", "role_summaries": ["reviewer: reads diffs", "tester: writes tests"]}


def test_primary_injects_role_instructions_and_lists_role_summaries():
    text = render(ROLES).text
    assert "Review every diff for missing tests." in text
    assert "- reviewer: reads diffs" in text and "- tester: writes tests" in text


def test_a_subagent_renders_its_own_role_and_persona_but_no_catalog_of_roles():
    persona = {"persona_instructions": "You are terse and precise."}
    text = render({**ROLES, **persona, "audience": "subagent"}).text
    assert "<role_instructions>\nReview every diff for missing tests.\n</role_instructions>" in text
    assert "<persona>\nYou are terse and precise.\n</persona>" in text
    assert "reviewer: reads diffs" not in text
    assert text.index("</role_instructions>") < text.index("<persona>") < text.index("<report>")
    custom = {"custom": "[${{ role_instructions }}][${{ persona_instructions }}][${{ role_summaries | join(',') }}][${{ persona_summaries | join(',') }}]"}
    both = {**ROLES, **persona, "persona_summaries": ["- **reviewer** [user]: reads"], "system_prompt": custom}
    assert render({**both, "audience": "subagent"}).text == "[Review every diff for missing tests.][You are terse and precise.][][]"
    assert render(both).text == "[Review every diff for missing tests.][You are terse and precise.][reviewer: reads diffs,tester: writes tests][- **reviewer** [user]: reads]"


def test_a_subagent_without_role_or_persona_has_neither_block():
    text = render({"audience": "subagent"}).text
    assert "<role_instructions>" not in text and "<persona>" not in text


def test_primary_renders_the_persona_after_the_role():
    text = render({**ROLES, "persona_instructions": "Be kind."}).text
    assert text.index("</role_instructions>") < text.index("<persona>\nBe kind.\n</persona>")


def test_memory_paths_are_template_variables_and_empty_when_unset():
    custom = {"custom": "[${{ memory_global_path }}][${{ memory_workspace_path }}]"}
    assert render({"system_prompt": custom}).text == "[][]"
    given = {"system_prompt": custom, "memory_global_path": "~/.grok/memory", "memory_workspace_path": ".grok/memory"}
    assert render(given).text == "[~/.grok/memory][.grok/memory]"


def test_carried_fields_are_accepted_and_do_not_change_the_prompt():
    carried = {
        "agents_md_files": [{"file_name": "AGENTS.md", "file_path": "/repo/AGENTS.md", "content": "# Rules"}],
        "build_timestamp_utc": "2025-06-15T12:00:00+00:00",
        "persona_summaries": ["- **reviewer** [user]: reads"],
    }
    assert render(carried).text == render({}).text


def test_the_legacy_plain_string_system_prompt_is_a_custom_template():
    result = render({"system_prompt": "You are ${{ system_prompt_label }} in the CLI."})
    assert result.template == "custom" and result.text == "You are Grok in the CLI."


def test_tool_order_sent_by_the_host_does_not_change_the_prompt():
    forward = dict(ALL_TOOLS)
    backward = dict(reversed(list(ALL_TOOLS.items())))
    loop = {"custom": "${% for kind, name in tools.by_kind.items() %}${{ kind }}=${{ name }};${% endfor %}"}
    assert render({"system_prompt": loop}, forward).text == render({"system_prompt": loop}, backward).text
    assert render({"system_prompt": loop}, {"read": "r", "edit": "e"}).text == "edit=e;read=r;"
    for base in ("none", "codex"):
        assert render({"system_prompt": base}, forward).sha256 == render({"system_prompt": base}, backward).sha256
    params_loop = {"custom": "${% for k, v in params.edit.items() %}${{ k }}=${{ v }};${% endfor %}"}
    params = {"edit": {"old_string": "old", "new_string": "new"}}
    assert rendering.render(parse_context({"system_prompt": params_loop}), {}, params).text == "new_string=new;old_string=old;"


@pytest.mark.parametrize("override", ["none", "codex"])
def test_non_interactive_omits_the_user_guide_and_shell_prompts(override):
    interactive = render({"system_prompt": override}).text
    unattended = render({"system_prompt": override, "is_non_interactive": True}).text
    assert "<operating_mode>" in unattended and "<operating_mode>" not in interactive
    assert "path:line" in interactive and "path:line" not in unattended
    if override == "none":
        assert "<user_guide>" in interactive and "<shell_prompts>" in interactive
        assert "<user_guide>" not in unattended and "<shell_prompts>" not in unattended


def test_unset_optional_fields_render_as_empty_text():
    result = render({"system_prompt": {"custom": "[${{ os_name }}|${{ shell_path }}|${{ working_directory }}|${{ current_date }}|${{ role_instructions }}]"}})
    assert result.text == "[||||]"


def test_variables_merge_namespaces_then_context_fields_then_flags():
    values = pipeline.variables(parse_context(ENVIRONMENT), {"read": "r"}, {"edit": {"old_string": "old"}}, {"custom_flag": True})
    assert values["tools"] == {"by_kind": {"read": "r"}} and values["params"] == {"edit": {"old_string": "old"}}
    assert values["os_name"] == "macos" and values["custom_flag"] is True and values["system_reminders_enabled"] is True


@pytest.mark.parametrize("name", ["tools", "params", "os_name", "memory_enabled", "role_summaries", "audience"])
def test_a_flag_may_not_hide_a_template_variable(name):
    with pytest.raises(InvalidContext) as caught:
        render({}, flags={name: True})
    assert caught.value.data["field"] == f"flags.{name}"


@pytest.mark.parametrize(
    ("os_name", "shell", "expected"),
    [
        ("macos", "/bin/zsh", {"is_windows": False, "shell_uses_semicolon": False, "has_unix_utilities": True}),
        ("windows", "C:\\Windows\\System32\\WindowsPowerShell\\v1.0\\powershell.exe", {"is_windows": True, "shell_uses_semicolon": True, "has_unix_utilities": False}),
        ("Windows 11", "C:\\Program Files\\Git\\bin\\bash.exe", {"is_windows": True, "shell_uses_semicolon": False, "has_unix_utilities": True}),
        ("windows", "pwsh", {"is_windows": True, "shell_uses_semicolon": False, "has_unix_utilities": False}),
        (None, None, {"is_windows": False, "shell_uses_semicolon": False, "has_unix_utilities": True}),
    ],
)
def test_host_flags_default_from_the_context(os_name, shell, expected):
    flags = pipeline.default_flags(parse_context({"os_name": os_name, "shell_path": shell}))
    assert {name: flags[name] for name in expected} == expected


def test_explicit_flags_win_over_the_derived_ones():
    text = render({"os_name": "windows", "shell_path": "cmd.exe", "system_prompt": {"custom": "${{ has_unix_utilities }}"}}, flags={"has_unix_utilities": True}).text
    assert text == "true"


def test_the_tools_mapping_drives_the_shipped_templates():
    assert "`my_reader`" in render({}, tools={"read": "my_reader"}).text
    assert "`my_reader`" not in render({}, tools={}).text


def test_a_template_written_for_the_reference_engine_renders_unchanged():
    # Whitespace control, guards on two kinds and params, as the reference implementation's tool
    # descriptions write them.
    template = (
        "Guidelines:\\\n${%- if tools.by_kind.search and tools.by_kind.list %}\n"
        "- Use ${{ tools.by_kind.search }} or ${{ tools.by_kind.list }}; pass `${{ params.edit.old_string }}`.\\\n${%- endif %}\n"
        "- Start broad.\n"
    )
    text = render({"system_prompt": {"custom": template}}, params={"edit": {"old_string": "old_str"}}).text
    assert text == "Guidelines:\\\n- Use grep or list_dir; pass `old_str`.\\\n- Start broad."


# -- golden outputs ------------------------------------------------------------------------------

GOLDEN_CASES = {
    "primary_all_tools_interactive": ({**ENVIRONMENT, **ROLES, "memory_enabled": True}, ALL_TOOLS, {}),
    "primary_no_tools_non_interactive": ({"is_non_interactive": True, "system_prompt_label": "Atlas"}, {}, {}),
    "primary_windows_with_body": (
        {"os_name": "windows", "shell_path": "powershell.exe", "prompt_body": "Project rule: run ${{ tools.by_kind.execute }} from the repository root."},
        {"read": "read_file", "execute": "shell", "plan": "todo_write"},
        {"include_browser_verification": True},
    ),
    "subagent_some_tools": ({**ENVIRONMENT, **ROLES, "audience": "subagent", "memory_enabled": True}, {"read": "read_file", "search": "grep", "memory": "memory_search"}, {}),
    "apply_patch_patch_tool": ({**ENVIRONMENT, "system_prompt": "codex"}, {"patch": "apply_patch", "read": "read_file", "execute": "shell", "plan": "todo_write"}, {}),
    "apply_patch_no_tools_non_interactive": ({"system_prompt": "codex", "is_non_interactive": True}, {}, {}),
}


@pytest.mark.parametrize("case", sorted(GOLDEN_CASES))
def test_shipped_templates_render_byte_for_byte_as_the_golden_files(case):
    context, tools, flags = GOLDEN_CASES[case]
    text = render(context, tools, flags=flags).text
    path = GOLDEN / f"{case}.txt"
    if UPDATE:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode("utf-8"))
    assert text.encode("utf-8") == path.read_bytes()


# -- the sweep -----------------------------------------------------------------------------------

KINDS = sorted(ALL_TOOLS)
SUBSETS = [combo for size in range(3) for combo in itertools.combinations(KINDS, size)]


@pytest.mark.parametrize("base", ["none", "subagent", "codex"])
def test_every_small_tool_subset_renders_without_markers_or_empty_tool_names(base):
    assert len(SUBSETS) == 1 + len(KINDS) + len(KINDS) * (len(KINDS) - 1) // 2
    for subset, memory, unattended in itertools.product(SUBSETS, (False, True), (False, True)):
        context = {
            "audience": "subagent" if base == "subagent" else "primary",
            "system_prompt": "codex" if base == "codex" else "none",
            "memory_enabled": memory,
            "is_non_interactive": unattended,
            **ROLES,
        }
        text = render(context, {kind: ALL_TOOLS[kind] for kind in subset}).text
        where = (base, subset, memory, unattended)
        for marker in ("${{", "${%", "${#", "}}", "%}"):
            assert marker not in text, where
        assert "``" not in text, where  # a tool name that rendered empty
        assert "None" not in text and "\n\n\n" not in text, where
        assert text == text.strip(), where
        for kind in subset:
            if kind in ("read", "execute"):  # named by every template whenever present
                assert f"`{ALL_TOOLS[kind]}`" in text, where


# -- output formatting, filters and tests as in the reference's engine ----------------------------


def custom(template: str, **context) -> str:
    return render({"system_prompt": {"custom": template}, **context}).text


@pytest.mark.parametrize(
    ("template", "expected"),
    [
        ("${{ memory_enabled }}/${{ is_non_interactive }}", "false/true"),
        ("${{ none }}", "none"),
        ("${{ ['a', 'b'] }}", '["a", "b"]'),
        ("${{ {'k': [1, true, none, 'q\"'], 'n': {}} }}", '{"k": [1, true, none, "q\\""], "n": {}}'),
        ("${{ 1.0 }} ${{ 0.5 }} ${{ 1e20 }} ${{ 7 // 2 }} ${{ 7 / 2 }}", "1.0 0.5 100000000000000000000.0 3 3.5"),
        ("${{ role_summaries }}", '["reviewer: reads diffs", "tester: writes tests"]'),
        ("${{ memory_enabled ~ '|' ~ role_summaries }}", 'false|["reviewer: reads diffs", "tester: writes tests"]'),
        ("${{ [true, none, 1] | join(',') }} ${{ [1, 'a'] | string }}", 'true,none,1 [1, "a"]'),
        ("${{ 2.5 | round }} ${{ 3.5 | round }} ${{ -2.5 | round }} ${{ 0.125 | round(2) }} ${{ 2 | round }}", "3.0 4.0 -3.0 0.13 2"),
        ("${{ 2.5 | round(0, 'floor') }}", "2.0"),
    ],
)
def test_non_string_values_print_as_the_reference_prints_them(template, expected):
    assert custom(template, is_non_interactive=True, **ROLES) == expected


@pytest.mark.parametrize(
    ("template", "expected"),
    [
        ("${{ 'a  b c' | split }} ${{ 'a,b,,c' | split(',') }} ${{ 'a,b,c' | split(',', 1) }}", '["a", "b", "c"] ["a", "b", "", "c"] ["a", "b,c"]'),
        ("${{ 'one\r\ntwo\n\nthree\n' | lines }} ${{ '' | lines }} ${{ 'a\x0bb' | lines | length }}", '["one", "two", "", "three"] [] 1'),
        ("${{ [] | bool }} ${{ 'x' | bool }}", "false true"),
        ("${% if os_name is startingwith('mac') %}S${% endif %}${% if os_name is endingwith('os') %}E${% endif %}", "SE"),
        # A number is compared by its printed form, as the reference does (tests/reference/corpus).
        ("${% if os_name is startingwith('win') %}X${% endif %}${% if 13 is endingwith('3') %}Y${% endif %}.", "Y."),
        ("${% for part in working_directory | split('/') if part %}[${{ part }}]${% endfor %}", "[Users][example][project]"),
    ],
)
def test_minijinja_filters_and_tests_that_jinja2_lacks_are_available(template, expected):
    assert custom(template, **ENVIRONMENT) == expected


def test_the_portability_data_names_python_methods_and_jinja2_only_filters():
    from jinja2.defaults import DEFAULT_FILTERS, DEFAULT_TESTS

    from promptd.prompt import dialect, portability

    assert {"startswith", "endswith", "items", "keys", "values", "get", "split", "strip"} <= portability.PYTHON_ONLY_METHODS
    assert portability.JINJA2_ONLY_FILTERS <= set(DEFAULT_FILTERS) and "wordwrap" in portability.JINJA2_ONLY_FILTERS
    assert portability.JINJA2_ONLY_TESTS <= set(DEFAULT_TESTS)
    assert not portability.JINJA2_ONLY_FILTERS & set(dialect.REFERENCE_FILTERS)
    assert set(portability.PORTABLE_ALTERNATIVES) <= portability.PYTHON_ONLY_METHODS
    # Every filter and test the dialect adds is one MiniJinja has and the sandbox really offers.
    from promptd.prompt.engine import engine

    assert set(dialect.REFERENCE_FILTERS) <= set(engine().environment.filters)
    assert set(dialect.REFERENCE_TESTS) <= set(engine().environment.tests)


def test_a_huge_value_is_still_refused_before_it_is_printed():
    with pytest.raises(TemplateRender) as caught:
        custom("${% set ns = namespace(l=[1.5e300]) %}${% for i in range(17) %}${% set ns.l = ns.l + ns.l %}${% endfor %}${{ ns.l }}")
    assert caught.value.data["error"] == "security"


# -- body handling (docs/template-compatibility.md) ------------------------------------------------


@pytest.mark.parametrize("body", ["", "   ", "\n\n", None])
def test_an_empty_or_blank_body_adds_nothing_in_extend_mode(body):
    base = render({}).text
    assert render({"prompt_body": body}).text == base


@pytest.mark.parametrize("body", ["", " \n "])
def test_full_mode_with_an_empty_or_blank_body_is_an_error(body):
    with pytest.raises(InvalidContext) as caught:
        render({"prompt_mode": "full", "prompt_body": body})
    assert caught.value.data["field"] == "prompt_body" and caught.value.data["reason"] == "missing_body"


@pytest.mark.parametrize("mode", ["extend", "full"])
def test_a_body_with_a_syntax_error_is_an_error_naming_the_body_never_shipped_raw(mode):
    with pytest.raises(TemplateSyntax) as caught:
        render({"prompt_mode": mode, "prompt_body": "Rules:\n${% if tools.by_kind.read %}read first"})
    assert caught.value.data["template"] == "body"


def test_a_body_without_markers_is_appended_verbatim():
    body = "Use {{ braces }} and ${HOME} freely.\n"
    assert render({"prompt_body": body}).text.endswith("\n\n" + body)
    assert render({"prompt_mode": "full", "prompt_body": body}).text == body


@pytest.mark.parametrize("template", ["${{ '' }}", "${% if false %}x${% endif %}   \n"])
def test_a_base_rendering_to_nothing_is_an_error_unless_a_body_follows(template):
    with pytest.raises(TemplateRender) as caught:
        render({"system_prompt": {"custom": template}})
    assert caught.value.data["error"] == "empty" and caught.value.data["template"] == "custom"
    assert render({"system_prompt": {"custom": template}, "prompt_body": "Body."}).text.endswith("\n\nBody.")


def test_a_full_mode_body_rendering_to_nothing_is_an_error():
    with pytest.raises(TemplateRender) as caught:
        render({"prompt_mode": "full", "prompt_body": "${% if false %}x${% endif %}"})
    assert caught.value.data["template"] == "full"


def test_the_output_formatting_leaves_a_strict_undefined_value_to_fail():
    from jinja2 import StrictUndefined, UndefinedError

    from promptd.prompt.dialect import reference_finalize, reference_text

    missing = StrictUndefined(name="working_dir")
    assert reference_finalize(missing) is missing
    for value in (missing, [missing], {"k": missing}):
        with pytest.raises(UndefinedError):
            reference_text(value)


def test_include_browser_verification_may_come_from_the_context_and_a_flag_still_wins():
    probe = {"custom": "${{ include_browser_verification }}"}
    assert render({"system_prompt": probe}).text == "false"
    assert render({"system_prompt": probe, "include_browser_verification": True}).text == "true"
    assert render({"system_prompt": probe, "include_browser_verification": True}, flags={"include_browser_verification": False}).text == "false"


@pytest.mark.parametrize(
    "context, sealed_slots, expected",
    [
        ({}, (), False),
        ({"audience": "subagent"}, (), False),
        ({}, ("primary",), True),
        ({"system_prompt": "codex"}, (), True),
        ({"system_prompt": {"custom": "x"}}, (), True),
        ({"system_prompt": {"sealed": "team"}}, (), True),
        ({"prompt_body": "b"}, (), True),
        ({"prompt_mode": "full"}, (), False),
    ],
)
def test_renders_of_templates_promptd_did_not_ship_are_told_apart(context, sealed_slots, expected):
    from promptd.prompt.context import PromptContext
    from promptd.prompt.pipeline import runs_others_templates

    assert runs_others_templates(PromptContext.model_validate(context), sealed_slots) is expected
