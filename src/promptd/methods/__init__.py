"""The method table: name -> (params model, result model, handler).

The dispatcher, `initialize`'s method list, `rpc.discover` and protocol/openrpc.json all read it.
Each area contributes the METHODS list of its own module; core's lifecycle methods are built for
the table, since two of them describe it.

An area's module (with its API models and the domain code it calls) is imported when one of its
methods is first looked up: a process pays at start-up only for the lifecycle methods, and the
first call of an area pays for that area (a host that never parses citations never imports them).
The names of each area are listed here so the table knows them without importing anything; an
area whose METHODS do not match its names fails on first use, and the protocol tests load them all.

Methods layer: imports api/, runtime.py, protocol.py and the domains; nothing below imports it.
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Iterator, Mapping

from promptd.methods import core
from promptd.methods.base import Method

# Area module -> its method names, in the order its METHODS list them.
AREAS: dict[str, tuple[str, ...]] = {
    "reminders": ("reminder/wrap", "reminder/wrap_many", "reminder/keys"),
    "prompt": ("prompt/render", "prompt/persist"),
    "authoring": ("prompt/lint", "prompt/vars"),
    "citations": ("citation/parse", "citation/describe", "citation/export", "citation/strip"),
    "provenance": ("content/sanitize", "content/sanitize_value", "content/inspect", "reminder/parse", "reminder/strip", "history/sanitize"),
    "providers": ("providers/register", "providers/unregister", "providers/list"),
    "assembly": (
        "session/update",
        "session/close",
        "reminder/assemble",
        "turn/compose",
        "turn/complete",
    ),
    "todos": ("todo/gate",),
}


class MethodTable(Mapping[str, Method]):
    """The table as a mapping whose areas are imported on first lookup. Iterating names and `in`
    import nothing; looking a method up, or reading values and items, imports its area."""

    def __init__(self, areas: Mapping[str, tuple[str, ...]]) -> None:
        self._areas = dict(areas)
        self._area_of: dict[str, str] = {}
        for area, names in self._areas.items():
            for name in names:
                if name in self._area_of:
                    raise RuntimeError(f"method {name} is defined twice")
                self._area_of[name] = area
        self._loaded: dict[str, Method] = {}
        self._lock = threading.RLock()
        # Every name, core's first: the order of iteration never depends on what was loaded.
        self._names: list[str] = []

    def add(self, methods: list[Method]) -> None:
        """Methods known at once (core's lifecycle methods)."""
        for method in methods:
            if method.name in self._area_of or method.name in self._loaded:
                raise RuntimeError(f"method {method.name} is defined twice")
            self._loaded[method.name] = method
            self._names.append(method.name)

    def __getitem__(self, name: str) -> Method:
        method = self._loaded.get(name)
        if method is None:
            self._load(self._area_of[name])  # KeyError: no such method
            method = self._loaded[name]
        return method

    def __contains__(self, name: object) -> bool:
        return name in self._loaded or name in self._area_of

    def __iter__(self) -> Iterator[str]:
        return iter([*self._names, *self._area_of])

    def __len__(self) -> int:
        return len(self._names) + len(self._area_of)

    def _load(self, area: str) -> None:
        with self._lock:
            if self._areas[area][0] in self._loaded:
                return
            methods: list[Method] = importlib.import_module(f"promptd.methods.{area}").METHODS
            names = tuple(method.name for method in methods)
            if names != self._areas[area]:
                raise RuntimeError(f"promptd.methods.{area} defines {names}, the table lists {self._areas[area]}")
            self._loaded.update((method.name, method) for method in methods)


# initialize and rpc.discover describe this very table: they receive it, and it is filled here,
# before anything can call them.
TABLE = MethodTable(AREAS)
TABLE.add(core.lifecycle_methods(TABLE))
