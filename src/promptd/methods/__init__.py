"""The method table: name -> (params model, result model, handler).

The dispatcher, `initialize`'s method list, `rpc.discover` and protocol/openrpc.json all read it.
Each area contributes the METHODS list of its own module.
"""

from __future__ import annotations

from promptd.methods import assembly, citations, core, prompt, provenance, reminders, todos
from promptd.methods.base import Method


def _build(*groups: list[Method]) -> dict[str, Method]:
    table: dict[str, Method] = {}
    for group in groups:
        for method in group:
            if method.name in table:
                raise RuntimeError(f"method {method.name} is defined twice")
            table[method.name] = method
    return table


TABLE: dict[str, Method] = _build(
    core.METHODS,
    reminders.METHODS,
    prompt.METHODS,
    citations.METHODS,
    provenance.METHODS,
    assembly.METHODS,
    todos.METHODS,
)
