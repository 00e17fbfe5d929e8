"""What an object keeps alive: every string reachable from it by reference.

For tests that show a secret is not kept (a sealed template's plaintext in the engine's compile
cache). The walk follows every reference the garbage collector knows of, and the constants of code
objects (which it does not list), but stops at modules, classes and module namespaces: those reach
the whole program (the test's own constants included), not what the object itself holds.
"""

from __future__ import annotations

import gc
import sys
import types
from collections.abc import Iterator


def strings_reachable_from(root: object) -> Iterator[str]:
    namespaces = {id(vars(module)) for module in list(sys.modules.values()) if module is not None}
    seen: set[int] = set()
    stack: list[object] = [root]
    while stack:
        obj = stack.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        if isinstance(obj, str):
            yield obj
        elif isinstance(obj, (types.ModuleType, type)) or id(obj) in namespaces:
            continue
        elif isinstance(obj, types.CodeType):
            stack.extend(obj.co_consts)
        else:
            stack.extend(gc.get_referents(obj))
