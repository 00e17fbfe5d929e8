"""The method table: name -> (params model, result model, handler).

The dispatcher, `initialize`'s method list, `rpc.discover` and protocol/openrpc.json all read it.
Each area contributes the METHODS list of its own module; core's lifecycle methods are built for
the table, since two of them describe it.

Methods layer: imports api/, app.py, protocol.py and the domains; nothing below imports it.
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


# initialize and rpc.discover describe this very table: they receive it, and it is filled here,
# before anything can call them.
TABLE: dict[str, Method] = {}
TABLE.update(
    _build(
        core.lifecycle_methods(TABLE),
        reminders.METHODS,
        prompt.METHODS,
        citations.METHODS,
        provenance.METHODS,
        assembly.METHODS,
        todos.METHODS,
    )
)
