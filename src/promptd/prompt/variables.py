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

__all__ = ["TOOL_KINDS", "Read", "Source", "Variable", "describe", "flag_names", "known_names", "paths_read", "reads", "render_reads", "shipped_reads", "suggest"]

# The tool kinds the shipped templates and docs/templates.md name. Hosts may send others; the lint
# only questions a kind that is not one of these and looks like a misspelling of one.
TOOL_KINDS = frozenset({"read", "edit", "patch", "list", "search", "execute", "plan", "web", "task", "memory"})


# The variable the runtime fills in from its own configuration.
RUNTIME_NAMES = frozenset({"reminder_style"})


# Templates larger than this are not searched for the paths they read (prompt/vars runs in
# promptd's own process, and a parse costs about a second per megabyte); 256 KiB is ten times the
# shipped Primary template.
MAX_READ_CHARS = 256 * 1024


class Variable(NamedTuple):
    name: str
    value: Any
    source: Source


class Read(NamedTuple):
    template: str  # primary | subagent | custom | body
    path: str  # `os_name`, `tools.by_kind.read`, `params.edit.old_string`
    defined: bool  # whether the render with these inputs defines it


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
    return pipeline.names_read(source)


def shipped_reads() -> frozenset[str]:
    """The names the shipped Primary and Subagent templates read."""
    return frozenset().union(*(reads(pipeline.shipped_source(name)) for name in pipeline.SHIPPED))


def render_reads(context: PromptContext, values: Mapping[str, Any]) -> list[Read]:
    """What the templates of a render with `context` read, each path once per template and in
    order, and whether `values` (the render's variables) define it. The sealed templates are not
    read (their plaintext stays in the vault), nor a template over MAX_READ_CHARS."""
    sources, _ = pipeline.template_sources(context)
    return [Read(template, path, _defines(values, path)) for template, source in sources if len(source) <= MAX_READ_CHARS for path in paths_read(source)]


def paths_read(source: str) -> list[str]:
    """The variables `source` reads from its render, as dotted paths as deep as the template
    names them (`tools.by_kind.read`, `tools.by_kind` for `tools.by_kind.items()`), in order of
    first use; names the template sets itself and the dialect's functions are not listed."""
    from jinja2 import meta, nodes

    from promptd.prompt.engine import normalize
    from promptd.prompt.failures import COMPILE_FAILURES

    env = engine().environment
    try:
        tree = env.parse(normalize(source))
        top = meta.find_undeclared_variables(tree) - frozenset(env.globals)
    except COMPILE_FAILURES:
        return []
    found: dict[str, None] = {}

    def chain(node: nodes.Node) -> tuple[list[str], nodes.Node] | None:
        """The path of a chain of constant attribute and key lookups, and the node under it."""
        parts: list[str] = []
        while isinstance(node, (nodes.Getattr, nodes.Getitem)):
            if isinstance(node, nodes.Getattr):
                parts.append(node.attr)
            elif isinstance(node.arg, nodes.Const) and isinstance(node.arg.value, str):
                parts.append(node.arg.value)
            else:
                parts = []  # a computed key: the path stops above it
            node = node.node
        return (parts[::-1], node) if isinstance(node, nodes.Name) else None

    def visit(node: nodes.Node) -> None:
        if isinstance(node, (nodes.Getattr, nodes.Getitem)):
            found_chain = chain(node)
            if found_chain is not None and found_chain[1].name in top:  # type: ignore[attr-defined]
                parts, root = found_chain
                path = [root.name, *parts]  # type: ignore[attr-defined]
                if len(path) > 1 and path[-1] in MAPPING_METHOD_NAMES:
                    path = path[:-1]
                found.setdefault(".".join(path))
        elif isinstance(node, nodes.Name) and node.ctx == "load" and node.name in top:
            found.setdefault(node.name)
            return
        for child in node.iter_child_nodes():
            if isinstance(node, (nodes.Getattr, nodes.Getitem)) and child is node.node:
                continue  # the chain above is this path already
            visit(child)

    visit(tree)
    return list(found)


# The mapping methods a template calls by attribute (sandbox.MAPPING_METHODS): `tools.by_kind.items()`
# reads `tools.by_kind`.
MAPPING_METHOD_NAMES = frozenset({"items", "keys", "values", "get"})


def _defines(values: Mapping[str, Any], path: str) -> bool:
    value: Any = values
    for part in path.split("."):
        if not isinstance(value, Mapping) or part not in value:
            return False
        value = value[part]
    return True
