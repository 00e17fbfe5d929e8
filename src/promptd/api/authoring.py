"""The template author's tools (docs/templates.md): prompt/lint and prompt/vars.

Apart from api/prompt.py, so a host that only renders never builds these models.
"""

from enum import StrEnum
from typing import Any

from pydantic import Field

from promptd.api.base import ApiModel
from promptd.api.prompt import RenderInputs
from promptd.prompt.kinds import VariableSource


class LintParams(ApiModel):
    template: str
    exempt_kinds: list[str] | None = Field(None, description="Tool kinds exempt from the guard rule; defaults to config prompt.exempt_kinds.")
    strict_undefined: bool = Field(True, description="Report names no render defines (undefined_variable). On by default, whatever the render setting.")
    flags: list[str] = Field(default=[], description="Names of the flags the host sends besides the default ones: defined for the undefined-name check.")
    tool_kinds: list[str] = Field(default=[], description="Tool kinds the host sends besides the documented ones (not questioned as misspellings).")
    volatile_variables: list[str] | None = Field(
        None, description="Variables whose reads are cache_volatile warnings (their values change per session or per day); defaults to config prompt.volatile_variables."
    )


class LintKind(StrEnum):
    """What a prompt/lint violation is (docs/templates.md): a tool name used unguarded, dynamically
    or aliased, a param used unguarded, a name no render defines, a misspelt tool kind, a construct
    the reference engine lacks (not_portable), a read of a volatile variable (cache_volatile), a
    value printed that has no printed form (no_printed_form), or a syntax error."""

    # The values are the linter's own (promptd.prompt.guards, promptd.prompt.lint); a test checks
    # that the two sets are the same.
    UNGUARDED_TOOL = "unguarded_tool"
    DYNAMIC_TOOL = "dynamic_tool"
    ALIASED_TOOLS = "aliased_tools"
    UNGUARDED_PARAM = "unguarded_param"
    UNDEFINED_VARIABLE = "undefined_variable"
    UNKNOWN_TOOL_KIND = "unknown_tool_kind"
    NOT_PORTABLE = "not_portable"
    CACHE_VOLATILE = "cache_volatile"
    NO_PRINTED_FORM = "no_printed_form"
    SYNTAX = "syntax"


class LintSeverity(StrEnum):
    """How much a prompt/lint violation matters: an error, or a warning (not_portable,
    cache_volatile), which alone does not fail `promptd lint`."""

    ERROR = "error"
    WARNING = "warning"


class LintViolation(ApiModel):
    line: int = Field(description="1-based")
    column: int = Field(description="1-based, in code points")
    kind: LintKind = Field(description="unguarded_tool, dynamic_tool, aliased_tools, unguarded_param, undefined_variable, unknown_tool_kind, not_portable, cache_volatile, no_printed_form or syntax")
    message: str
    severity: LintSeverity = Field(LintSeverity.ERROR, description="error, or warning (not_portable, cache_volatile): a warning alone does not fail `promptd lint`.")


class LintResult(ApiModel):
    violations: list[LintViolation]


class VarsParams(RenderInputs):
    pass


class TemplateVariable(ApiModel):
    name: str
    value: Any = Field(description="The value a template sees (tools and params as their mappings).")
    source: VariableSource = Field(
        description="tools / params: the namespaces; context: a context field; derived: computed from the context; runtime: from configuration; flag: set by the request; default_flag: derived, not set by the request."
    )


class TemplateRead(ApiModel):
    template: str = Field(description="The template that reads it: primary, subagent, custom or body.")
    path: str = Field(description="The variable as deep as the template names it: `os_name`, `tools.by_kind.read`, `params.edit.old_string`.")
    defined: bool = Field(description="Whether a render with these params defines it (false: a tool kind not sent, a flag not set, a misspelling).")


class VarsResult(ApiModel):
    variables: list[TemplateVariable] = Field(description="Every variable a template rendered with these params sees, in merge order.")
    reads: list[TemplateRead] = Field(
        default=[],
        description="What the render's templates read, each path once per template in order of first use (sealed templates and templates over 256 KiB are not read).",
    )
