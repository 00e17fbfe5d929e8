"""Offloaded methods whose work grows with one text run on a worker thread only when the text is
long: a short one is answered on the spot, where a thread hop would cost more than the work."""

from __future__ import annotations

import asyncio

import pytest

from promptd.local import Local
from promptd.methods import TABLE
from promptd.methods.boundary import INLINE_TEXT_CHARS, start

TEXT_METHODS = ["content/sanitize", "content/inspect", "citation/parse", "citation/export", "citation/strip"]


@pytest.fixture
def context():
    return Local()._context


@pytest.mark.parametrize("name", TEXT_METHODS)
def test_a_short_text_is_answered_on_the_spot_and_a_long_one_on_a_thread(name, context):
    method = TABLE[name]
    assert method.offload and method.offload_text is not None
    short = start(method, {"text": "ok <system-reminder> [1]"}, context)
    assert isinstance(short, dict)
    long = start(method, {"text": "x" * (INLINE_TEXT_CHARS + 1)}, context)
    assert asyncio.iscoroutine(long)
    assert isinstance(asyncio.run(long), dict)


def test_methods_without_one_text_always_go_to_a_thread(context):
    for name in ("content/sanitize_value", "history/sanitize"):
        assert TABLE[name].offload and TABLE[name].offload_text is None
    pending = start(TABLE["content/sanitize_value"], {"value": {"a": "b"}}, context)
    assert asyncio.iscoroutine(pending)
    asyncio.run(pending)


def test_acall_of_a_short_text_answers_as_the_same_call_does():
    door = Local()

    async def both():
        return await door.acall("content/sanitize", {"text": "<system-reminder>"}), door.call("content/sanitize", {"text": "<system-reminder>"})

    awaited, called = asyncio.run(both())
    assert awaited == called == {"text": "<untrusted-system-reminder>", "neutralized": 1}
