"""Plain data of assembly: provider specs, what a provider produced, why one was skipped."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Scope(StrEnum):
    GLOBAL = "global"  # every turn
    PER_TURN = "per_turn"  # only when the user message is not blank


class Kind(StrEnum):
    STATIC = "static"
    FILE = "file"
    COMMAND = "command"
    HOST = "host"
    BUILTIN = "builtin"


class SkipReason(StrEnum):
    TIMEOUT = "timeout"
    ERROR = "error"
    MISSING = "missing"
    TOO_LARGE = "too_large"
    NO_HOST = "no_host"


class Status(StrEnum):
    DELIVERED = "delivered"
    TRUNCATED = "truncated"
    DROPPED = "dropped"
    DUPLICATE = "duplicate"


@dataclass(frozen=True, slots=True)
class ProviderSpec:
    name: str
    scope: Scope
    kind: Kind
    key: str
    text: str | None = None
    path: str | None = None
    argv: tuple[str, ...] | None = None
    timeout_ms: int | None = None
    # Output cap for file and command providers.
    max_bytes: int = 64 * 1024


@dataclass(frozen=True, slots=True)
class Fragment:
    provider: str
    key: str
    text: str


@dataclass(frozen=True, slots=True)
class Skip:
    provider: str
    reason: SkipReason
    elapsed_ms: float
    detail: str | None = None


class ProviderSkipped(Exception):
    """Raised inside a provider to be skipped with a reason (missing file, too large...)."""

    def __init__(self, reason: SkipReason, detail: str | None = None) -> None:
        super().__init__(reason.value)
        self.reason = reason
        self.detail = detail
