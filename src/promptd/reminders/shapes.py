"""The SDKs' message shapes, as data: which fields carry text, and whose text it is.

Domain layer: imports only promptd.reminders.kinds; must not import promptd.rpc or
promptd.methods. The tables here are read by promptd.reminders.history (stored conversations)
and promptd.reminders.values (the list streams of any JSON value); docs/history-shapes.md is
the same tables in prose.

A message is read by one shape: Anthropic Messages, OpenAI Chat Completions, OpenAI Responses
input items, MCP, Gemini `contents`, or the Vercel AI SDK's ModelMessage / UIMessage. Each says:
- whose text a message holds, from its role (or, for a role-less item, its type): the user's
  own, a tool's, the model's or the system's;
- which of its fields form its stream: the text a reader joins (every part that carries text,
  whatever its type, in order), so that no tag can be split across two parts;
- per part type, where its text is, whether it is the author's own words ("plain": only the
  plain text of a user message may keep a `turn/compose` block), whose text it holds when not
  the message's author's (a tool result in a user message), and which fields show that a
  provider checks it (a signature) and which of its fields the signature covers: in the model's
  messages those fields are never edited; the rest of the part (a tool's output beside the
  model's call) is sanitized like any other field.
Every field these tables do not name is still sanitized, as a value (promptd.reminders.values).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import NamedTuple

from promptd.reminders.kinds import MessageShape

Path = tuple[str, ...]
# In a signature path, any key at that level (the AI SDK's provider names).
ANY = "*"


class Author(StrEnum):
    """Whose text a message, a part or a field holds."""

    USER = "user"  # the person's own words: may keep one current turn/compose block
    TOOL = "tool"  # a tool's output, a file, a fetched page, an attachment: untrusted
    MODEL = "model"  # the model's replies, reasoning and tool calls: untrusted (it repeats what it read)
    SYSTEM = "system"  # system / developer text: untrusted unless exactly a prompt this process rendered


@dataclass(frozen=True)
class Part:
    """How one content part reads."""

    # Where its text is: read as part of the message's stream.
    text: Path | None = None
    # The author's own words (a text part); in a user message, the user's own text.
    plain: bool = False
    # Whose text it holds when not the message's author's (a tool result inside a user message).
    author: Author | None = None
    # Fields that, holding a string, show that a provider checks the part: in the model's
    # messages the signature and what it covers are never edited, only reported.
    signature: tuple[Path, ...] = ()
    # The fields a signature covers: the model's own words, reasoning
    # or call. Every other field (a tool's output or error text next to the call) is sanitized
    # like any other field, signed or not: a signature never vouches for a tool's text.
    covers: tuple[str, ...] = ()
    # Checked by the provider whatever it holds (Anthropic's redacted_thinking).
    always_signed: bool = False


@dataclass(frozen=True)
class Field:
    """A field of a message that is part of its stream: a string, a list of parts, or one part."""

    name: str
    # A string in it is the author's own words.
    plain: bool = True


@dataclass(frozen=True)
class Item:
    """A message that has no role: its author comes from its type (OpenAI Responses items, an
    MCP CallToolResult)."""

    author: Author
    stream: tuple[Field, ...] = ()
    # Fields that, holding a string, show that a provider checks the whole item.
    signature: tuple[Path, ...] = ()


@dataclass(frozen=True)
class Shape:
    name: MessageShape
    # Role -> author; any other role is read as a tool's text (the strictest reading).
    roles: Mapping[str, Author]
    # The fields of a message with a role that form its stream.
    stream: tuple[Field, ...]
    # Part types -> how they read; an unknown type carries no stream text (its fields are values).
    parts: Mapping[str, Part]
    # Part types that begin with these (the AI SDK's `tool-NAME`, `data-NAME`).
    prefixes: tuple[tuple[str, Part], ...] = ()
    # Parts without a type, by the first of these keys they have (Gemini).
    keyed: tuple[tuple[str, Part], ...] = ()
    # Parts nothing above names.
    other: Part = Part()
    # Role-less items by their "type"; `roleless` for one without a type either.
    items: Mapping[str, Item] = field(default_factory=dict)
    other_item: Item | None = None
    roleless: Item | None = None
    # Message keys, role values and item types, and part types and part keys, that tell this
    # shape from the others.
    marks: frozenset[str] = frozenset()
    part_marks: frozenset[str] = frozenset()

    def part(self, item: Mapping[str, object]) -> Part:
        kind = item.get("type")
        if isinstance(kind, str):
            rule = self.parts.get(kind)
            if rule is not None:
                return rule
            for prefix, prefixed in self.prefixes:
                if kind.startswith(prefix):
                    return prefixed
            return self.other
        if "type" not in item:
            for key, keyed in self.keyed:
                if key in item:
                    return keyed
        return self.other


# Marks of a message whose "parts" are typed (a UIMessage's) or not (a Gemini Content's), and of
# one whose content is one object (MCP's SamplingMessage and PromptMessage).
TYPED_PARTS = "(typed parts)"
UNTYPED_PARTS = "(untyped parts)"
ONE_CONTENT = "(one content object)"

TEXT = Part(text=("text",), plain=True)
TOOLS = Part(author=Author.TOOL)
USER_MODEL = {"user": Author.USER, "assistant": Author.MODEL}

# --- Anthropic Messages ----------------------------------------------------------------------------
# Content blocks; system text usually goes in the request's `system`, stored here as a system message.
_ANTHROPIC_TOOL_RESULTS = (
    "tool_result",
    "web_search_tool_result",
    "web_fetch_tool_result",
    "code_execution_tool_result",
    "bash_code_execution_tool_result",
    "text_editor_code_execution_tool_result",
    "tool_search_tool_result",
    "mcp_tool_result",
)
ANTHROPIC = Shape(
    MessageShape.ANTHROPIC,
    roles={**USER_MODEL, "system": Author.SYSTEM},
    stream=(Field("content"),),
    parts={
        "text": TEXT,
        # "Thinking blocks must be passed back unmodified": the API checks the signature.
        "thinking": Part(text=("thinking",), signature=(("signature",),), covers=("thinking",)),
        "redacted_thinking": Part(always_signed=True, covers=("data",)),
        **{kind: TOOLS for kind in _ANTHROPIC_TOOL_RESULTS},
        # Attachments and search results: text from outside, not the person's own words.
        "document": TOOLS,
        "search_result": TOOLS,
        "image": Part(),
        "tool_use": Part(),
        "server_tool_use": Part(),
        "mcp_tool_use": Part(),
        "container_upload": Part(),
    },
    part_marks=frozenset(
        {
            *(kind for kind in _ANTHROPIC_TOOL_RESULTS if kind != "tool_result"),
            "thinking",
            "redacted_thinking",
            "document",
            "search_result",
            "server_tool_use",
            "mcp_tool_use",
            "container_upload",
            "cache_control",
            "tool_use_id",
            "citations",
        }
    ),
)

# --- OpenAI Chat Completions -----------------------------------------------------------------------
OPENAI_CHAT = Shape(
    MessageShape.OPENAI_CHAT,
    roles={
        **USER_MODEL,
        "system": Author.SYSTEM,
        "developer": Author.SYSTEM,
        "tool": Author.TOOL,
        "function": Author.TOOL,
    },
    # An assistant's `refusal` is its text too; `tool_calls[].function.arguments` (JSON text) and
    # `name` are values: sanitized as text where they stand.
    stream=(Field("content"), Field("refusal", plain=False)),
    parts={
        "text": TEXT,
        "refusal": Part(text=("refusal",)),
        "image_url": Part(),
        "input_audio": Part(),
        "file": Part(),
    },
    marks=frozenset({"tool_calls", "tool_call_id", "function_call", "refusal", "name", "audio", "developer", "tool", "function"}),
    part_marks=frozenset({"image_url", "input_audio", "file_data", "refusal"}),
)

# --- OpenAI Responses ------------------------------------------------------------------------------
_RESPONSES_TOOL_OUTPUTS = (
    "computer_call_output",
    "local_shell_call_output",
    "shell_call_output",
    "apply_patch_call_output",
    "mcp_call",
    "mcp_list_tools",
    "image_generation_call",
    "code_interpreter_call",
    "file_search_call",
    "web_search_call",
    "tool_search_output",
    "program_output",
)
_RESPONSES_MODEL_ITEMS = (
    "function_call",
    "custom_tool_call",
    "computer_call",
    "local_shell_call",
    "shell_call",
    "apply_patch_call",
    "mcp_approval_request",
    "tool_search_call",
    "program",
)
_ENCRYPTED = (("encrypted_content",),)
OPENAI_RESPONSES = Shape(
    MessageShape.OPENAI_RESPONSES,
    roles={**USER_MODEL, "system": Author.SYSTEM, "developer": Author.SYSTEM},
    stream=(Field("content"),),
    parts={
        "input_text": TEXT,
        "output_text": TEXT,
        "refusal": Part(text=("refusal",)),
        "summary_text": Part(text=("text",)),
        "reasoning_text": Part(text=("text",)),
        "input_image": Part(),
        "input_file": Part(),
        "input_audio": Part(),
    },
    items={
        **{kind: Item(Author.MODEL) for kind in _RESPONSES_MODEL_ITEMS},
        **{kind: Item(Author.TOOL) for kind in _RESPONSES_TOOL_OUTPUTS},
        "function_call_output": Item(Author.TOOL, (Field("output", plain=False),)),
        "custom_tool_call_output": Item(Author.TOOL, (Field("output", plain=False),)),
        # Reasoning with encrypted_content is checked by the API as a whole: never edited.
        "reasoning": Item(Author.MODEL, (Field("summary", plain=False), Field("content", plain=False)), signature=_ENCRYPTED),
        "compaction": Item(Author.MODEL, signature=_ENCRYPTED),
        "item_reference": Item(Author.TOOL),
        "mcp_approval_response": Item(Author.USER),
    },
    other_item=Item(Author.TOOL),
    marks=frozenset(
        {
            *_RESPONSES_TOOL_OUTPUTS,
            *_RESPONSES_MODEL_ITEMS,
            "function_call_output",
            "custom_tool_call_output",
            "reasoning",
            "compaction",
            "item_reference",
            "status",
            "phase",
            "message",
            "developer",
        }
    ),
    part_marks=frozenset({"input_text", "output_text", "input_image", "input_file", "summary_text", "reasoning_text", "annotations", "logprobs"}),
)

# --- MCP -------------------------------------------------------------------------------------------
# CallToolResult {content, structuredContent, isError}: a tool's. SamplingMessage, PromptMessage,
# CreateMessageResult: a role and one content object (or a list of them).
_MCP_TOOL = Item(Author.TOOL, (Field("content", plain=False),))
MCP = Shape(
    MessageShape.MCP,
    roles=USER_MODEL,
    stream=(Field("content"),),
    parts={
        "text": TEXT,
        # An embedded resource is a file's text, read with the text around it.
        "resource": Part(text=("resource", "text"), author=Author.TOOL),
        "resource_link": TOOLS,
        "tool_result": TOOLS,
        "image": Part(),
        "audio": Part(),
        "tool_use": Part(),
    },
    roleless=_MCP_TOOL,
    marks=frozenset({ONE_CONTENT, "structuredContent", "isError", "_meta", "resultType"}),
    part_marks=frozenset({"resource", "resource_link", "audio", "_meta", "toolUseId", "structuredContent", "mimeType", "annotations"}),
)

# --- Gemini ----------------------------------------------------------------------------------------
# Content {role, parts}; a Part is read by the field it has. A thought signature covers the
# model's own part (its text or thought, a function call, code it wrote, an image it made), which
# is returned to the API as it was (the SDK's snake_case and the REST API's camelCase both); a
# tool's result is never covered, whatever signature it carries.
_THOUGHT = (("thought_signature",), ("thoughtSignature",))
_GEMINI_OWN = (
    "function_call",
    "functionCall",
    "executable_code",
    "executableCode",
    "inline_data",
    "inlineData",
    "file_data",
    "fileData",
)
_GEMINI_TOOL = TOOLS
_GEMINI_OTHER = Part(signature=_THOUGHT, covers=_GEMINI_OWN)
GEMINI = Shape(
    MessageShape.GEMINI,
    roles={"user": Author.USER, "model": Author.MODEL, "function": Author.TOOL, "tool": Author.TOOL, "system": Author.SYSTEM},
    stream=(Field("parts"),),
    parts={},
    keyed=(
        ("text", Part(text=("text",), plain=True, signature=_THOUGHT, covers=("text",))),
        ("function_response", _GEMINI_TOOL),
        ("functionResponse", _GEMINI_TOOL),
        ("code_execution_result", _GEMINI_TOOL),
        ("codeExecutionResult", _GEMINI_TOOL),
        ("tool_response", _GEMINI_TOOL),
        ("toolResponse", _GEMINI_TOOL),
    ),
    other=_GEMINI_OTHER,
    # Without a role (a system instruction, a one-turn request) nothing in it is the user's own.
    roleless=Item(Author.TOOL, (Field("parts", plain=False),)),
    marks=frozenset({"model", UNTYPED_PARTS}),
    part_marks=frozenset(
        {
            "function_call",
            "functionCall",
            "function_response",
            "functionResponse",
            "inline_data",
            "inlineData",
            "file_data",
            "fileData",
            "thought",
            "thought_signature",
            "thoughtSignature",
            "executable_code",
            "executableCode",
        }
    ),
)

# --- Vercel AI SDK ---------------------------------------------------------------------------------
# ModelMessage {role, content, providerOptions}; UIMessage {id, role, parts, metadata}. A
# provider's signature travels in the part's providerOptions (ModelMessage) or providerMetadata
# (UIMessage): Anthropic's signature and redactedData, Google's thoughtSignature, OpenAI's
# encrypted reasoning. It covers the text, the reasoning, or the call's input: a UIMessage tool
# part's `output` and `errorText` are the tool's, sanitized whatever metadata the call carries.
_SIGNATURE_KEYS = ("signature", "redactedData", "thoughtSignature", "reasoningEncryptedContent", "encryptedContent")
_PROVIDER = tuple((holder, ANY, key) for holder in ("providerOptions", "providerMetadata", "callProviderMetadata") for key in _SIGNATURE_KEYS)
_UI_TOOL = Part(author=Author.TOOL, signature=_PROVIDER, covers=("input",))
AI_SDK = Shape(
    MessageShape.AI_SDK,
    roles={**USER_MODEL, "system": Author.SYSTEM, "tool": Author.TOOL},
    stream=(Field("content"), Field("parts")),
    parts={
        "text": Part(text=("text",), plain=True, signature=_PROVIDER, covers=("text",)),
        "reasoning": Part(text=("text",), signature=_PROVIDER, covers=("text",)),
        "tool-call": Part(signature=_PROVIDER, covers=("input",)),
        "tool-result": TOOLS,
        "tool-approval-request": Part(),
        "tool-approval-response": Part(),
        "dynamic-tool": _UI_TOOL,
        "source-url": TOOLS,
        "source-document": TOOLS,
        "image": Part(),
        "file": Part(),
        "step-start": Part(),
    },
    # UIMessage tool parts: the model's input and the tool's output; data parts: the host's.
    prefixes=(("tool-", _UI_TOOL), ("data-", TOOLS)),
    marks=frozenset({"providerOptions", "metadata", TYPED_PARTS}),
    part_marks=frozenset(
        {
            "providerOptions",
            "providerMetadata",
            "callProviderMetadata",
            "tool-call",
            "tool-result",
            "reasoning",
            "toolCallId",
            "mediaType",
            "step-start",
            "source-url",
            "source-document",
            "dynamic-tool",
        }
    ),
)

SHAPES: Mapping[MessageShape, Shape] = {shape.name: shape for shape in (ANTHROPIC, OPENAI_CHAT, OPENAI_RESPONSES, AI_SDK, MCP, GEMINI)}
# When nothing tells the shapes apart (`{"role": "user", "content": "hi"}` reads the same in
# every shape), the first that fits.
_ORDER = tuple(SHAPES.values())


class Reading(NamedTuple):
    """How one message reads."""

    shape: Shape
    author: Author
    stream: tuple[Field, ...]
    # Fields that show that a provider checks the whole message (a Responses reasoning item).
    signature: tuple[Path, ...]


class Unreadable(ValueError):
    """A message no shape (or not the pinned one) reads."""


def _fits(shape: Shape, message: Mapping[str, object]) -> bool:
    role = message.get("role")
    if "role" in message and not isinstance(role, str):
        return False
    fields = {f.name for f in shape.stream}
    if isinstance(role, str):
        if shape is OPENAI_CHAT:
            return True  # an assistant message with tool calls may have no content
        if shape is GEMINI:
            return isinstance(message.get("parts"), list) and "content" not in message
        if shape is MCP:
            return isinstance(message.get("content"), (dict, list))
        return any(name in message for name in fields)
    kind = message.get("type")
    if shape.items and isinstance(kind, str):
        return True
    if shape.roleless is not None and "type" not in message:
        return any(isinstance(message.get(f.name), list) for f in shape.roleless.stream)
    return False


def _marks(message: Mapping[str, object]) -> tuple[set[str], set[str]]:
    """The message's keys, role and type; and its parts' types and keys."""
    found = set(message)
    for value in (message.get("role"), message.get("type")):
        if isinstance(value, str):
            found.add(value)
    listed = message.get("parts")
    if isinstance(listed, list) and listed and isinstance(listed[0], dict):
        found.add(TYPED_PARTS if "type" in listed[0] else UNTYPED_PARTS)
    if isinstance(message.get("content"), dict):
        found.add(ONE_CONTENT)
    in_parts: set[str] = set()
    for name in ("content", "parts", "summary", "output"):
        parts = message.get(name)
        for part in parts if isinstance(parts, list) else [parts] if isinstance(parts, dict) else []:
            if isinstance(part, dict):
                in_parts.update(part)
                kind = part.get("type")
                if isinstance(kind, str):
                    in_parts.add(kind)
                    if kind.startswith(("tool-", "data-")):
                        in_parts.add("tool-call")
    return found, in_parts


def recognize(message: object, pinned: MessageShape | None = None) -> Shape:
    """The shape that reads `message`: `pinned` when given, else the one whose marks it has most
    of, among those it fits."""
    if not isinstance(message, dict):
        raise Unreadable("a message is a JSON object")
    if pinned is not None:
        shape = SHAPES[MessageShape(pinned)]
        if not _fits(shape, message):
            raise Unreadable(f"not a message of the {shape.name} shape")
        return shape
    fitting = [shape for shape in _ORDER if _fits(shape, message)]
    if not fitting:
        raise Unreadable("no SDK shape reads this message: it needs a role (or an item type, or a list of parts)")
    if len(fitting) == 1:
        return fitting[0]
    marks, part_marks = _marks(message)
    return max(fitting, key=lambda shape: len(shape.marks & marks) + len(shape.part_marks & part_marks))


def read(message: object, pinned: MessageShape | None = None) -> Reading:
    if not isinstance(message, dict):
        raise Unreadable("a message is a JSON object")
    shape = recognize(message, pinned)
    role = message.get("role")
    if isinstance(role, str):
        return Reading(shape, shape.roles.get(role, Author.TOOL), shape.stream, ())
    kind = message.get("type")
    item = shape.items.get(kind, shape.other_item) if isinstance(kind, str) else shape.roleless
    if item is None:
        item = Item(Author.TOOL)
    return Reading(shape, item.author, item.stream, item.signature)


def signed(value: Mapping[str, object], paths: tuple[Path, ...]) -> bool:
    """Whether one of `paths` leads to a non-empty string in `value`."""
    return any(_holds_string(value, path) for path in paths)


def _holds_string(value: object, path: Path) -> bool:
    if not path:
        return isinstance(value, str) and value != ""
    if not isinstance(value, dict):
        return False
    head, rest = path[0], path[1:]
    if head == ANY:
        return any(_holds_string(inner, rest) for inner in value.values())
    return head in value and _holds_string(value[head], rest)


def at_path(value: object, path: Path) -> object:
    for key in path:
        if not isinstance(value, dict) or key not in value:
            return None
        value = value[key]
    return value


# --- list streams of any value ---------------------------------------------------------------------
# Part types whose text a reader joins with the other text of the same list, in every shape, and
# where that text is (content/sanitize_value, and nested lists such as tool results in a history).
TEXT_FIELDS: Mapping[str, Path] = {
    "text": ("text",),
    "input_text": ("text",),
    "output_text": ("text",),
    "text_delta": ("text",),
    "summary_text": ("text",),
    "reasoning_text": ("text",),
    "reasoning": ("text",),
    "refusal": ("refusal",),
    "thinking": ("thinking",),
    "resource": ("resource", "text"),
}


def text_path(item: object) -> Path | None:
    """Where the text of a list item that a reader joins with its neighbours is: () for a string,
    the path of a text-bearing part's text, None for anything else. A part without a type counts
    when its "text" is a string (Gemini parts, Bedrock content blocks)."""
    if isinstance(item, str):
        return ()
    if not isinstance(item, dict):
        return None
    if "type" not in item:
        path: Path | None = ("text",)
    else:
        kind = item["type"]
        path = TEXT_FIELDS.get(kind) if isinstance(kind, str) else None
    return path if path is not None and isinstance(at_path(item, path), str) else None
