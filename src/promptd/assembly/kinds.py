"""The assembly vocabularies shared by the domain and the wire models.

Vocabulary layer: imports nothing but `enum` and `typing`, so the API models use the very enums the
assembly code compares against, without importing what runs providers. An enum's docstring would
become its schema's description in protocol/openrpc.json; these explain themselves in comments.
"""

from enum import StrEnum
from typing import Literal

from typing_extensions import TypeAliasType


class Scope(StrEnum):
    GLOBAL = "global"  # every turn
    PER_TURN = "per_turn"  # only when the user message is not blank


# Built-ins first: the order providers/list reports them in.
class ProviderKind(StrEnum):
    BUILTIN = "builtin"
    STATIC = "static"
    FILE = "file"
    COMMAND = "command"
    HOST = "host"


# What providers/register accepts: every kind but the built-ins, which only promptd declares.
RegisterKind = TypeAliasType("RegisterKind", Literal[ProviderKind.STATIC, ProviderKind.FILE, ProviderKind.COMMAND, ProviderKind.HOST])


# Why a provider gave nothing this turn (docs/reminders.md, skip reasons).
class SkipReason(StrEnum):
    TIMEOUT = "timeout"
    ERROR = "error"
    MISSING = "missing"
    TOO_LARGE = "too_large"
    UNSAFE = "unsafe"  # a file that breaks the safe-read rule (a symlink, a FIFO, /proc...)
    NO_HOST = "no_host"


# What the budget did with a fragment.
class FragmentStatus(StrEnum):
    DELIVERED = "delivered"
    TRUNCATED = "truncated"
    DROPPED = "dropped"
    DUPLICATE = "duplicate"
