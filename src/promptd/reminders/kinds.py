"""The reminder vocabularies shared by the domain, the configuration and the wire models.

Vocabulary layer: imports nothing but `enum`, so config.py (below the domains) and the API models
use the very enums the domain code compares against.
"""

from enum import StrEnum

# An enum's docstring becomes its schema's description in protocol/openrpc.json: enums that had
# none on the wire keep their explanations in comments.


# How the trusted path writes a keyless runtime block (config `reminders.style`).
class BlockStyle(StrEnum):
    PUA = "pua"  # U+E203 NONCE ... NONCE U+E204
    XML = "xml"  # <system-reminder nonce="NONCE"> ... </system-reminder>


# Which ledger entry is forgotten past its bound (config `reminders.ledger_eviction`).
class Eviction(StrEnum):
    OLDEST = "oldest"
    LEAST_RECENT = "least_recent"


class Origin(StrEnum):
    """Where untrusted text came from. Every origin gets the same full neutralization; the origin
    is recorded (as log metadata) so operators can see which door forged markup came through."""

    USER = "user"
    TOOL = "tool"
    MODEL = "model"
    STORED = "stored"


# What content/inspect found.
class SpanKind(StrEnum):
    # A forged reminder or display-trigger tag: the span runs from its bracket to its name.
    TAG = "tag"
    # A reminder delimiter U+E203 / U+E204, raw or escaped.
    DELIMITER = "delimiter"
    # A copy of this process's nonce.
    NONCE = "nonce"
    # A run of Unicode tag characters (invisible to a person, readable to a model).
    TAG_CHARACTERS = "tag_characters"
    # Two lone surrogate halves side by side (a removal or a part boundary between them): a reader
    # of the JSON would join them into a character nothing checked, so each becomes U+FFFD.
    SPLIT_CHARACTER = "split_character"


# Why a block that carries a nonce does not authenticate.
class Refusal(StrEnum):
    # This process's nonce, but not bytes the trusted path wrote: a byte changed, or invented.
    ALTERED = "altered"
    # Another nonce: an earlier process without the host's provenance key, or an invention.
    OTHER_PROCESS = "other_process"
    # Written by the trusted path, exactly these bytes, but for another session than the one it
    # is checked in.
    OTHER_SESSION = "other_session"


# What a change in history/sanitize's or content/sanitize_value's `changes` found: a span kind
# of content/inspect's, or one of the two things only a structured value or a history can hold.
class ChangeKind(StrEnum):
    TAG = "tag"
    DELIMITER = "delimiter"
    NONCE = "nonce"
    TAG_CHARACTERS = "tag_characters"
    SPLIT_CHARACTER = "split_character"
    # A block from an earlier process in the user's own text, dropped (history/sanitize).
    STALE_BLOCK = "stale_block"
    # A value nested deeper than the limit, withheld.
    TOO_DEEP = "too_deep"


# The SDK message shapes history/sanitize reads (its `shape` param pins one).
class MessageShape(StrEnum):
    ANTHROPIC = "anthropic"
    OPENAI_CHAT = "openai_chat"
    OPENAI_RESPONSES = "openai_responses"
    MCP = "mcp"
    GEMINI = "gemini"
    AI_SDK = "ai_sdk"
