"""Adapters for the template author's tools: prompt/lint, prompt/vars (docs/templates.md).

Glue layer, an area of its own so that a host that only renders never imports these models.
"""

from __future__ import annotations

from promptd.api.authoring import LintKind, LintParams, LintResult, LintSeverity, LintViolation, TemplateRead, TemplateVariable, VarsParams, VarsResult
from promptd.methods.base import Context, Method


async def lint(params: LintParams, ctx: Context) -> LintResult:
    """The lint of a caller's template, found in a render worker under the render's deadline and
    memory budget (docs/templates.md, "Lint"): its compile is a render's compile, and a template
    that takes seconds to check must not hold promptd's own process uncancellably. Runs in a
    thread that waits for the worker, once the template gate (prompt/offload.py) lets it; a
    cancelled request kills the worker."""
    from promptd.errors import RenderTimeout
    from promptd.prompt import lint as guard
    from promptd.prompt import worker
    from promptd.prompt.offload import offload

    settings = ctx.runtime.config.prompt
    exempt = params.exempt_kinds if params.exempt_kinds is not None else settings.exempt_kinds
    volatile = params.volatile_variables if params.volatile_variables is not None else settings.volatile_variables

    def run(cancel: worker.Cancellation) -> list[guard.Violation]:
        def in_worker(source: str, exempt: frozenset[str], strict: bool, flags: frozenset[str], tool_kinds: frozenset[str], volatile: frozenset[str]) -> list[guard.Violation]:
            return worker.pool().lint(source, exempt, strict, flags, tool_kinds, volatile, deadline_s=settings.render_timeout_ms / 1000, memory_mb=settings.render_memory_mb, cancel=cancel)

        return guard.lint(params.template, exempt, strict=params.strict_undefined, flags=params.flags, tool_kinds=params.tool_kinds, volatile=volatile, finder=in_worker)

    try:
        found: list[guard.Violation] = await offload(run, gated=True)
    except RenderTimeout as exc:
        ctx.runtime.log.info("render_timeout", template=exc.data.get("template"), limit_ms=exc.data.get("limit_ms"))
        raise
    return LintResult(violations=[LintViolation(line=v.line, column=v.column, kind=LintKind(v.kind), message=v.message, severity=LintSeverity(v.severity)) for v in found])


def variables(params: VarsParams, ctx: Context) -> VarsResult:
    from promptd.prompt import variables as listing

    runtime = ctx.runtime
    tools = params.tools.by_kind if params.tools is not None else runtime.default_tools
    found = listing.describe(params.context, tools, params.params, params.flags, reminder_style=runtime.config.reminders.style)
    reads = listing.render_reads(params.context, {v.name: v.value for v in found})
    return VarsResult(
        variables=[TemplateVariable(name=v.name, value=v.value, source=v.source) for v in found],
        reads=[TemplateRead(template=r.template, path=r.path, defined=r.defined) for r in reads],
    )


METHODS: list[Method] = [
    Method("prompt/lint", LintParams, LintResult, lint, "Checks that every ${{ tools.by_kind.X }} sits inside a condition on tools.by_kind.X."),
    Method("prompt/vars", VarsParams, VarsResult, variables, "Every variable a template would see for these render params, with its value and source, and what the render's templates read."),
]
