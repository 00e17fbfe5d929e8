"""The layers of src/promptd, declared once (LAYERS below) and checked from the imports of every
module: `import x` and `from x import y`, at module level and inside functions alike.

docs/architecture.md describes the same map; this table is the one that is enforced.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"

# Top to bottom. A module may import its own area and any area of a lower layer, plus the
# same-layer edges in ALSO, minus the edges in NEVER. `promptd` alone is the package's
# __init__ (version constants); every other name covers a module or a package and all inside it.
LAYERS: tuple[tuple[str, ...], ...] = (
    # The doors: the command line, the stdio transport, the in-process door.
    ("promptd.__main__", "promptd.cli", "promptd.transport", "promptd.local"),
    # The method table, its thin adapters, and the one exception-to-wire boundary.
    ("promptd.methods",),
    # What the methods stand on: the runtime a door serves (configuration applied, registries,
    # stores, the ledger), and the OpenRPC document built from the models and a table it is given.
    ("promptd.runtime", "promptd.protocol"),
    # The models of both directions (params, results, events, provider/produce).
    ("promptd.api",),
    # The domains: plain functions over plain data, raising domain errors.
    ("promptd.reminders", "promptd.assembly", "promptd.prompt", "promptd.citations", "promptd.sessions"),
    # Sans-IO JSON-RPC, configuration, the structured logger.
    # The environment of child processes, beside the key reading whose keys it withholds.
    ("promptd.rpc", "promptd.config", "promptd.logs", "promptd.keyfile", "promptd.childenv"),
    # The closed sets of each area (enums), declared once: the domain, the configuration and the
    # wire models all use these. They import nothing of promptd's.
    ("promptd.reminders.kinds", "promptd.assembly.kinds", "promptd.prompt.kinds", "promptd.citations.kinds"),
    # The base: plain text helpers, the error catalogue, and files.py, the one safe-open rule,
    # on the standard library alone; exactjson, the one JSON writer and exact reader, on orjson;
    # later.py, the one branch between a result now and an awaitable of it.
    ("promptd.text", "promptd.errors", "promptd.files", "promptd.exactjson", "promptd.later", "promptd"),
)

# Same-layer imports that are part of the design.
ALSO: dict[str, frozenset[str]] = {
    "promptd.__main__": frozenset({"promptd.cli"}),
    # Commands reach the method table only through the in-process door; `serve` starts the transport.
    "promptd.cli": frozenset({"promptd.local", "promptd.transport"}),
    # Assembly runs the reminder providers: it formats reminders, reads sessions and todos.
    "promptd.assembly": frozenset({"promptd.reminders", "promptd.sessions"}),
    # A rendered prompt prints host values: it is sanitized as such, and recorded in the ledger
    # of the prompts history/sanitize gives back unchanged.
    "promptd.prompt": frozenset({"promptd.reminders"}),
    # The log level is a setting; promptd's own variable names are declared where children are
    # kept from them.
    "promptd.config": frozenset({"promptd.logs", "promptd.childenv"}),
    # No child gets a key promptd holds, in any of the forms keyfile reads.
    "promptd.childenv": frozenset({"promptd.keyfile"}),
}

DOMAINS = LAYERS[4]
# Downward imports that are still refused: the domains know nothing of the wire.
NEVER: dict[str, frozenset[str]] = {domain: frozenset({"promptd.rpc"}) for domain in DOMAINS}

# The one upward edge: `promptd.Local` is re-exported lazily (PEP 562, on first attribute access),
# so `import promptd` does not pay for pydantic and the method table.
UPWARD = {("promptd", "promptd.local")}


def _modules() -> dict[str, Path]:
    modules = {}
    for path in sorted((SRC / "promptd").rglob("*.py")):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = path
    return modules


MODULES = _modules()


def _area(module: str) -> str | None:
    """The LAYERS name covering `module` (the longest one that is it or a package above it)."""
    best = None
    for layer in LAYERS:
        for area in layer:
            covers = module == area or (area != "promptd" and module.startswith(area + "."))
            if covers and (best is None or len(area) > len(best)):
                best = area
    return best


def _layer(area: str) -> int:
    return next(index for index, layer in enumerate(LAYERS) if area in layer)


def _imports(module: str) -> Iterator[tuple[int, str]]:
    """(line, imported promptd module) for every import statement anywhere in `module`."""
    path = MODULES[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            # `from promptd import errors` imports the module promptd.errors, not the package.
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in MODULES else base for alias in node.names]
        else:
            continue
        for target in targets:
            if target == "promptd" or target.startswith("promptd."):
                yield node.lineno, target


def _allowed(source: str, target: str) -> bool:
    if source == target or (source, target) in UPWARD:
        return True
    if target in NEVER.get(source, ()):
        return False
    if target in ALSO.get(source, ()):
        return True
    return _layer(target) > _layer(source)


def test_every_name_in_the_table_is_a_module_that_exists():
    named = [area for layer in LAYERS for area in layer]
    named += [*ALSO, *(t for targets in ALSO.values() for t in targets), *NEVER, *(t for targets in NEVER.values() for t in targets)]
    named += [end for edge in UPWARD for end in edge]
    assert len(set(a for layer in LAYERS for a in layer)) == sum(map(len, LAYERS)), "an area is listed twice"
    assert sorted(set(named) - set(MODULES)) == []


def test_every_module_belongs_to_an_area():
    assert sorted(module for module in MODULES if _area(module) is None) == []


def test_every_import_points_down_the_layers():
    wrong = []
    for module in MODULES:
        source = _area(module)
        for line, target in _imports(module):
            target_area = _area(target)
            assert target_area is not None, f"{module}:{line} imports {target}, which no area covers"
            if not _allowed(source, target_area):
                wrong.append(f"{MODULES[module].relative_to(SRC)}:{line} imports {target} ({source} -> {target_area})")
    assert wrong == []


def test_no_module_imports_itself_back_through_others():
    # Within an area too: a package whose module imports the package back (even from inside a
    # function, where the cycle only hides) is a cycle. The lazy re-export in UPWARD is not.
    graph = {module: {target for _, target in _imports(module) if target in MODULES and target != module and (module, target) not in UPWARD} for module in MODULES}
    cycles = []
    state: dict[str, int] = {}

    def visit(module: str, trail: list[str]) -> None:
        state[module] = 1
        for target in sorted(graph[module]):
            if state.get(target) == 1:
                cycles.append(" -> ".join([*trail[trail.index(target) :], target]))
            elif target not in state:
                visit(target, [*trail, target])
        state[module] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])
    assert cycles == []


def test_the_domains_are_the_layer_the_design_names():
    # DESIGN.md "Layout": domains (reminders, assembly, prompt, citations, sessions with its todos).
    assert {area.removeprefix("promptd.") for area in DOMAINS} == {"reminders", "assembly", "prompt", "citations", "sessions"}
