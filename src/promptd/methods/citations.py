"""citation/parse, citation/describe, citation/export, citation/strip: thin glue over
promptd.citations."""

from __future__ import annotations

from promptd.api.citations import (
    CitationDescribeParams,
    CitationDescribeResult,
    CitationExportParams,
    CitationExportResult,
    CitationParseParams,
    CitationParseResult,
    CitationSegment,
    CitationStripParams,
    CitationStripResult,
)
from promptd.methods.base import Context, Method, text_of
from promptd.text import offsets_in

# The citation modules compile their regexes when imported; the handlers import them on first use
# so the server's cold start does not pay for them.


def parse(params: CitationParseParams, ctx: Context) -> CitationParseResult:
    from promptd.citations import markers

    parsed = markers.parse(params.text, final=params.final)
    # The domain counts code points; the host gets offsets in the unit it asked for at initialize.
    at = offsets_in(params.text, ctx.runtime.offset_unit)
    return CitationParseResult(
        segments=[CitationSegment(type=s.type, text=s.text, ids=list(s.ids), form=s.form, marker_type=s.marker_type, start=at(s.start), end=at(s.end)) for s in parsed.segments],
        pending=parsed.pending,
    )


def describe(params: CitationDescribeParams, ctx: Context) -> CitationDescribeResult:
    from promptd.citations import sources

    return CitationDescribeResult.model_validate(sources.describe(params.url, native_open=params.native_open), from_attributes=True)


def export(params: CitationExportParams, ctx: Context) -> CitationExportResult:
    from promptd.citations import export as citation_export

    given = {ident: citation_export.Source(url=s.url, title=s.title) for ident, s in params.sources.items()}
    return CitationExportResult.model_validate(citation_export.export(params.text, given), from_attributes=True)


def strip(params: CitationStripParams, ctx: Context) -> CitationStripResult:
    from promptd.citations import export as citation_export

    return CitationStripResult.model_validate(citation_export.strip(params.text), from_attributes=True)


# parse, export and strip are linear but may get a whole long answer: offloaded so one large
# request never stalls the others.
METHODS: list[Method] = [
    Method(
        "citation/parse",
        CitationParseParams,
        CitationParseResult,
        parse,
        "Splits model output into text, citation and marker segments; an unfinished marker at the end is `pending`.",
        offload=True,
        offload_text=text_of,
    ),
    Method("citation/describe", CitationDescribeParams, CitationDescribeResult, describe, "Kind, label, icon and open action for a citation source URL."),
    Method("citation/export", CitationExportParams, CitationExportResult, export, "Plain text for copying: citations as [n] references and a Sources list.", offload=True, offload_text=text_of),
    Method("citation/strip", CitationStripParams, CitationStripResult, strip, "The text with citation markers removed, for logs and previews.", offload=True, offload_text=text_of),
]
