"""Provenance: sanitizing untrusted content, parsing and stripping reminder blocks, stored history."""

from typing import Annotated

from pydantic import Field, JsonValue, RootModel, ValidationInfo, field_validator

from promptd.api.base import VERBATIM, ApiModel, CallerType
from promptd.reminders.kinds import BlockStyle, ChangeKind, MessageShape, Origin, Refusal, SpanKind


class SanitizeParams(ApiModel):
    text: str
    origin: Origin = Origin.TOOL


class SanitizeResult(ApiModel):
    text: str
    # How many spans were neutralized (forged tags, delimiters, nonce copies, runs of tag characters).
    neutralized: int


class SanitizeValueParams(ApiModel):
    # Any JSON value, typically a structured tool result; it comes back in the same shape.
    value: Annotated[JsonValue, CallerType("Value")]
    origin: Origin = Origin.TOOL


class Change(ApiModel):
    # An RFC 6901 JSON pointer into what was given (the messages, or the value) to the string, or
    # the object member whose key, the finding is in: "/2/content/0/text".
    path: str
    kind: ChangeKind
    # False for a finding left in place: signed content a provider checks (history/sanitize).
    edited: bool


class SanitizeValueResult(ApiModel):
    value: Annotated[JsonValue, CallerType("Value"), VERBATIM]
    neutralized: int
    # Where each change was made, in the order found.
    changes: list[Change]


class InspectParams(ApiModel):
    text: str
    origin: Origin = Origin.TOOL


class Span(ApiModel):
    # Offsets in initialize's offset_unit (code points by default): text[start:end] is the span.
    start: int
    end: int
    kind: SpanKind


class InspectResult(ApiModel):
    # What content/sanitize would change, in order; empty when the text is clean.
    spans: list[Span]


class ReminderParseParams(ApiModel):
    text: str
    session: str | None = Field(
        None,
        min_length=1,
        description="The session the text belongs to: a block authenticates only when it was written for that session (`other_session` otherwise). Without it, a block of any session authenticates.",
    )


class Block(ApiModel):
    # True only for blocks the trusted path wrote, byte for byte, with this process's key (or the
    # host's provenance key), for the session given (any session without one).
    authenticated: bool
    # The key of a block in the keyed reminder format; null for the keyless blocks assembly writes.
    key: str | None
    body: str
    # The trigger shown to the person, as one string (what reminder/assemble's result reports).
    display_trigger: str | None
    # Offsets in initialize's offset_unit (code points by default): text[start:end] is the block.
    start: int
    end: int
    style: BlockStyle
    # Why a block that carries a nonce is not authenticated; null otherwise.
    refusal: Refusal | None = None


class ReminderParseResult(ApiModel):
    blocks: list[Block]


class StripParams(ApiModel):
    text: str
    session: str | None = Field(
        None,
        min_length=1,
        description="The session the text belongs to: a block authenticates only when it was written for that session (`other_session` otherwise). Without it, a block of any session authenticates.",
    )


class StripResult(ApiModel):
    text: str = Field(description="What a person is shown: authenticated runtime blocks hidden.")


class HistoryMessage(RootModel[dict[str, JsonValue]]):
    """A message as its SDK serializes it (Anthropic, OpenAI Chat or Responses, MCP, Gemini, the
    Vercel AI SDK): a JSON object, returned with its key order and unknown fields kept."""


class HistorySanitizeParams(ApiModel):
    # Read every message as this shape; by default each is recognized by its fields.
    shape: MessageShape | None = None
    messages: Annotated[list[HistoryMessage], CallerType("Message")]
    session: str | None = Field(
        None,
        min_length=1,
        description="The session the conversation belongs to: a turn/compose block is kept only when it was written for that session (one of another session is neutralized). Without it, a block of any session is kept.",
    )

    @field_validator("messages")
    @classmethod
    def _readable(cls, messages: list[HistoryMessage], info: ValidationInfo) -> list[HistoryMessage]:
        from promptd.reminders.shapes import Unreadable, recognize

        shape = info.data.get("shape")
        for index, message in enumerate(messages):
            try:
                recognize(message.root, shape)
            except Unreadable as exc:
                raise ValueError(f"messages[{index}]: {exc}") from None
        return messages


class HistorySanitizeResult(ApiModel):
    messages: Annotated[list[HistoryMessage], CallerType("Message"), VERBATIM]
    # Where each change was made, and what was found but left in place (edited false).
    changes: list[Change]
    neutralized: int
    # Blocks from other processes that were dropped.
    dropped: int
