"""Strict undefined, error positions and the one text path, through prompt/render (in-process and
over the wire) and the engine."""

from __future__ import annotations

import hashlib

import pytest
from conftest import call_in_process

from promptd.config import Config
from promptd.errors import TemplateSyntax
from promptd.methods.boundary import RpcFailure
from promptd.prompt.engine import Engine, normalize
from promptd.runtime import Runtime

READ = {"by_kind": {"read": "read_file"}}


def custom(template, **extra):
    return {"context": {"system_prompt": {"custom": template}}, "tools": READ, **extra}


def failure(params, runtime=None):
    with pytest.raises(RpcFailure) as caught:
        call_in_process("prompt/render", params, runtime)
    return caught.value.code, caught.value.data


def text(params, runtime=None):
    return call_in_process("prompt/render", params, runtime)["text"]


# -- strict undefined ----------------------------------------------------------------------------


def test_a_misspelled_variable_is_an_error_naming_it_its_position_and_the_intended_name():
    code, data = failure(custom("Intro\nDir: ${{ working_dir }}"))
    assert (code, data["kind"], data["error"]) == (-32021, "template_render", "undefined")
    assert (data["variable"], data["line"], data["column"]) == ("working_dir", 2, 10)
    assert data["suggestions"] == ["working_directory"]


def test_a_misspelled_name_in_a_condition_is_an_error_not_a_quietly_false_test():
    code, data = failure(custom("${% if is_non_interactve %}HEADLESS${% endif %}ok"))
    assert (data["error"], data["variable"], data["column"]) == ("undefined", "is_non_interactve", 8)
    assert data["suggestions"] == ["is_non_interactive"]


def test_a_missing_tool_is_still_false_in_a_condition_but_cannot_be_printed():
    assert text(custom("${% if tools.by_kind.web %}web${% endif %}ok")) == "ok"
    assert text(custom("${% if tools.by_kind.web == 'x' %}web${% endif %}ok")) == "ok"
    _, data = failure(custom("Search with `${{ tools.by_kind.search }}`."))
    assert (data["variable"], data["column"]) == ("tools.by_kind.search", 32)  # at the missing key
    _, data = failure(custom("${{ tools.by_kind.reed }}"))
    assert data["suggestions"] == ["read"]


@pytest.mark.parametrize("template, variable", [("${{ (1, 2)[5] }}", "[5]"), ("${{ [1, 2][5] }}", "[5]"), ("${{ params[0] }}", "params[0]"), ("${{ (1, 2)[5].name }}", "[5]")])
def test_a_missing_index_is_an_undefined_error_with_no_suggestions(template, variable):
    code, data = failure(custom(template))
    assert (code, data["kind"], data["error"]) == (-32021, "template_render", "undefined")
    assert (data["variable"], data["suggestions"]) == (variable, [])


def test_is_defined_and_default_still_work_on_undefined_names():
    template = "${% if host_flag is defined and host_flag %}on${% endif %}${{ label | default('x') }}"
    assert text(custom(template)) == "x"
    assert text(custom(template, flags={"host_flag": True})) == "onx"


def test_params_of_a_kind_the_host_did_not_send_name_the_missing_kind_in_both_modes():
    for strict in (True, False):
        _, data = failure(custom("${% if params.edit.old_string %}x${% endif %}", strict_undefined=strict))
        assert (data["error"], data["variable"], data["column"]) == ("undefined", "params.edit", 15)


def test_lenient_mode_is_the_reference_behaviour_and_the_request_or_the_setting_chooses_it():
    template = "Dir: ${{ working_dir }}."
    assert text(custom(template, strict_undefined=False)) == "Dir: ."
    lenient = Runtime(Config().merged({"prompt": {"strict_undefined": False}}))
    assert text(custom(template), lenient) == "Dir: ."
    _, data = failure(custom(template, strict_undefined=True), lenient)
    assert data["error"] == "undefined"


