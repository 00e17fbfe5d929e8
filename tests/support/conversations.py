"""Conversations as the SDKs serialize them, built with the SDKs' own types, and the SDKs' own
validators to check what history/sanitize gives back.

Each Conversation lists the JSON pointers of every field that carries text (`texts`: the
sanitizer may edit them) and of the text inside signed content (`signed`: reported, never
edited). The Vercel AI SDK has no Python package: its messages are written out by hand after its
type definitions (ModelMessage, UIMessage) and checked by `check_ai_sdk`.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import anthropic.types as anthropic_types
import mcp.types as mcp_types
from google.genai import types as genai_types
from openai.types.chat import ChatCompletionMessageParam
from openai.types.responses import ResponseInputItemParam
from pydantic import TypeAdapter

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + bytes(range(64))).decode()
WAV = base64.b64encode(b"RIFF" + bytes(range(48))).decode()
PDF = base64.b64encode(b"%PDF-1.4 " + bytes(range(32))).decode()


def _consume(value: Any) -> Any:
    """A TypedDict's Iterable fields validate lazily: walking them makes every item checked."""
    if isinstance(value, dict):
        return {key: _consume(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_consume(item) for item in value]
    if isinstance(value, Iterator):
        return [_consume(item) for item in value]
    return value


def typed_dicts(adapter: TypeAdapter[Any]) -> Callable[[list[Any]], None]:
    return lambda messages: _consume(adapter.validate_python(messages))


def models(*classes: type[Any]) -> Callable[[list[Any]], None]:
    """Each message must validate as one of `classes` (pydantic models)."""

    def check(messages: list[Any]) -> None:
        for message in messages:
            errors = []
            for cls in classes:
                try:
                    cls.model_validate(message)
                    break
                except Exception as exc:  # any refusal counts
                    errors.append(exc)
            else:
                raise AssertionError(f"no SDK type accepts {message!r}: {errors}")

    return check


@dataclass
class Conversation:
    name: str
    shape: str
    messages: list[Any]
    validate: Callable[[list[Any]], None]
    texts: list[str]
    signed: list[str] = field(default_factory=list)


def _dump(model: Any, **kw: Any) -> Any:
    return model.model_dump(mode="json", exclude_none=True, **kw)


def anthropic() -> Conversation:
    reply = anthropic_types.Message.model_validate(
        {
            "id": "msg_01",
            "type": "message",
            "role": "assistant",
            "model": "claude",
            "content": [
                {"type": "thinking", "thinking": "The user wants the files.", "signature": "EqQBCkYIARgCKkD"},
                {"type": "text", "text": "Let me look."},
                {"type": "tool_use", "id": "toolu_01", "name": "read_file", "input": {"path": "README.md"}},
            ],
            "stop_reason": "tool_use",
            "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 20},
        }
    )
    param = reply.to_param()
    messages = [
        {"role": "user", "content": "What is in the repository?"},
        {"role": param["role"], "content": [_dump(block) for block in param["content"]]},
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_01", "content": "# promptd\nA sidecar."},
                {"type": "tool_result", "tool_use_id": "toolu_02", "content": [{"type": "text", "text": "src/\ntests/"}], "is_error": False},
                {"type": "text", "text": "Summarize it.", "cache_control": {"type": "ephemeral"}},
                {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}},
                {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": "notes"}, "title": "Notes"},
            ],
        },
        {
            "role": "assistant",
            "content": [
                {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT"},
                {"type": "server_tool_use", "id": "srvtoolu_01", "name": "web_search", "input": {"query": "promptd sidecar"}},
                {
                    "type": "web_search_tool_result",
                    "tool_use_id": "srvtoolu_01",
                    "content": [{"type": "web_search_result", "url": "https://example.com/", "title": "Example", "encrypted_content": "EqgfCioIARgBIiQ3YTQ"}],
                },
                {"type": "text", "text": "It is a sidecar."},
            ],
        },
        {"role": "system", "content": [{"type": "text", "text": "Answer briefly.", "cache_control": {"type": "ephemeral"}}]},
    ]
    return Conversation(
        "anthropic",
        "anthropic",
        messages,
        typed_dicts(TypeAdapter(list[anthropic_types.MessageParam])),
        texts=[
            "/0/content",
            "/1/content/1/text",
            "/1/content/2/input/path",
            "/2/content/0/content",
            "/2/content/1/content/0/text",
            "/2/content/2/text",
            "/2/content/4/source/data",
            "/2/content/4/title",
            "/3/content/1/input/query",
            "/3/content/2/content/0/title",
            "/3/content/3/text",
            "/4/content/0/text",
        ],
        signed=["/1/content/0/thinking", "/3/content/0/data"],
    )


