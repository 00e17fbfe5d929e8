"""The guard lint (seed 004's template protection): every `${{ tools.by_kind.X }}` must sit inside
a condition that is only true when `tools.by_kind.X` is set, so a missing tool can never leave an
empty tool name in a prompt.

Domain layer: must not import promptd.rpc or promptd.methods; imported lazily (it uses jinja2).

The check runs over the Jinja AST, so it understands the template as the engine does: `if` /
`elif` / `else` chains, `not`, `and`, `or`, nesting, and conditional expressions. What a branch
may rely on is computed from its condition: inside `if A and B` both A and B are set; inside the
`else` of `if not A`, A is set; the `else` of `if A` guards nothing. The AST has lines but no
columns, so columns come from a second pass over the token stream (same order, same references).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from jinja2 import TemplateSyntaxError, nodes

from promptd.prompt.engine import MAPPING_METHODS, engine

Kinds = frozenset[str]
EMPTY: Kinds = frozenset()


@dataclass(frozen=True, slots=True)
class Violation:
    line: int
    column: int
    kind: str  # unguarded_tool | dynamic_tool | syntax
    message: str


@dataclass(slots=True)
class _Reference:
    kind: str | None  # None: a computed kind, tools.by_kind[expr]
    ok: bool
    line: int


def lint(source: str, exempt: Iterable[str] = ()) -> list[Violation]:
    """Every guard violation in `source`, in order; a syntax error is reported as one violation."""
    env = engine().environment
    try:
        tree = env.parse(source)
    except TemplateSyntaxError as exc:
        exc.source = None
        return [Violation(exc.lineno or 1, 1, "syntax", exc.message or "syntax error")]
    walker = _Walker(frozenset(exempt))
    walker.statements(tree.body, EMPTY)
    positions = list(_output_reference_positions(source))
    aligned = len(positions) == len(walker.references)
    violations = []
    for index, ref in enumerate(walker.references):
        if ref.ok:
            continue
        line, column = positions[index] if aligned else (ref.line, _first_column(source, ref.line))
        if ref.kind is None:
            violations.append(Violation(line, column, "dynamic_tool", "a tool looked up by a computed kind cannot be checked; test `tools.by_kind.X` by name"))
        else:
            violations.append(
                Violation(line, column, "unguarded_tool", f"`tools.by_kind.{ref.kind}` is output outside `${{% if tools.by_kind.{ref.kind} %}}`")
            )
    return violations


# -- the AST pass ------------------------------------------------------------------------------


def _tool_kind(node: nodes.Node) -> tuple[bool, str | None]:
    """(is a tools.by_kind reference, its kind or None when computed)."""
    if isinstance(node, (nodes.Getattr, nodes.Getitem)):
        base = node.node
        if isinstance(base, nodes.Getattr) and base.attr == "by_kind" and isinstance(base.node, nodes.Name) and base.node.name == "tools":
            if isinstance(node, nodes.Getattr):
                return True, node.attr
            arg = node.arg
            if isinstance(arg, nodes.Const) and isinstance(arg.value, str):
                return True, arg.value
            return True, None
    return False, None


def _truthy_const(node: nodes.Node) -> bool:
    return isinstance(node, nodes.Const) and bool(node.value)


def implied(test: nodes.Node) -> tuple[Kinds, Kinds]:
    """(kinds certainly set when `test` is true, kinds certainly set when it is false)."""
    is_ref, kind = _tool_kind(test)
    if is_ref:
        return (frozenset({kind}) if kind else EMPTY), EMPTY
    if isinstance(test, nodes.Not):
        when_true, when_false = implied(test.node)
        return when_false, when_true
    if isinstance(test, nodes.And):
        left_true, left_false = implied(test.left)
        right_true, right_false = implied(test.right)
        return left_true | right_true, left_false & right_false
    if isinstance(test, nodes.Or):
        left_true, left_false = implied(test.left)
        right_true, right_false = implied(test.right)
        return left_true & right_true, left_false | right_false
    if isinstance(test, nodes.Compare) and len(test.ops) == 1 and test.ops[0].op == "eq":
        # `tools.by_kind.read == "read_file"`: equal to a non-empty constant means set.
        for side, other in ((test.expr, test.ops[0].expr), (test.ops[0].expr, test.expr)):
            is_ref, kind = _tool_kind(side)
            if is_ref and kind and _truthy_const(other):
                return frozenset({kind}), EMPTY
    return EMPTY, EMPTY


class _Walker:
    def __init__(self, exempt: Kinds) -> None:
        self.exempt = exempt
        self.references: list[_Reference] = []

    def statements(self, body: Iterable[nodes.Node], guarded: Kinds) -> None:
        for node in body:
            self.statement(node, guarded)

    def statement(self, node: nodes.Node, guarded: Kinds) -> None:
        if isinstance(node, nodes.Output):
            for child in node.nodes:
                self.expression(child, guarded, valued=True)
        elif isinstance(node, nodes.If):
            self._if_chain(node, guarded)
        else:
            for child in node.iter_child_nodes():
                if isinstance(child, (nodes.Stmt, nodes.Template)):
                    self.statement(child, guarded)

    def _if_chain(self, node: nodes.If, guarded: Kinds) -> None:
        # Each branch may rely on its own test and on every earlier test having been false.
        failed: Kinds = EMPTY
        for branch in (node, *node.elif_):
            when_true, when_false = implied(branch.test)
            self.statements(branch.body, guarded | failed | when_true)
            failed = failed | when_false
        self.statements(node.else_, guarded | failed)

    def expression(self, node: nodes.Node, guarded: Kinds, valued: bool) -> None:
        """Records tool references inside `${{ }}` in source order; `valued` is False where the
        value is only tested (it can never reach the output)."""
        is_ref, kind = _tool_kind(node)
        if is_ref:
            ok = not valued or (kind is not None and (kind in guarded or kind in self.exempt))
            self.references.append(_Reference(kind, ok, node.lineno))
            return
        if isinstance(node, nodes.Call) and isinstance(node.node, nodes.Getattr) and node.node.attr in MAPPING_METHODS:
            # `tools.by_kind.items()` walks the mapping; it names no tool.
            is_ref, _ = _tool_kind(node.node)
            if is_ref:
                self.references.append(_Reference(node.node.attr, True, node.lineno))
                for arg in (*node.args, *(kw.value for kw in node.kwargs)):
                    self.expression(arg, guarded, valued)
                return
        if isinstance(node, nodes.CondExpr):
            when_true, when_false = implied(node.test)
            self.expression(node.expr1, guarded | when_true, valued)  # source order: a if t else b
            self.expression(node.test, guarded, valued=False)
            if node.expr2 is not None:
                self.expression(node.expr2, guarded | when_false, valued)
            return
        if isinstance(node, (nodes.And, nodes.Or)):
            left_true, left_false = implied(node.left)
            self.expression(node.left, guarded, valued)
            self.expression(node.right, guarded | (left_true if isinstance(node, nodes.And) else left_false), valued)
            return
        if isinstance(node, (nodes.Not, nodes.Test, nodes.Compare)):
            valued = False
        for child in node.iter_child_nodes():
            self.expression(child, guarded, valued)


# -- the token pass (columns) ------------------------------------------------------------------


def _output_reference_positions(source: str) -> Iterator[tuple[int, int]]:
    """(line, column) of each `tools.by_kind...` reference inside `${{ }}`, in source order."""
    env = engine().environment
    significant: list[tuple[str, str, int]] = []  # (type, value, offset)
    cursor = 0
    inside = False
    try:
        for _lineno, token_type, value in env.lex(source):
            offset = source.find(value, cursor) if value else cursor
            if offset < 0:
                return
            cursor = offset + len(value)
            if token_type == "variable_begin":
                inside = True
            elif token_type == "variable_end":
                inside = False
            elif inside and token_type != "whitespace":
                significant.append((token_type, value, offset))
    except TemplateSyntaxError:
        return
    for i in range(len(significant) - 3):
        kinds = [(t, v) for t, v, _ in significant[i : i + 4]]
        if kinds[0] == ("name", "tools") and kinds[1] == ("operator", ".") and kinds[2] == ("name", "by_kind") and kinds[3][1] in (".", "["):
            yield _line_column(source, significant[i][2])


def _line_column(source: str, offset: int) -> tuple[int, int]:
    line = source.count("\n", 0, offset) + 1
    start = source.rfind("\n", 0, offset) + 1
    return line, offset - start + 1


def _first_column(source: str, line: int) -> int:
    text = source.split("\n")[line - 1] if 0 < line <= source.count("\n") + 1 else ""
    found = text.find("tools")
    return found + 1 if found >= 0 else 1
