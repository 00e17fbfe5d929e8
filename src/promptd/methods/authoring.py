"""Adapters for the template author's tools: prompt/lint, prompt/vars (docs/templates.md).

Glue layer, an area of its own so that a host that only renders never imports these models.
"""

from __future__ import annotations

from promptd.api.authoring import LintKind, LintParams, LintResult, LintSeverity, LintViolation, TemplateVariable, VarsParams, VarsResult
from promptd.methods.base import Context, Method


def lint(params: LintParams, ctx: Context) -> LintResult:
    from promptd.prompt import lint as guard

    exempt = params.exempt_kinds if params.exempt_kinds is not None else ctx.runtime.config.prompt.exempt_kinds
    found = guard.lint(params.template, exempt, strict=params.strict_undefined, flags=params.flags, tool_kinds=params.tool_kinds)
    return LintResult(
        violations=[LintViolation(line=v.line, column=v.column, kind=LintKind(v.kind), message=v.message, severity=LintSeverity(v.severity)) for v in found]
    )


def variables(params: VarsParams, ctx: Context) -> VarsResult:
    from promptd.prompt import variables as listing

    runtime = ctx.runtime
    tools = params.tools.by_kind if params.tools is not None else runtime.default_tools
    found = listing.describe(params.context, tools, params.params, params.flags, reminder_style=runtime.config.reminders.style)
    return VarsResult(variables=[TemplateVariable(name=v.name, value=v.value, source=v.source) for v in found])


METHODS: list[Method] = [
    Method("prompt/lint", LintParams, LintResult, lint, "Checks that every ${{ tools.by_kind.X }} sits inside a condition on tools.by_kind.X.", offload=True),
    Method("prompt/vars", VarsParams, VarsResult, variables, "Every variable a template would see for these render params, with its value and source."),
]