def test_the_shipped_templates_render_strictly_for_every_audience_mode_and_override():
    for context in ({}, {"audience": "subagent"}, {"is_non_interactive": True, "memory_enabled": True}, {"system_prompt": "codex"}):
        assert text({"context": context, "tools": READ, "strict_undefined": True})


@pytest.mark.parametrize("value", ["yes", 1, 0.0, "true", None])
def test_flags_are_booleans_only(value):
    code, data = failure(custom("x", flags={"is_windows": value}))
    assert (code, data["kind"]) == (-32602, "invalid_params")


# -- positions ------------------------------------------------------------------------------------


def syntax(source):
    with pytest.raises(TemplateSyntax) as caught:
        Engine().compile(source, "custom")
    return caught.value.data


def test_an_unclosed_block_is_reported_at_its_opening_tag():
    data = syntax("one\n  ${% if tools.by_kind.read %}\nbody\n${% for x in [1] %}${% endfor %}\nlast line\n")
    assert (data["line"], data["column"]) == (2, 3)
    assert "`if` is never closed" in data["cause"]


def test_a_syntax_error_has_a_column_and_an_unknown_filter_is_found_at_its_name():
    data = syntax("a\n  ${{ x + }}")
    assert (data["line"], data["column"]) == (2, 11)
    data = syntax("ok ${{ os_name | shout }}")
    assert (data["line"], data["column"]) == (1, 18)


def test_a_misplaced_end_tag_names_the_block_still_open():
    data = syntax("${% for x in y %}\n${% if x %}\n${% endfor %}")
    assert (data["line"], data["column"]) == (3, 5)  # at the word `endfor`
    assert "the `if` at line 2, column 1 is still open" in data["cause"]


def test_render_errors_carry_a_column_too():
    _, data = failure(custom("line one\n  ${{ 1 // 0 }}"))
    assert (data["line"], data["column"]) == (2, 3)


# -- one text path --------------------------------------------------------------------------------


def test_normalize_drops_a_leading_bom_and_turns_crlf_and_cr_into_lf():
    assert normalize("\ufeffa\r\nb\rc\n") == "a\nb\nc\n"
    unchanged = "plain\n"
    assert normalize(unchanged) is unchanged


@pytest.mark.parametrize("template", ["Plain text\r\nsecond line\r\n", "\ufeffPlain text\nsecond line\n", "Plain ${{ os_name }}\r\nline\r\n"])
def test_crlf_and_bom_give_the_same_prompt_as_lf(template):
    clean = template.replace("\ufeff", "").replace("\r\n", "\n")
    assert text(custom(template)) == text(custom(clean))
    assert "\r" not in text(custom(template)) and "\ufeff" not in text(custom(template))


def test_comments_never_ship_with_or_without_other_markers():
    assert text(custom("Rules.${# owner: revisit #}\nMore.\n")) == "Rules.\nMore."
    assert text(custom("Rules.${# owner: revisit #} ${{ system_prompt_label }}\n")) == "Rules. Grok"


def test_a_crlf_template_over_the_wire_hashes_like_its_lf_form(shared_served):
    crlf = shared_served.call("prompt/render", custom("A\r\n${{ system_prompt_label }}\r\n"))
    lf = shared_served.call("prompt/render", custom("A\n${{ system_prompt_label }}\n"))
    assert crlf["sha256"] == lf["sha256"] == hashlib.sha256(b"A\nGrok").hexdigest()


def test_an_unknown_context_field_comes_back_with_the_fields_it_probably_meant(shared_served):
    reply = shared_served.request("prompt/render", {"context": {"promt_mode": "full"}})
    data = reply["error"]["data"]
    assert (data["kind"], data["field"], data["suggestions"]) == ("invalid_context", "promt_mode", ["prompt_mode", "prompt_body"])
    assert "did you mean `prompt_mode`" in reply["error"]["message"]
