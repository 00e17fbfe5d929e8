"""Filters and tests a template uses that the dialect does not have, found in its syntax tree.

Domain layer: must not import promptd.rpc or promptd.methods; imported lazily (it uses jinja2).

Jinja's compiler refuses an unknown filter or test, except inside a branch of an `if`: there it
compiles a runtime error, raised only when the branch runs, at column 1 of the line. So a
template with `${% if x %}${{ y | uper }}${% endif %}` would render, and fail the day `x` is
true. Both the engine's compile (engine.compile_tree) and the lint look here instead, so a render
refuses the template whichever branches run, at the filter's own name, with the lint's words.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from jinja2 import nodes

from promptd.prompt.names import suggest

# The `reason` of the TemplateSyntax a render raises for one: one reason for filters and tests.
REASON = "unknown_name"


class Unknown(NamedTuple):
    line: int
    name: str
    what: str  # filter | test
    suggestions: list[str]

    @property
    def cause(self) -> str:
        hint = ("; did you mean " + " or ".join(f"`{s}`" for s in self.suggestions) + "?") if self.suggestions else ""
        return f"no {self.what} named `{self.name}`{hint}"


def find(env: Any, tree: nodes.Template) -> list[Unknown]:
    """Every filter and test in `tree` that `env` does not have, in tree order."""
    found = []
    for node in tree.find_all((nodes.Filter, nodes.Test)):
        table, what = (env.filters, "filter") if isinstance(node, nodes.Filter) else (env.tests, "test")
        if node.name not in table:
            found.append(Unknown(node.lineno, node.name, what, suggest(node.name, table)))
    return found
