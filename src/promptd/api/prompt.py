"""The system prompt pipeline (docs/templates.md): prompt/render, prompt/lint, prompt/persist.

The `context` field is the domain's PromptContext: it is validated by the domain's own parser, so
an unknown field or an unsupported `version` is an `invalid_context` error naming the field (not a
generic invalid-params error), the same on the wire, from the CLI and in library use.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import Field, field_validator

from promptd.api.base import ApiModel, Tools
from promptd.prompt.context import PromptContext, parse_context


class TemplateName(StrEnum):
    PRIMARY = "primary"
    SUBAGENT = "subagent"
    APPLY_PATCH = "apply_patch"
    CUSTOM = "custom"
    FULL = "full"


class _WithContext(ApiModel):
    context: PromptContext = Field(default_factory=PromptContext, description="The prompt context (docs/templates.md); every field is optional.")

    @field_validator("context", mode="before")
    @classmethod
    def _parse(cls, value: Any) -> PromptContext:
        # Raises InvalidContext, which the method boundary turns into its own error code.
        return parse_context(value)


class RenderParams(_WithContext):
    tools: Tools | None = Field(None, description="The tool set by kind; defaults to the one given at initialize.")
    params: dict[str, dict[str, str]] = Field(
        default_factory=dict, description="Per tool kind, canonical parameter name -> the client's name (`params.edit.old_string`)."
    )
    flags: dict[str, bool] = Field(
        default_factory=dict,
        description="Booleans visible to templates (is_windows, system_reminders_enabled, include_browser_verification, ...).",
    )


class RenderResult(ApiModel):
    text: str
    template: TemplateName = Field(
        description="The base template used (`custom` also for a `{\"sealed\": id}` override; a sealed primary or subagent is still `primary` / `subagent`), or `full` when the body alone was rendered."
    )
    sha256: str = Field(description="Hex SHA-256 of the UTF-8 text.")
    chars: int = Field(description="Length of the text in Unicode code points.")


class LintParams(ApiModel):
    template: str
    exempt_kinds: list[str] | None = Field(None, description="Tool kinds exempt from the guard rule; defaults to config prompt.exempt_kinds.")


class LintViolation(ApiModel):
    line: int = Field(description="1-based")
    column: int = Field(description="1-based, in code points")
    kind: str = Field(description="unguarded_tool, dynamic_tool, aliased_tools or syntax")
    message: str


class LintResult(ApiModel):
    violations: list[LintViolation]


class PersistParams(_WithContext):
    pass


class PersistResult(ApiModel):
    context: PromptContext = Field(description="The context with every field explicit, ready to store and to render again.")
