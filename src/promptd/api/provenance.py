"""Provenance: sanitizing untrusted content, parsing and stripping reminder blocks, stored history."""

from pydantic import Field, JsonValue

from promptd.api.base import ApiModel
from promptd.reminders.kinds import BlockStyle, Origin, Refusal, SpanKind


class SanitizeParams(ApiModel):
    text: str
    origin: Origin = Origin.TOOL


class SanitizeResult(ApiModel):
    text: str
    # How many spans were neutralized (forged tags, delimiters, nonce copies, runs of tag characters).
    neutralized: int


class SanitizeValueParams(ApiModel):
    # Any JSON value, typically a structured tool result.
    value: JsonValue
    origin: Origin = Origin.TOOL


class SanitizeValueResult(ApiModel):
    value: JsonValue
    neutralized: int


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


class HistoryMessage(ApiModel):
    # `user` may keep one trusted block, only in turn/compose's exact shape; every other role is fully untrusted.
    role: str
    # A string, or any JSON value such as a list of content parts.
    content: JsonValue


class HistorySanitizeParams(ApiModel):
    messages: list[HistoryMessage]


class HistorySanitizeResult(ApiModel):
    messages: list[HistoryMessage]
    neutralized: int
    # Blocks from other processes that were dropped.
    dropped: int
