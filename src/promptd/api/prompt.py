"""The system prompt pipeline (docs/templates.md): prompt/render, prompt/persist (prompt/lint and
prompt/vars, the template author's tools, are in api/authoring.py).

The `context` field is the domain's PromptContext: it is validated by the domain's own parser, so
an unknown field or an unsupported `version` is an `invalid_context` error naming the field (not a
generic invalid-params error), the same on the wire, from the CLI and in library use.
"""

from typing import Any

from pydantic import Field, StrictBool, field_validator

from promptd.api.base import ApiModel, Tools
from promptd.errors import InvalidContext
from promptd.prompt.context import PromptContext, parse_context
from promptd.prompt.kinds import TemplateName


class _WithContext(ApiModel):
    context: PromptContext = Field(default_factory=PromptContext, description="The prompt context (docs/templates.md); every field is optional.")

    @field_validator("context", mode="before")
    @classmethod
    def _parse(cls, value: Any) -> PromptContext:
        # Raises InvalidContext, which the method boundary turns into its own error code.
        try:
            return parse_context(value)
        except InvalidContext as exc:
            _suggest_field(exc)
            raise


class RenderInputs(_WithContext):
    tools: Tools | None = Field(None, description="The tool set by kind; defaults to the one given at initialize.")
    params: dict[str, dict[str, str]] = Field(default={}, description="Per tool kind, canonical parameter name -> the client's name (`params.edit.old_string`).")
    flags: dict[str, StrictBool] = Field(
        default={},
        description="Booleans visible to templates (is_windows, system_reminders_enabled, include_browser_verification, ...); only true and false.",
    )


def _suggest_field(exc: InvalidContext) -> None:
    """An unknown field gets `data.suggestions`, the fields it was probably meant to be, and the
    message says so: `promt_mode` -> "did you mean `prompt_mode`?"."""
    from promptd.prompt.names import suggest

    field = exc.data.get("field")
    if exc.data.get("reason") != "unknown_field" or not isinstance(field, str) or "." in field or "suggestions" in exc.data:
        return
    found = suggest(field, PromptContext.model_fields)
    exc.data["suggestions"] = found
    if found:
        exc.message += "; did you mean " + " or ".join(f"`{name}`" for name in found) + "?"
        exc.args = (exc.message,)


class RenderParams(RenderInputs):
    strict_undefined: bool | None = Field(None, description="Strict undefined: a name no render defines is an error, not empty text. Default: config prompt.strict_undefined (true).")
    session: str | None = Field(None, min_length=1, description="The session this prompt is for: the result's `prefix_change` then compares it with that session's previous render.")


class PrefixChange(ApiModel):
    changed: bool = Field(description="Whether the stable prefix differs from the session's previous render (a provider's prompt cache then starts over).")
    first_line: int | None = Field(description="The 1-based line of the stable prefix where it first differs; null when unchanged.")
    variables: list[str] = Field(description="The template variables whose values changed since the previous render, sorted.")


class RenderResult(ApiModel):
    text: str
    template: TemplateName = Field(
        description='The base template used (`custom` also for a `{"sealed": id}` override; a sealed primary or subagent is still `primary` / `subagent`), or `full` when the body alone was rendered.'
    )
    sha256: str = Field(description="Hex SHA-256 of the text as UTF-8 (a lone surrogate as its three-byte WTF-8 form).")
    chars: int = Field(description="Length of the text in Unicode code points.")
    stable_prefix_chars: int = Field(
        description=(
            "How many leading characters of `text` (up to a line start) depend on no volatile variable (config prompt.volatile_variables: "
            "current_date, working_directory): send `text[:stable_prefix_chars]` as the cached block of the system prompt and the rest "
            "after it. The whole text when the template renders none of them, as the shipped templates do."
        )
    )
    prefix_change: PrefixChange | None = Field(
        None, description="With `session`: how this render's stable prefix compares with that session's previous one; null for its first render or without `session`."
    )


class PersistParams(_WithContext):
    pass


class PersistResult(ApiModel):
    context: PromptContext = Field(description="The context with every field explicit, ready to store and to render again.")
