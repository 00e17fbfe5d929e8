"""The prompt context: its fields and defaults, clear errors naming the field, files, persistence."""

from __future__ import annotations

import json

import pytest

from promptd.errors import InvalidContext
from promptd.prompt.context import Audience, CustomOverride, PromptMode, SealedOverride, for_persistence, parse_context, read_file_data


def test_an_empty_context_has_the_documented_defaults():
    context = parse_context({})
    assert context.version == 1
    assert context.prompt_mode is PromptMode.EXTEND
    assert context.audience is Audience.PRIMARY
    assert context.memory_enabled is False
    assert context.system_prompt_label == "Grok"
    assert context.is_non_interactive is False
    assert context.role_summaries == []
    assert context.system_prompt == "none"
    assert context.os_name is None and context.prompt_body is None


def test_capitalized_enum_spellings_are_accepted_and_stored_lowercase():
    context = parse_context({"prompt_mode": "Full", "audience": "Subagent", "system_prompt": "Codex", "prompt_body": "x"})
    assert context.prompt_mode is PromptMode.FULL and context.audience is Audience.SUBAGENT and context.system_prompt == "codex"


def test_a_custom_override_holds_its_template_text():
    context = parse_context({"system_prompt": {"custom": "Hello ${{ os_name }}"}})
    assert context.system_prompt == CustomOverride(custom="Hello ${{ os_name }}")


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({"version": 2}, "version"),
        ({"version": 0}, "version"),
        ({"version": "1"}, "version"),
        ({"version": True}, "version"),
        ({"promt_mode": "full"}, "promt_mode"),
        ({"prompt_mode": "replace"}, "prompt_mode"),
        ({"audience": "everyone"}, "audience"),
        ({"memory_enabled": "yes"}, "memory_enabled"),
        ({"role_summaries": ["ok", 3]}, "role_summaries.1"),
        ({"system_prompt": "other"}, "system_prompt"),
        ({"system_prompt": {"custom": 1}}, "system_prompt.custom"),
        ({"system_prompt": {"custom": "x", "extra": 1}}, "system_prompt.extra"),
        ({"system_prompt": "codec"}, "system_prompt"),
        ({"system_prompt": " None_ "}, "system_prompt"),
        ({"system_prompt": {"sealed": "has space"}}, "system_prompt.sealed"),
        ({"system_prompt": {"sealed": "x", "custom": "y"}}, "system_prompt.custom"),
        ({"persona_summaries": [1]}, "persona_summaries.0"),
        ({"agents_md_files": [{"file_name": "AGENTS.md", "content": "x"}]}, "agents_md_files.0.file_path"),
        ({"agents_md_files": [{"file_name": "a", "file_path": "b", "content": "c", "size": 1}]}, "agents_md_files.0.size"),
        ({"build_timestamp_utc": 1700000000}, "build_timestamp_utc"),
        ({"memory_global_path": False}, "memory_global_path"),
    ],
)
def test_a_bad_context_is_an_invalid_context_error_naming_the_field(data, field):
    with pytest.raises(InvalidContext) as caught:
        parse_context(data)
    assert caught.value.kind == "invalid_context"
    assert caught.value.data["field"] == field


def test_an_unsupported_version_is_reported_before_any_other_problem():
    with pytest.raises(InvalidContext) as caught:
        parse_context({"version": 9, "new_field_of_version_9": True})
    assert caught.value.data["field"] == "version" and caught.value.data["supported"] == [1]


def test_a_context_that_is_not_an_object_is_refused():
    with pytest.raises(InvalidContext):
        parse_context(["version", 1])


def test_contexts_load_from_json_and_yaml_files(tmp_path):
    (tmp_path / "c.json").write_text(json.dumps({"audience": "subagent", "os_name": "linux"}))
    (tmp_path / "c.yaml").write_text("audience: subagent\nos_name: linux\n")
    (tmp_path / "c.ctx").write_text("audience: subagent\nos_name: linux\n")
    loaded = [parse_context(read_file_data(tmp_path / name)) for name in ("c.json", "c.yaml", "c.ctx")]
    assert loaded[0] == loaded[1] == loaded[2]
    assert loaded[0].audience is Audience.SUBAGENT


def test_an_unreadable_or_malformed_context_file_is_invalid_context(tmp_path):
    (tmp_path / "bad.json").write_text("{")
    (tmp_path / "bad.yaml").write_text("a: [")
    for path in (tmp_path / "bad.json", tmp_path / "bad.yaml", tmp_path / "missing.json"):
        with pytest.raises(InvalidContext):
            read_file_data(path)


def test_persisting_a_subagent_context_clears_its_role_summaries_only():
    subagent = parse_context({"audience": "subagent", "role_summaries": ["reviewer"], "role_instructions": "r"})
    primary = parse_context({"role_summaries": ["reviewer"]})
    assert for_persistence(subagent).role_summaries == []
    assert for_persistence(subagent).role_instructions == "r"
    assert for_persistence(primary).role_summaries == ["reviewer"]


def test_a_persisted_context_parses_back_to_the_same_context():
    context = parse_context({"prompt_mode": "Full", "prompt_body": "b", "system_prompt": {"custom": "c"}, "os_name": "linux"})
    stored = for_persistence(context).model_dump(mode="json")
    assert stored["prompt_mode"] == "full" and stored["version"] == 1
    assert parse_context(json.loads(json.dumps(stored))) == context


def test_the_reference_pipelines_fields_are_accepted_and_kept():
    data = {
        "persona_instructions": "Be terse.",
        "persona_summaries": ["- **reviewer** [user]: reads diffs"],
        "memory_global_path": "~/.grok/memory",
        "memory_workspace_path": "/repo/.grok/memory",
        "agents_md_files": [{"file_name": "AGENTS.md", "file_path": "/repo/AGENTS.md", "content": "# Rules"}],
        "build_timestamp_utc": "2025-06-15T12:00:00+00:00",
    }
    context = parse_context(data)
    stored = for_persistence(context).model_dump(mode="json")
    assert {key: stored[key] for key in data} == data
    assert parse_context(stored) == context


@pytest.mark.parametrize("legacy", ["You are a coding agent running in the CLI.", "${{ system_prompt_label }}", "Short.", "line one\nline two", "nonex!"])
def test_a_legacy_plain_string_system_prompt_is_a_custom_template(legacy):
    assert parse_context({"system_prompt": legacy}).system_prompt == CustomOverride(custom=legacy)


def test_a_sealed_override_names_a_vault_template():
    assert parse_context({"system_prompt": {"sealed": "team.primary-2"}}).system_prompt == SealedOverride(sealed="team.primary-2")


def test_persisting_a_subagent_context_clears_persona_summaries_too():
    subagent = parse_context({"audience": "subagent", "persona_summaries": ["reviewer"], "persona_instructions": "p"})
    stored = for_persistence(subagent)
    assert stored.persona_summaries == [] and stored.persona_instructions == "p"
    assert for_persistence(parse_context({"persona_summaries": ["reviewer"]})).persona_summaries == ["reviewer"]
