"""Reminder assembly, providers, sessions and turns."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from promptd.api.base import ApiModel, Tools

Scope = Literal["global", "per_turn"]
ProviderKind = Literal["static", "file", "command", "host"]


class RegisterParams(ApiModel):
    name: str = Field(description="Unique provider name, [A-Za-z0-9._-]+")
    scope: Scope = "per_turn"
    kind: ProviderKind
    key: str = Field(description="Reminder key of the fragments it produces")
    text: str | None = Field(None, description="static: the text")
    path: str | None = Field(None, description="file: the file (relative paths resolve against the session's cwd)")
    argv: list[str] | None = Field(None, min_length=1, description="command: program and arguments, run without a shell")
    timeout_ms: int | None = Field(None, ge=1, le=600_000, description="Overrides reminders.provider_timeout_ms")
    max_bytes: int = Field(64 * 1024, ge=1, le=16 << 20, description="file/command: output cap")


class NameParams(ApiModel):
    name: str


class ProviderInfo(ApiModel):
    name: str
    scope: str
    kind: str
    key: str
    builtin: bool
    timeout_ms: int | None


class ProvidersResult(ApiModel):
    providers: list[ProviderInfo]


class SessionParams(ApiModel):
    session: str = Field(min_length=1)


class SessionUpdateParams(ApiModel):
    session: str = Field(min_length=1)
    cwd: str | None = None
    date: str | None = None
    os_name: str | None = None
    shell: str | None = None
    env: dict[str, str] | None = None
    tools: Tools | None = None
    # Appended to the pending file.modified notices (delivered once, cleared at turn/complete).
    modified_files: list[str] = Field(default_factory=list)


class AssembleParams(ApiModel):
    session: str = Field(min_length=1)
    user_message: str = ""
    directives: list[str] = Field(default_factory=list)
    display_trigger: list[str] = Field(default_factory=list)
    budget: int | None = Field(None, ge=1, description="Overrides reminders.budget_chars")


class FragmentReport(ApiModel):
    provider: str
    key: str
    chars: int
    status: Literal["delivered", "truncated", "dropped", "duplicate"]


class SkipReport(ApiModel):
    provider: str
    reason: Literal["timeout", "error", "missing", "too_large", "no_host"]
    elapsed_ms: float


class SpillInfo(ApiModel):
    path: str
    retention_hours: float


class AssembleResult(ApiModel):
    text: str = Field(description="The wrapped block, empty when nothing was delivered")
    body: str
    fragments: list[FragmentReport]
    skipped: list[SkipReport]
    spill: SpillInfo | None
    spill_failure: str | None = Field(description="Why the truncated fragment could not be spilled")
    display_trigger: str | None = Field(description="The display trigger delivered, joined")


class ComposeResult(ApiModel):
    content: str = Field(description="The user-role message: sanitized user text plus the reminder suffix")
    reminder: AssembleResult


class CompleteParams(ApiModel):
    session: str = Field(min_length=1)
    tool_calls: list[str] = Field(default_factory=list)
    todo_write: bool = False
