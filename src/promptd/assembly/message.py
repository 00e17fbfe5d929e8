"""The turn's user message written in an SDK's own shape: what `turn/compose` returns with `shape`.

Domain layer: plain functions over plain data; imports only promptd.reminders.kinds. Must not
import promptd.rpc or promptd.methods.

The order is `content`'s: the user's (sanitized) text first, then the reminder. Where a shape has
parts, each is a text part of its own, the reminder's text byte for byte what `content` ends with:
an Anthropic host can put `cache_control` on the block before the reminder and cache everything
up to the turn's volatile part, and `history/sanitize` keeps the block because it is the whole of
the message's last text part (promptd.reminders.history). MCP's PromptMessage holds one content
object, so the MCP message is one text content holding `content`, the shape every MCP version
reads as both a SamplingMessage and a PromptMessage.

A part is left out when its text is empty; with neither text the message is one empty text part,
as `content` is then the empty string.
"""

from __future__ import annotations

from collections.abc import Callable

from promptd.reminders.kinds import MessageShape

Message = dict[str, object]


def _text_parts(kind: str, texts: list[str]) -> list[object]:
    return [{"type": kind, "text": text} for text in texts]


def _text_blocks(texts: list[str], content: str) -> Message:
    # Anthropic's MessageParam, OpenAI Chat's user message (content parts) and the AI SDK's
    # ModelMessage (UserModelMessage, what generateText and streamText take) read alike.
    return {"role": "user", "content": _text_parts("text", texts)}


def _openai_responses(texts: list[str], content: str) -> Message:
    # The input item's typed form (`type: message`), which the Responses API and SDKs accept as input.
    return {"type": "message", "role": "user", "content": _text_parts("input_text", texts)}


def _mcp(texts: list[str], content: str) -> Message:
    return {"role": "user", "content": {"type": "text", "text": content}}


def _gemini(texts: list[str], content: str) -> Message:
    return {"role": "user", "parts": [{"text": text} for text in texts]}


_WRITERS: dict[MessageShape, Callable[[list[str], str], Message]] = {
    MessageShape.ANTHROPIC: _text_blocks,
    MessageShape.OPENAI_CHAT: _text_blocks,
    MessageShape.OPENAI_RESPONSES: _openai_responses,
    MessageShape.MCP: _mcp,
    MessageShape.GEMINI: _gemini,
    MessageShape.AI_SDK: _text_blocks,
}


def user_message(shape: MessageShape, user_text: str, reminder_text: str, content: str) -> Message:
    """The user-role message of `shape` holding the (sanitized) `user_text` and then the
    `reminder_text`; `content` is their join, as `turn/compose` returns it."""
    texts = [text for text in (user_text, reminder_text) if text] or [""]
    return _WRITERS[shape](texts, content)
