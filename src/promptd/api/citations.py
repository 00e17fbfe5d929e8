"""File citations (docs/citations.md): citation/parse, citation/describe, citation/export, citation/strip.

Plain data models; import nothing from promptd.rpc. Offsets count the unit the client chose with
`initialize`'s `offset_unit` (code points by default; docs/citations.md).
"""

from pydantic import ConfigDict, Field

from promptd.api.base import ApiModel
from promptd.citations.kinds import MarkerForm, OpenAction, SegmentType, SourceKind


class CitationParseParams(ApiModel):
    text: str
    # False while streaming: an unfinished marker at the end is held back in `pending`. True for
    # the last chunk or a whole message: an unfinished marker is then plain text.
    final: bool = False


class CitationSegment(ApiModel):
    type: SegmentType
    text: str = Field(description="The exact source text of the span; segments concatenate to the input minus `pending`.")
    ids: list[str] = Field(description="Payload ids in order, each once; empty for text.")
    form: MarkerForm | None = Field(description="pua, ascii or object; null for text.")
    marker_type: str | None = Field(description="The marker's type keyword, lower-cased (`cite` for citations); null for text.")
    start: int = Field(description="Offset of the span in the input, in initialize's offset_unit (code points by default).")
    end: int = Field(description="End of the span (exclusive), in the same unit.")


class CitationParseResult(ApiModel):
    segments: list[CitationSegment]
    pending: str | None = Field(description="An unfinished marker at the end, to prepend to the next chunk; null when none.")


class CitationDescribeParams(ApiModel):
    url: str
    # Whether the host can open local files itself (a desktop shell can, a plain browser cannot).
    native_open: bool = True


class CitationDescribeResult(ApiModel):
    kind: SourceKind
    label: str
    icon: str
    open: OpenAction
    path: str | None = Field(description="The decoded local path of a file URL (what the clipboard receives); null otherwise.")


class CitationSource(ApiModel):
    # Hosts pass the source records they already keep (favicon, snippet, type, ...); only url and
    # title matter here, so other fields are ignored rather than refused.
    model_config = ConfigDict(extra="ignore")

    url: str | None = None
    title: str | None = None


class CitationExportParams(ApiModel):
    text: str
    sources: dict[str, CitationSource] = Field(default={}, description="Source id -> {url, title}.")


class CitationReference(ApiModel):
    number: int
    ids: list[str]
    title: str
    url: str | None


class CitationExportResult(ApiModel):
    text: str
    references: list[CitationReference]


class CitationStripParams(ApiModel):
    text: str


class CitationStripResult(ApiModel):
    text: str
    removed: int = Field(description="How many markers were removed.")