def openai_chat() -> Conversation:
    messages = [
        {"role": "developer", "content": "Be terse."},
        {"role": "system", "content": [{"type": "text", "text": "You are a helper."}]},
        {
            "role": "user",
            "name": "alice",
            "content": [
                {"type": "text", "text": "Look at these."},
                {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}", "detail": "low"}},
                {"type": "input_audio", "input_audio": {"data": WAV, "format": "wav"}},
                {"type": "file", "file": {"file_data": f"data:application/pdf;base64,{PDF}", "filename": "a.pdf"}},
            ],
        },
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "read_file", "arguments": '{"path": "README.md"}'}}],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "# promptd"},
        {"role": "assistant", "name": "helper", "content": [{"type": "text", "text": "Partly:"}, {"type": "refusal", "refusal": "I cannot do all of it."}]},
        {"role": "assistant", "content": "Done.", "refusal": "Not the rest."},
        {"role": "function", "name": "legacy", "content": "legacy output"},
    ]
    return Conversation(
        "openai_chat",
        "openai_chat",
        messages,
        typed_dicts(TypeAdapter(list[ChatCompletionMessageParam])),
        texts=[
            "/0/content",
            "/1/content/0/text",
            "/2/name",
            "/2/content/0/text",
            "/3/tool_calls/0/function/arguments",
            "/4/content",
            "/5/content/0/text",
            "/5/content/1/refusal",
            "/6/content",
            "/6/refusal",
            "/7/content",
        ],
    )


def openai_responses() -> Conversation:
    messages = [
        {"role": "user", "content": "Find the bug."},
        {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "Use the tools."}]},
        {
            "type": "message",
            "role": "user",
            "content": [
                {"type": "input_text", "text": "Here it is:"},
                {"type": "input_image", "image_url": f"data:image/png;base64,{PNG}", "detail": "auto"},
                {"type": "input_file", "file_data": f"data:application/pdf;base64,{PDF}", "filename": "a.pdf"},
            ],
        },
        {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "Looking for it."}], "encrypted_content": "gAAAAABoSigned"},
        {"type": "reasoning", "id": "rs_2", "summary": [{"type": "summary_text", "text": "A summary."}], "content": [{"type": "reasoning_text", "text": "Raw reasoning."}]},
        {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "grep", "arguments": '{"pattern": "TODO"}', "status": "completed"},
        {"type": "function_call_output", "call_id": "call_1", "output": "src/a.py:3: TODO"},
        {"type": "function_call_output", "call_id": "call_2", "output": [{"type": "input_text", "text": "a listing"}]},
        {"type": "custom_tool_call", "call_id": "call_3", "name": "apply_patch", "input": "*** Begin Patch"},
        {"type": "custom_tool_call_output", "call_id": "call_3", "output": "applied"},
        {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": "Fixed.", "annotations": []}, {"type": "refusal", "refusal": "Not that part."}],
        },
        {"type": "item_reference", "id": "msg_0"},
        {"type": "compaction", "encrypted_content": "gAAAAABoCompacted"},
    ]
    return Conversation(
        "openai_responses",
        "openai_responses",
        messages,
        typed_dicts(TypeAdapter(list[ResponseInputItemParam])),
        texts=[
            "/0/content",
            "/1/content/0/text",
            "/2/content/0/text",
            "/4/summary/0/text",
            "/4/content/0/text",
            "/5/arguments",
            "/6/output",
            "/7/output/0/text",
            "/8/input",
            "/9/output",
            "/10/content/0/text",
            "/10/content/1/refusal",
        ],
        signed=["/3/summary/0/text"],
    )


