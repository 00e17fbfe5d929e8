"""The template author's tools (docs/templates.md): prompt/lint and prompt/vars.

Apart from api/prompt.py, so a host that only renders never builds these models.
"""

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


class LintViolation(ApiModel):
    line: int = Field(description="1-based")
    column: int = Field(description="1-based, in code points")
    kind: str = Field(
        description="unguarded_tool, dynamic_tool, aliased_tools, unguarded_param, undefined_variable, unknown_tool_kind, not_portable or syntax"
    )
    message: str
    severity: str = Field("error", description="error, or warning (not_portable): a warning alone does not fail `promptd lint`.")


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


class VarsResult(ApiModel):
    variables: list[TemplateVariable] = Field(description="Every variable a template rendered with these params sees, in merge order.")
