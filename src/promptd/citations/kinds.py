"""The citation vocabularies shared by the parser, the source describer and the wire models.

Kept apart from the modules that compile regexes, so the wire models can be imported at start-up
without paying for them.
"""

from enum import StrEnum


class SegmentType(StrEnum):
    TEXT = "text"
    CITATION = "citation"
    MARKER = "marker"


class MarkerForm(StrEnum):
    PUA = "pua"
    ASCII = "ascii"
    OBJECT = "object"


class SourceKind(StrEnum):
    FILE = "file"
    WEB = "web"
    INVALID = "invalid"


class OpenAction(StrEnum):
    NATIVE = "native"
    CLIPBOARD = "clipboard"
    BROWSER = "browser"
