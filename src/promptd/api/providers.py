"""The provider registry's methods: providers/register, providers/unregister, providers/list.

Apart from api/assembly.py, so a turn never builds these models; a configuration that declares
providers validates each with RegisterParams, as providers/register does.
"""

from typing import Annotated

from pydantic import Field, StringConstraints

from promptd.api.base import ApiModel
from promptd.assembly.kinds import ProviderKind, RegisterKind, Scope

# A POSIX environment variable name (what a shell can export).
EnvName = Annotated[str, StringConstraints(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$", max_length=256)]
# Far more than a command needs besides the allowlist (docs/reminders.md); a bound on each run's work.
MAX_ENV_NAMES = 64


class RegisterParams(ApiModel):
    name: str = Field(description="Unique provider name, [A-Za-z0-9._-]+")
    scope: Scope = Scope.PER_TURN
    kind: RegisterKind
    key: str = Field(description="Reminder key of the fragments it produces")
    text: str | None = Field(None, description="static: the text")
    path: str | None = Field(None, description="file: the file (relative paths resolve against the session's cwd)")
    argv: list[str] | None = Field(None, min_length=1, description="command: program and arguments, run without a shell")
    timeout_ms: int | None = Field(None, ge=1, le=600_000, description="Overrides reminders.provider_timeout_ms")
    max_bytes: int = Field(64 * 1024, ge=1, le=16 << 20, description="file/command: output cap")
    env: list[EnvName] = Field(
        default=[],
        max_length=MAX_ENV_NAMES,
        description="command: names of variables passed from promptd's environment besides the allowlist (PATH, HOME, the locale...); PROMPTD_* names are refused",
    )


class NameParams(ApiModel):
    name: str


class ProviderInfo(ApiModel):
    name: str
    scope: Scope
    kind: ProviderKind
    key: str
    builtin: bool
    timeout_ms: int | None
    env: list[str] = Field(description="command: the variables it is given besides the allowlist (names only; empty for other kinds)")


class ProvidersResult(ApiModel):
    providers: list[ProviderInfo]
