"""content/sanitize, content/sanitize_value, content/inspect, reminder/parse, reminder/strip,
history/sanitize.

Glue layer: validated params in, domain calls with this process's nonce, result models out. Logs
carry the origin, sizes and counts only, never the text or the nonce.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from pydantic import JsonValue

from promptd.api.provenance import (
    Block,
    Change,
    HistoryMessage,
    HistorySanitizeParams,
    HistorySanitizeResult,
    InspectParams,
    InspectResult,
    ReminderParseParams,
    ReminderParseResult,
    SanitizeParams,
    SanitizeResult,
    SanitizeValueParams,
    SanitizeValueResult,
    Span,
    StripParams,
    StripResult,
)
from promptd.methods.base import Context, Method, text_of
from promptd.reminders.kinds import Origin
from promptd.text import offsets_in

if TYPE_CHECKING:
    from promptd.reminders import values

# The sanitizer builds its tables and regexes when imported; the handlers import it on first use
# so the server's cold start does not pay for it.


def _report(ctx: Context, what: str, origin: Origin, neutralized: int, chars: int | None = None) -> None:
    # Forged markup is worth an operator's attention; clean input is not.
    if neutralized:
        fields = {"method": what, "origin": origin, "neutralized": neutralized}
        if chars is not None:
            fields["chars"] = chars
        ctx.runtime.log.info("content_neutralized", **fields)


def sanitize(params: SanitizeParams, ctx: Context) -> SanitizeResult:
    from promptd.reminders import sanitize as sanitizer

    cleaned = sanitizer.sanitize(params.text, ctx.runtime.nonce)
    _report(ctx, "content/sanitize", params.origin, cleaned.neutralized, len(params.text))
    return SanitizeResult.model_validate(cleaned, from_attributes=True)


def _changes(changes: list[values.Change]) -> list[Change]:
    return [Change.model_construct(path=c.path, kind=c.kind, edited=c.edited) for c in changes]


def sanitize_value(params: SanitizeValueParams, ctx: Context) -> SanitizeValueResult:
    from promptd.reminders.values import clean_value

    cleaned = clean_value(params.value, ctx.runtime.nonce)
    _report(ctx, "content/sanitize_value", params.origin, cleaned.neutralized)
    # The sanitizer returns the shape it was given, strings and keys replaced: JSON in, JSON out.
    return SanitizeValueResult(value=cast(JsonValue, cleaned.value), neutralized=cleaned.neutralized, changes=_changes(cleaned.changes))


def inspect(params: InspectParams, ctx: Context) -> InspectResult:
    from promptd.reminders.sanitize import inspect as inspect_text

    spans = inspect_text(params.text, ctx.runtime.nonce)
    _report(ctx, "content/inspect", params.origin, len(spans), len(params.text))
    at = offsets_in(params.text, ctx.runtime.offset_unit)  # in the unit the host asked for at initialize
    return InspectResult(spans=[Span(start=at(s.start), end=at(s.end), kind=s.kind) for s in spans])


def parse(params: ReminderParseParams, ctx: Context) -> ReminderParseResult:
    from promptd.reminders import provenance

    blocks = provenance.parse(params.text, ctx.runtime.trust, ctx.runtime.config.reminders.style, params.session)
    at = offsets_in(params.text, ctx.runtime.offset_unit)  # in the unit the host asked for at initialize
    # The domain's blocks as they are, offsets moved into the host's unit.
    return ReminderParseResult(blocks=[Block.model_validate(b._replace(start=at(b.start), end=at(b.end)), from_attributes=True) for b in blocks])


def strip(params: StripParams, ctx: Context) -> StripResult:
    from promptd.reminders import provenance

    return StripResult(text=provenance.strip(params.text, ctx.runtime.trust, ctx.runtime.config.reminders.style, params.session))


def sanitize_history(params: HistorySanitizeParams, ctx: Context) -> HistorySanitizeResult:
    from promptd.reminders import history

    stored = [m.root for m in params.messages]
    result = history.sanitize_history(stored, ctx.runtime.trust, ctx.runtime.config.reminders.style, params.shape, params.session)
    if result.changes:
        ctx.runtime.log.info(
            "history_sanitized",
            messages=len(stored),
            neutralized=result.neutralized,
            dropped=result.dropped,
            left_in_place=sum(1 for change in result.changes if not change.edited),
        )
    # The walk returns the shapes it was given, strings and keys replaced: JSON in, JSON out.
    return HistorySanitizeResult(
        # Built from validated JSON by the walk: no second validation of every value.
        messages=[HistoryMessage.model_construct(cast(dict[str, JsonValue], m)) for m in result.messages],
        changes=_changes(result.changes),
        neutralized=result.neutralized,
        dropped=result.dropped,
    )


METHODS: list[Method] = [
    Method("content/sanitize", SanitizeParams, SanitizeResult, sanitize, "Neutralizes forged reminder markup in untrusted text.", offload=True, offload_text=text_of),
    Method(
        "content/sanitize_value",
        SanitizeValueParams,
        SanitizeValueResult,
        sanitize_value,
        "Sanitizes every string and key of a structured (JSON) tool result.",
        offload=True,
    ),
    Method(
        "content/inspect",
        InspectParams,
        InspectResult,
        inspect,
        "Finds what content/sanitize would neutralize, without editing: for content a coding agent will edit.",
        offload=True,
        offload_text=text_of,
    ),
    Method(
        "reminder/parse",
        ReminderParseParams,
        ReminderParseResult,
        parse,
        "Finds reminder blocks (the configured style's and keyed ones); a block authenticates only if this process wrote exactly its bytes.",
    ),
    Method("reminder/strip", StripParams, StripResult, strip, "What a person is shown: the blocks this process wrote hidden, display triggers shown."),
    Method(
        "history/sanitize",
        HistorySanitizeParams,
        HistorySanitizeResult,
        sanitize_history,
        "Makes stored messages safe to reuse: a reminder kept only in turn/compose's exact shape, stale ones dropped, the rest sanitized.",
        offload=True,
    ),
]
