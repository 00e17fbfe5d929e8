"""reminder/assemble and turn/compose answer at once (no task, no thread) when every provider of the
turn is instant and the text is small; a provider that waits, or large text, makes them wait."""

from __future__ import annotations

import asyncio
import inspect
from typing import Any

import pytest

from promptd.assembly.assemble import OFF_LOOP_CHARS
from promptd.config import Config
from promptd.methods import TABLE
from promptd.methods.base import Context, NoPeer
from promptd.methods.boundary import start
from promptd.runtime import Runtime
from promptd.sessions.store import digest

# Built-ins off: project memory reads files, so it is a provider that waits.
QUIET = {
    "log_level": "error",
    "reminders": {"session_metadata": False, "project_memory": False, "file_modified": False},
    "todo_nudge": {"enabled": False},
}


class NoLifecycle:
    """A server life that never ends: these tests call no lifecycle method."""

    async def shutdown(self) -> None:
        return None


def context(overrides: dict[str, Any] | None = None) -> Context:
    return Context(Runtime(Config().merged({**QUIET, **(overrides or {})})), NoPeer(), NoLifecycle())


def call(ctx: Context, method: str, params: dict[str, Any]) -> Any:
    return start(TABLE[method], params, ctx)


def register_static(ctx: Context, count: int) -> None:
    for n in range(count):
        call(ctx, "providers/register", {"name": f"p{n}", "kind": "static", "scope": "global", "key": "directive", "text": f"fragment {n}"})


def test_with_only_instant_providers_assemble_answers_at_once():
    ctx = context()
    register_static(ctx, 3)
    answer = call(ctx, "reminder/assemble", {"session": "s", "user_message": "hi", "directives": ["Be brief."]})
    assert isinstance(answer, dict)
    assert [f["provider"] for f in answer["fragments"]] == ["directive", "p0", "p1", "p2"]
    assert "fragment 2" in answer["text"]


def test_compose_answers_at_once_and_its_reminder_is_the_one_assemble_gives():
    ctx = context()
    register_static(ctx, 2)
    composed = call(ctx, "turn/compose", {"session": "s", "user_message": "Fix the build"})
    assert isinstance(composed, dict)
    assert composed["content"] == "Fix the build\n\n" + composed["reminder"]["text"]


def test_a_provider_that_waits_makes_assemble_wait_and_gives_the_same_answer(tmp_path):
    (tmp_path / "notes.md").write_text("from a file\n")
    ctx = context()
    register_static(ctx, 1)
    call(ctx, "providers/register", {"name": "notes", "kind": "file", "scope": "global", "key": "directive", "path": str(tmp_path / "notes.md")})
    pending = call(ctx, "reminder/assemble", {"session": "s", "user_message": "hi"})
    assert inspect.iscoroutine(pending)
    answer = asyncio.run(pending)
    assert [(f["provider"], f["status"]) for f in answer["fragments"]] == [("p0", "delivered"), ("notes", "delivered")]
    assert "from a file" in answer["text"]


def test_large_fragments_and_a_large_user_message_still_go_to_a_worker_thread():
    ctx = context()
    big = "x" * (OFF_LOOP_CHARS + 1)
    pending = call(ctx, "reminder/assemble", {"session": "s", "directives": [big], "budget": OFF_LOOP_CHARS * 2})
    assert inspect.iscoroutine(pending)
    assert asyncio.run(pending)["fragments"][0]["status"] == "delivered"
    composed = call(ctx, "turn/compose", {"session": "s", "user_message": big})
    assert inspect.iscoroutine(composed)
    assert asyncio.run(composed)["content"].startswith(big)


@pytest.mark.parametrize("user_message", ["Fix the build", "x" * (OFF_LOOP_CHARS + 1)], ids=["small message", "large message"])
def test_compose_waits_for_a_reminder_that_waits_and_then_for_a_message_that_waits(tmp_path, user_message):
    # Both stages may wait: the reminder (a file provider) and then the message (a large text).
    (tmp_path / "notes.md").write_text("from a file\n")
    ctx = context()
    call(ctx, "providers/register", {"name": "notes", "kind": "file", "scope": "global", "key": "directive", "path": str(tmp_path / "notes.md")})
    pending = call(ctx, "turn/compose", {"session": "s", "user_message": user_message})
    assert inspect.iscoroutine(pending)
    composed = asyncio.run(pending)
    assert "from a file" in composed["reminder"]["text"]
    assert composed["content"] == user_message + "\n\n" + composed["reminder"]["text"]


def test_an_assembly_answered_at_once_still_logs_the_turns_deliveries():
    ctx = context({"todo_nudge": {"enabled": False}})
    register_static(ctx, 1)
    call(ctx, "reminder/assemble", {"session": "s", "user_message": "hi"})
    assert ctx.runtime.sessions.get("s").delivered == {"directive": digest("fragment 0")}
