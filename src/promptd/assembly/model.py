"""Plain data of assembly: provider specs, what a provider produced, why one was skipped."""

from __future__ import annotations

from typing import NamedTuple

from promptd.assembly.kinds import ProviderKind, Scope, SkipReason


class ProviderSpec(NamedTuple):
    name: str
    scope: Scope
    kind: ProviderKind
    key: str
    text: str | None = None
    path: str | None = None
    argv: tuple[str, ...] | None = None
    timeout_ms: int | None = None
    # Output cap for file and command providers.
    max_bytes: int = 64 * 1024
    # command: variables passed from promptd's environment besides the allowlist (promptd.childenv).
    env: tuple[str, ...] = ()


class Fragment(NamedTuple):
    provider: str
    key: str
    text: str


class Skip(NamedTuple):
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
