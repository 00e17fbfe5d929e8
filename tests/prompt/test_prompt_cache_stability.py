"""A system prompt a provider can cache: the shipped templates render the same bytes in every
folder on every day, and prompt/render says how much of a prompt of one's own is stable
(`stable_prefix_chars`) and, per session, whether and where the stable part changed."""

from __future__ import annotations

import pytest
from conftest import call_in_process

from promptd.config import Config
from promptd.runtime import Runtime

TODAY, TOMORROW = "2026-12-01", "2026-12-02"


def render(context, runtime=None, **params):
    return call_in_process("prompt/render", {"context": context, **params}, runtime)


@pytest.mark.parametrize("extra", [{}, {"audience": "subagent"}, {"system_prompt": "codex"}])
def test_the_shipped_templates_are_the_same_bytes_in_every_folder_on_every_day(extra):
    first = render({"working_directory": "/home/a/one", "current_date": TODAY, "os_name": "linux", **extra})
    second = render({"working_directory": "/srv/two", "current_date": TOMORROW, "os_name": "linux", **extra})
    assert first["text"] == second["text"]
    assert TODAY not in first["text"] and "/home/a/one" not in first["text"]
    assert first["stable_prefix_chars"] == first["chars"]


def test_a_template_that_prints_the_date_is_stable_up_to_the_line_that_prints_it():
    template = "Rules: be brief.\nMore rules.\nToday is ${{ current_date }}.\nAfter the date."
    result = render({"system_prompt": {"custom": template}, "current_date": TODAY})
    assert result["text"][: result["stable_prefix_chars"]] == "Rules: be brief.\nMore rules.\n"


@pytest.mark.parametrize(
    "line",
    ["Year ${{ current_date[:4] }}", "${% if current_date == '2026-12-01' %}Monday${% else %}Other${% endif %}", "${{ working_directory|upper }}"],
    ids=["sliced", "compared", "filtered"],
)
def test_a_value_derived_from_a_volatile_variable_is_volatile_too(line):
    result = render({"system_prompt": {"custom": f"Stable head.\n{line}\nTail."}, "current_date": TODAY, "working_directory": "/w"})
    assert result["stable_prefix_chars"] == len("Stable head.\n")


def test_without_volatile_values_the_whole_text_is_stable():
    result = render({"system_prompt": {"custom": "Today is ${{ current_date }}."}})
    assert result["stable_prefix_chars"] == result["chars"]


def test_a_prompt_owner_declares_variables_of_their_own_volatile():
    runtime = Runtime(Config.model_validate({"prompt": {"volatile_variables": ["current_date", "os_name"]}}))
    result = render({"system_prompt": {"custom": "Head.\nOS ${{ os_name }}\n"}, "os_name": "linux"}, runtime)
    assert result["stable_prefix_chars"] == len("Head.\n")


def test_a_session_is_told_when_and_where_its_stable_prefix_changed_and_which_variables_moved():
    runtime = Runtime(Config())
    template = "Head.\nOS ${{ os_name }}\nToday ${{ current_date }}\n"
    context = {"system_prompt": {"custom": template}, "os_name": "linux", "current_date": TODAY}
    assert render(context, runtime, session="s")["prefix_change"] is None  # the session's first render
    # A new day: only the volatile part moved, the cached prefix still matches.
    assert render({**context, "current_date": TOMORROW}, runtime, session="s")["prefix_change"] == {"changed": False, "first_line": None, "variables": ["current_date"]}
    # Another OS: the stable prefix changed at its second line.
    assert render({**context, "current_date": TOMORROW, "os_name": "macos"}, runtime, session="s")["prefix_change"] == {"changed": True, "first_line": 2, "variables": ["os_name"]}
    # Without a session nothing is compared.
    assert render(context, runtime)["prefix_change"] is None


def test_a_session_keeps_hashes_of_its_prompt_never_its_text():
    runtime = Runtime(Config())
    render({"system_prompt": {"custom": "secret words\n"}}, runtime, session="s")
    kept = runtime.sessions.get("s").last_prompt
    assert kept is not None and b"secret" not in b"".join(kept.lines) + b"".join(kept.variables.values())


@pytest.mark.parametrize(
    ("a", "b", "shared"),
    [("", "", 0), ("abc", "", 0), ("abc", "abc", 3), ("abc", "abd", 2), ("abc", "abcdef", 3), ("x" * 5000 + "a", "x" * 5000 + "b", 5000), ("a", "b", 0)],
)
def test_the_shared_prefix_is_counted_exactly(a, b, shared):
    from promptd.text import shared_prefix_length

    assert shared_prefix_length(a, b) == shared_prefix_length(b, a) == shared
