"""The variables a template sees, described: every name with its resolved value and where it came
from (`promptd vars`, `prompt/vars`), the set of names any render defines (the lint's undefined
names check), and "did you mean" suggestions.

Domain layer: must not import promptd.rpc or promptd.methods; imported lazily (the pipeline it
reads from imports jinja2).

The listing is read from `pipeline.variables`, the very function a render uses, so it can never
disagree with what a template sees: a variable added there shows up here with no change.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

from promptd.prompt import pipeline
from promptd.prompt.context import PromptContext
from promptd.prompt.engine import engine
from promptd.prompt.kinds import VariableSource as Source
from promptd.prompt.names import suggest
from promptd.reminders.kinds import BlockStyle

__all__ = ["TOOL_KINDS", "Source", "Variable", "describe", "flag_names", "known_names", "reads", "shipped_reads", "suggest"]

# The tool kinds the shipped templates and docs/templates.md name. Hosts may send others; the lint
# only questions a kind that is not one of these and looks like a misspelling of one.
TOOL_KINDS = frozenset({"read", "edit", "patch", "list", "search", "execute", "plan", "web", "task", "memory"})


# The variable the runtime fills in from its own configuration.
RUNTIME_NAMES = frozenset({"reminder_style"})


class Variable(NamedTuple):
    name: str
    value: Any
    source: Source


def describe(
    context: PromptContext,
    tools: Mapping[str, str],
    params: Mapping[str, Mapping[str, str]] | None = None,
    flags: Mapping[str, bool] | None = None,
    *,
    reminder_style: BlockStyle = pipeline.DEFAULT_REMINDER_STYLE,
) -> list[Variable]:
    """Every variable a render with these inputs gives its template, in the order the template
    sees them merged, with its value and source. Raises InvalidContext as a render would."""
    values = pipeline.variables(context, tools, params, flags, reminder_style=reminder_style)
    given = set(flags or {})
    defaults = set(pipeline.default_flags(context))
    fields = set(PromptContext.model_fields)
    out = []
    for name, value in values.items():
        if name in ("tools", "params"):
            source = Source(name)
        elif name in given:
            source = Source.FLAG
        elif name in defaults:
            source = Source.DEFAULT_FLAG
        elif name in RUNTIME_NAMES:
            source = Source.RUNTIME
        elif name in fields and value == _field_value(context, name):
            source = Source.CONTEXT
        else:
            source = Source.DERIVED
        out.append(Variable(name, value, source))
    return out


def _field_value(context: PromptContext, name: str) -> Any:
    value = getattr(context, name)
    if value is None:
        return ""
    if isinstance(value, (list, tuple)):
        return list(value)
    return getattr(value, "value", value)


def known_names(flags: Iterable[str] = ()) -> frozenset[str]:
    """Every top-level name a render defines whatever the context (variables, default flags, the
    dialect's globals), plus `flags`: the names a template may read without an undefined error."""
    values = pipeline.variables(PromptContext(), {})
    return frozenset(values) | frozenset(engine().environment.globals) | frozenset(flags)


def flag_names() -> frozenset[str]:
    """The flags every render defines (their defaults derive from the context)."""
    return frozenset(pipeline.default_flags(PromptContext()))


def reads(source: str) -> frozenset[str]:
    """The top-level names `source` reads (nothing when it does not parse: the render will say why)."""
    from jinja2 import TemplateSyntaxError, meta

    from promptd.prompt.engine import normalize

    try:
        return frozenset(meta.find_undeclared_variables(engine().environment.parse(normalize(source))))
    except TemplateSyntaxError:
        return frozenset()


def shipped_reads() -> frozenset[str]:
    """The names the shipped Primary and Subagent templates read."""
    return frozenset().union(*(reads(pipeline.shipped_source(name)) for name in pipeline.SHIPPED))
