"""Template failures as the project's errors: a template that cannot be compiled becomes
TemplateSyntax and one whose render fails TemplateRender, naming the template, line, column and
cause (and, for an undefined name, what it was probably meant to be).

Domain layer: must not import promptd.rpc or promptd.methods. Imported with the engine (lazily);
source positions are imported on the error paths only.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import TracebackType
from typing import Any

from jinja2 import TemplateSyntaxError
from jinja2.compiler import CodeGenerator
from jinja2.exceptions import SecurityError

from promptd.errors import TemplateRender, TemplateSyntax
from promptd.prompt import limits
from promptd.prompt.names import suggest
from promptd.prompt.sandbox import UndefinedValue

# What compiling a template can raise besides Jinja's own syntax errors: Python's compiler refuses
# code nested deeper than its fixed limits (SyntaxError), Jinja's parser and code generator recurse
# once per level of nesting (RecursionError), and a huge template can exhaust memory.
COMPILE_FAILURES = (TemplateSyntaxError, SyntaxError, RecursionError, MemoryError)
# Python's limits (CPython's CO_MAXBLOCKS and the parser's MAXLEVEL), named in the error: every
# `for`, `if`, `with`, `macro` and `call` block is a nested Python block, and every filter, test or
# call a nested call.
MAX_NESTED_BLOCKS = 20
MAX_NESTED_BRACKETS = 200


def compile_error(env: Any, source: str, name: str, exc: BaseException, generator: CodeGenerator | None = None) -> TemplateSyntax:
    """The one place where a template that cannot be compiled becomes TemplateSyntax: Jinja's own
    syntax errors, and the limits of Python's compiler that Jinja does not check (more than 20
    nested blocks, about 200 nested brackets, calls or filters: SyntaxError), of Jinja's recursive
    parser and code generator (RecursionError) and of memory. Every compile (the engine's, the
    lint's, the CLI's and the vault's) goes through parse and compile_tree, so none of these
    reaches a caller as an internal error or ends a render worker."""
    if isinstance(exc, TemplateSyntaxError):
        # The exception holds the whole source; drop it before it travels anywhere.
        exc.source = None
        return syntax_error(env, source, exc, name)
    line = _python_line_to_template(generator, exc.lineno) if isinstance(exc, SyntaxError) and generator is not None else None
    if isinstance(exc, MemoryError):
        cause = "the template is too large to compile"
    elif isinstance(exc, RecursionError) or "nested" in str(getattr(exc, "msg", "")):
        cause = f"nested too deeply to compile (at most {MAX_NESTED_BLOCKS} nested blocks, and about {MAX_NESTED_BRACKETS} nested brackets, calls or filters)"
    else:
        # Never the message's text beyond Python's own words: its `text` is generated code,
        # which quotes the template.
        cause = f"too complex to compile ({getattr(exc, 'msg', type(exc).__name__)})"
    if line is None:
        return TemplateSyntax(f"template {name!r}: {cause}", template=name, line=None, column=None, cause=cause, reason="compile_limit")
    from promptd.prompt import positions

    column = positions.first_tag_column(source, line)
    return TemplateSyntax(f"template {name!r} line {line}, column {column}: {cause}", template=name, line=line, column=column, cause=cause, reason="compile_limit")


def _python_line_to_template(generator: CodeGenerator, python_line: int | None) -> int | None:
    """The template line of a line of generated code, from the generator's debug info (pairs of
    template line and code line, in code order: the last pair at or before the line wins)."""
    if not python_line:
        return None
    found = None
    for template_line, code_line in generator.debug_info:
        if code_line > python_line:
            break
        found = template_line
    return found


def syntax_error(env: Any, source: str, exc: TemplateSyntaxError, name: str) -> TemplateSyntax:
    """The project's error for a template that does not parse or compile, at its line and column
    (an unclosed block at its opening tag)."""
    from promptd.prompt import positions  # error paths only: a render that works never needs it

    line, column, cause = positions.syntax_position(env, source, exc)
    return TemplateSyntax(f"template {name!r} line {line}, column {column}: {cause}", template=name, line=line, column=column, cause=cause)


def render_error(exc: BaseException, name: str, tb: TracebackType | None, source: str, variables: Mapping[str, Any], env: Any) -> TemplateRender:
    from promptd.prompt import positions

    line = _template_line(tb, name)
    if isinstance(exc, UndefinedValue):
        return _undefined_error(exc, name, line, source, variables, env)
    kind = "security" if isinstance(exc, (SecurityError, MemoryError)) else type(exc).__name__
    # A MemoryError is the render worker's address-space limit (or the machine's): the same
    # refusal as a size bound, since either way the template asked for more than it may have.
    cause = limits.MEMORY_CAUSE if isinstance(exc, MemoryError) else str(exc) or kind
    column = positions.first_tag_column(source, line) if line else None
    where = f" line {line}, column {column}" if line else ""
    return TemplateRender(f"template {name!r}{where}: {cause}", template=name, line=line, column=column, cause=cause, error=kind)


def _undefined_error(exc: UndefinedValue, name: str, line: int | None, source: str, variables: Mapping[str, Any], env: Any) -> TemplateRender:
    """`undefined`: which name, where, and what it was probably meant to be (from the variables
    this render really has, or the keys of the mapping it was looked up in)."""
    from promptd.prompt import positions

    key = exc.name
    # A name reads as `name`; an index or any other key that is not a string as `[5]`.
    named = isinstance(key, str) and bool(key)
    variable = key if named else ("?" if key is None and exc.owner is None else f"[{key!r}]")
    if exc.owner is None:
        candidates = [str(k) for k in variables]
        cause = f"`{variable}` is undefined: no variable of that name"
        if exc.message and "was not provided" in exc.message:
            cause = f"`{variable}` is undefined: the macro was called without it"  # Jinja's hint for a missing macro argument
        column = positions.column_of_name(env, source, line, variable, attribute=False)
    else:
        candidates = [str(k) for k in exc.owner] if isinstance(exc.owner, Mapping) else []
        owner = _path_of(exc.owner, variables) if isinstance(exc.owner, Mapping) else None
        if owner is not None:
            variable = f"{owner}.{variable}" if named else f"{owner}{variable}"
            cause = f"`{variable}` is undefined (`{owner}` has {', '.join(sorted(candidates)[:20]) or 'no keys'}); test it first: `${{% if {variable} %}}`"
        elif named:
            cause = f"`{variable}` is undefined: a {type(exc.owner).__name__} value has no such key or attribute"
        else:
            cause = f"`{variable}` is undefined: a {type(exc.owner).__name__} value has no such index or key"
        column = (positions.column_of_name(env, source, line, key, attribute=True) or positions.column_of_name(env, source, line, key)) if named else None
    suggestions = suggest(key if named else variable, candidates)
    if suggestions:
        cause += "; did you mean " + " or ".join(f"`{s}`" for s in suggestions) + "?"
    column = column or (positions.first_tag_column(source, line) if line else None)
    where = f" line {line}, column {column}" if line else ""
    return TemplateRender(
        f"template {name!r}{where}: {cause}",
        template=name,
        line=line,
        column=column,
        cause=cause,
        error="undefined",
        variable=variable,
        suggestions=suggestions,
    )


def _path_of(owner: Any, variables: Mapping[str, Any]) -> str | None:
    """The dotted name of a mapping among the variables (`tools.by_kind`, `params`,
    `params.edit`), found by identity two levels deep; None when it is not one of them."""
    for name, value in variables.items():
        if value is owner:
            return name
        if isinstance(value, Mapping):
            for key, inner in value.items():
                if inner is owner:
                    return f"{name}.{key}"
    return None


def _template_line(tb: TracebackType | None, name: str) -> int | None:
    """The template line of the innermost frame that belongs to the template: Jinja rewrites
    tracebacks so template frames carry the template's file name and line numbers."""
    line = None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == name:
            line = tb.tb_lineno
        tb = tb.tb_next
    return line