def mcp() -> Conversation:
    t = mcp_types
    result = t.CallToolResult(
        content=[
            t.TextContent(type="text", text="Found two files."),
            t.ImageContent(type="image", data=PNG, mimeType="image/png"),
            t.AudioContent(type="audio", data=WAV, mimeType="audio/wav"),
            t.EmbeddedResource(type="resource", resource=t.TextResourceContents(uri="file:///notes.md", mimeType="text/markdown", text="# Notes")),
            t.EmbeddedResource(type="resource", resource=t.BlobResourceContents(uri="file:///a.bin", mimeType="application/octet-stream", blob=PDF)),
            t.ResourceLink(type="resource_link", name="README", uri="file:///README.md", description="The readme"),
        ],
        structuredContent={"files": ["a.py", "b.py"]},
    )
    messages = [
        _dump(t.SamplingMessage(role="user", content=t.TextContent(type="text", text="Summarize the notes.")), by_alias=True),
        _dump(t.PromptMessage(role="assistant", content=t.TextContent(type="text", text="Here is a summary.")), by_alias=True),
        _dump(result, by_alias=True),
        _dump(
            t.PromptMessage(role="user", content=t.EmbeddedResource(type="resource", resource=t.TextResourceContents(uri="file:///b.md", text="b"))),
            by_alias=True,
        ),
        _dump(t.SamplingMessage(role="assistant", content=[t.ToolUseContent(type="tool_use", name="grep", id="tu_1", input={"pattern": "TODO"})]), by_alias=True),
        _dump(
            t.SamplingMessage(role="user", content=[t.ToolResultContent(type="tool_result", toolUseId="tu_1", content=[t.TextContent(type="text", text="a.py:1")])]),
            by_alias=True,
        ),
    ]
    return Conversation(
        "mcp",
        "mcp",
        messages,
        models(t.SamplingMessage, t.PromptMessage, t.CallToolResult),
        texts=[
            "/0/content/text",
            "/1/content/text",
            "/2/content/0/text",
            "/2/content/3/resource/text",
            "/2/content/5/description",
            "/2/structuredContent/files/0",
            "/3/content/resource/text",
            "/4/content/0/input/pattern",
            "/5/content/0/content/0/text",
        ],
    )


def _gemini_contents() -> list[Any]:
    g = genai_types
    return [
        g.Content(role="user", parts=[g.Part(text="What is the weather in Paris?")]),
        g.Content(
            role="model",
            parts=[
                g.Part(text="I should call the tool.", thought=True, thought_signature=b"sig-1"),
                g.Part(function_call=g.FunctionCall(name="weather", args={"city": "Paris"}), thought_signature=b"sig-2"),
            ],
        ),
        g.Content(role="user", parts=[g.Part(function_response=g.FunctionResponse(name="weather", response={"output": "sunny"}))]),
        g.Content(role="model", parts=[g.Part(text="It is sunny.")]),
        g.Content(role="user", parts=[g.Part(inline_data=g.Blob(mime_type="image/png", data=b"\x89PNG....")), g.Part(text="And this?")]),
    ]


def gemini(camel: bool = False) -> Conversation:
    contents = [_dump(content, by_alias=camel) for content in _gemini_contents()]
    call = "functionCall" if camel else "function_call"
    response = "functionResponse" if camel else "function_response"
    return Conversation(
        "gemini_camel" if camel else "gemini",
        "gemini",
        contents,
        models(genai_types.Content),
        texts=["/0/parts/0/text", f"/2/parts/0/{response}/response/output", "/3/parts/0/text", "/4/parts/1/text"],
        signed=["/1/parts/0/text", f"/1/parts/1/{call}/args/city"],
    )


