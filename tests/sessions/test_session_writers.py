"""A session changes only through its own methods (sessions/store.py): no module outside
sessions/ assigns one of its attributes or changes what they hold, so each rule about a session's
state (the byte caps, the counters, the gate's memory) has one writer."""

from __future__ import annotations

import ast
import dataclasses
from collections.abc import Iterator
from pathlib import Path

from promptd.sessions.store import Session

SRC = Path(__file__).resolve().parents[2] / "src" / "promptd"
FIELDS = frozenset(f.name for f in dataclasses.fields(Session))
MUTATORS = frozenset({"append", "extend", "insert", "remove", "sort", "reverse", "add", "discard", "update", "clear", "pop", "popitem", "setdefault"})


def session_field(node: ast.expr) -> str | None:
    """The session field `node` reaches (`session.counters.turns`, `self.session.delivered[key]`),
    or None: a chain of attributes and subscripts rooted at a name that says it is a session."""
    reached = None
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        if isinstance(node, ast.Attribute) and node.attr in FIELDS:
            reached = node.attr
        node = node.value
        if isinstance(node, ast.Attribute) and "session" in node.attr.lower():
            return reached
    if isinstance(node, ast.Name) and "session" in node.id.lower():
        return reached
    return None


def writes(tree: ast.AST) -> Iterator[tuple[int, str]]:
    for node in ast.walk(tree):
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        elif isinstance(node, ast.Delete):
            targets = node.targets
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in MUTATORS:
            targets = [node.func.value]
        for target in targets:
            name = session_field(target)
            if name is not None:
                yield node.lineno, name


def test_no_module_outside_sessions_changes_a_sessions_state():
    found = [
        f"{path.relative_to(SRC)}:{line}: {field}"
        for path in sorted(SRC.rglob("*.py"))
        if path.relative_to(SRC).parts[0] != "sessions"
        for line, field in writes(ast.parse(path.read_text(), str(path)))
    ]
    assert found == []


def test_the_check_sees_each_kind_of_write():
    source = """
session.last_prompt = now
session.counters.turns += 1
session.gate_fires[prompt] = 1
del session.gate_fires[prompt]
session.delivered.update(delivered)
self.session.modified_files.clear()
"""
    assert [field for _, field in writes(ast.parse(source))] == ["last_prompt", "counters", "gate_fires", "gate_fires", "delivered", "modified_files"]
    # Reading is not writing, and a name that is not a session's is not one.
    assert list(writes(ast.parse("turns = session.counters.turns\nresult.delivered.update(x)\nview = dict(session.last_delivered)"))) == []