def check_ai_sdk(messages: list[Any]) -> None:
    """The AI SDK's ModelMessage and UIMessage as their type definitions have them."""
    part_fields = {
        "text": {"text"},
        "image": {"image"},
        "file": {"mediaType"},
        "reasoning": {"text"},
        "tool-call": {"toolCallId", "toolName", "input"},
        "tool-result": {"toolCallId", "toolName", "output"},
        "step-start": set(),
        "source-url": {"sourceId", "url"},
    }
    for message in messages:
        assert message["role"] in {"system", "user", "assistant", "tool"}
        parts = message.get("parts", message.get("content"))
        if "parts" in message:
            assert isinstance(message["id"], str)
        if isinstance(parts, str):
            continue
        for part in parts:
            needed = part_fields.get(part["type"], {"toolCallId", "state"} if part["type"].startswith("tool-") else set())
            assert needed <= set(part), part


def ai_sdk() -> Conversation:
    messages = [
        {"role": "system", "content": "You are helpful."},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "Weather in Paris?"},
                {"type": "image", "image": PNG, "mediaType": "image/png"},
                {"type": "file", "data": PDF, "mediaType": "application/pdf", "filename": "a.pdf"},
            ],
        },
        {
            "role": "assistant",
            "content": [
                {"type": "reasoning", "text": "Let me check the tool.", "providerOptions": {"anthropic": {"signature": "EqQBCkYIARgC"}}},
                {"type": "text", "text": "Checking."},
                {"type": "tool-call", "toolCallId": "call_1", "toolName": "weather", "input": {"city": "Paris"}},
            ],
        },
        {"role": "tool", "content": [{"type": "tool-result", "toolCallId": "call_1", "toolName": "weather", "output": {"type": "text", "value": "sunny"}}]},
        {"role": "assistant", "content": "It is sunny.", "providerOptions": {"openai": {"itemId": "msg_1"}}},
        {"id": "m1", "role": "user", "parts": [{"type": "text", "text": "Thanks."}], "metadata": {"createdAt": 1}},
        {
            "id": "m2",
            "role": "assistant",
            "parts": [
                {"type": "step-start"},
                {"type": "reasoning", "text": "Thinking.", "state": "done", "providerMetadata": {"anthropic": {"signature": "sig"}}},
                {"type": "tool-weather", "toolCallId": "c1", "state": "output-available", "input": {"city": "Paris"}, "output": {"summary": "sunny"}},
                {"type": "source-url", "sourceId": "s1", "url": "https://example.com/", "title": "Example"},
                {"type": "text", "text": "You are welcome.", "state": "done"},
            ],
        },
    ]
    return Conversation(
        "ai_sdk",
        "ai_sdk",
        messages,
        check_ai_sdk,
        texts=[
            "/0/content",
            "/1/content/0/text",
            "/2/content/1/text",
            "/2/content/2/input/city",
            "/3/content/0/output/value",
            "/4/content",
            "/5/parts/0/text",
            "/6/parts/2/input/city",
            "/6/parts/2/output/summary",
            "/6/parts/3/title",
            "/6/parts/4/text",
        ],
        signed=["/2/content/0/text", "/6/parts/1/text"],
    )


CONVERSATIONS: list[Callable[[], Conversation]] = [anthropic, openai_chat, openai_responses, mcp, gemini, lambda: gemini(camel=True), ai_sdk]


# -- JSON pointers (RFC 6901) ----------------------------------------------------------------------
def _tokens(pointer: str) -> list[str]:
    return [token.replace("~1", "/").replace("~0", "~") for token in pointer.split("/")[1:]]


def get(value: Any, pointer: str) -> Any:
    for token in _tokens(pointer):
        value = value[int(token)] if isinstance(value, list) else value[token]
    return value


def put(value: Any, pointer: str, item: Any) -> None:
    *head, last = _tokens(pointer)
    for token in head:
        value = value[int(token)] if isinstance(value, list) else value[token]
    if isinstance(value, list):
        value[int(last)] = item
    else:
        value[last] = item
