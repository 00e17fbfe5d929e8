"""The guard lint (the guard rule of docs/templates.md): every use of `tools.by_kind.X` that can carry
the tool's name anywhere (output, a variable, a loop, an argument) must sit inside a condition that
is only true when `tools.by_kind.X` is set, so a missing tool can never leave an empty tool name in
a prompt.

Domain layer: must not import promptd.rpc or promptd.methods; imported lazily (it uses jinja2).

The check runs over the Jinja AST, so it understands the template as the engine does: `if` /
`elif` / `else` chains, `not`, `and`, `or`, nesting, and conditional expressions. What a branch
may rely on is computed from its condition: inside `if A and B` both A and B are set; inside the
`else` of `if not A`, A is set; the `else` of `if A` guards nothing. A reference that is only tested
(an `if` test, `is defined`, a comparison) carries no name and needs no guard; any other use does:
`${{ }}` output, `${% set %}`, a `for` iterable, a `with` value, a filter, call or macro argument, a
macro default. A copy of the tool mapping itself (`${% set t = tools.by_kind %}`) would let a name
out unseen, so using `tools` or `tools.by_kind` as a value is reported too. The AST has lines but
no columns, so columns come from a second pass over the token stream.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from jinja2 import TemplateSyntaxError, nodes

from promptd.prompt.engine import MAPPING_METHODS, engine

Kinds = frozenset[str]
EMPTY: Kinds = frozenset()
NAMESPACE = "tools"
MAPPING = "by_kind"
# Filters that turn the tool mapping into something that can no longer be looked up by kind (a
# count, the kinds, or the pairs of tools that exist): applying them to the mapping is no copy.
MAPPING_FILTERS = frozenset({"count", "dictsort", "first", "items", "join", "last", "length", "list", "sort", "tojson"})

UNGUARDED = "unguarded_tool"
DYNAMIC = "dynamic_tool"
ALIASED = "aliased_tools"


@dataclass(frozen=True, slots=True)
class Violation:
    line: int
    column: int
    kind: str  # unguarded_tool | dynamic_tool | aliased_tools | syntax
    message: str


@dataclass(slots=True)
class _Reference:
    """One occurrence of the name `tools` in the template, in source order, with what is wrong
    with it (None: nothing)."""

    line: int
    problem: str | None = None
    kind: str | None = None
    output: bool = False


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
    positions = _Positions(source)
    violations = []
    for ref in walker.references:
        line, column = positions.next_on(ref.line)
        if ref.problem is not None:
            violations.append(Violation(line, column, ref.problem, _message(ref)))
    return violations


def _message(ref: _Reference) -> str:
    if ref.problem == DYNAMIC:
        return "a tool looked up by a computed kind cannot be checked; test `tools.by_kind.X` by name"
    if ref.problem == ALIASED:
        return "the tool mapping is used as a value, which the lint cannot follow; use `tools.by_kind.X` inside `${% if tools.by_kind.X %}`"
    verb = "output" if ref.output else "used"
    return f"`tools.by_kind.{ref.kind}` is {verb} outside `${{% if tools.by_kind.{ref.kind} %}}`"


# -- the AST pass ------------------------------------------------------------------------------


def _is_namespace(node: nodes.Node) -> bool:
    return isinstance(node, nodes.Name) and node.name == NAMESPACE


def _is_mapping(node: nodes.Node) -> bool:
    """`tools.by_kind` or `tools['by_kind']`."""
    if isinstance(node, nodes.Getattr):
        return node.attr == MAPPING and _is_namespace(node.node)
    if isinstance(node, nodes.Getitem):
        return _is_namespace(node.node) and isinstance(node.arg, nodes.Const) and node.arg.value == MAPPING
    return False


def _tool_kind(node: nodes.Node) -> tuple[bool, str | None]:
    """(is a tools.by_kind reference, its kind or None when computed)."""
    if isinstance(node, (nodes.Getattr, nodes.Getitem)) and _is_mapping(node.node):
        if isinstance(node, nodes.Getattr):
            return True, node.attr
        arg = node.arg
        if isinstance(arg, nodes.Const) and isinstance(arg.value, str):
            return True, arg.value
        return True, None
    return False, None


def _is_target(node: nodes.Node) -> bool:
    """A name being assigned or a macro parameter: it holds no value to check."""
    return isinstance(node, nodes.NSRef) or (isinstance(node, (nodes.Name, nodes.Tuple)) and node.ctx in ("store", "param"))


def _namespace_line(node: nodes.Node) -> int:
    while not isinstance(node, nodes.Name):
        node = node.node
    return node.lineno


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
    """Visits statements and expressions in source order, recording every occurrence of `tools`."""

    def __init__(self, exempt: Kinds) -> None:
        self.exempt = exempt
        self.references: list[_Reference] = []
        self._output = False

    def statements(self, body: Iterable[nodes.Node], guarded: Kinds) -> None:
        for node in body:
            self.statement(node, guarded)

    def statement(self, node: nodes.Node, guarded: Kinds) -> None:
        if isinstance(node, nodes.Output):
            self._output = True
            for child in node.nodes:
                self.expression(child, guarded, valued=True)
            self._output = False
        elif isinstance(node, nodes.If):
            self._if_chain(node, guarded)
        elif isinstance(node, nodes.For):
            # Source order: target, iterable, loop filter, body, else.
            self.expression(node.iter, guarded, valued=True)
            inside = guarded
            if node.test is not None:
                self.expression(node.test, guarded, valued=False)
                inside = guarded | implied(node.test)[0]
            self.statements(node.body, inside)
            self.statements(node.else_, guarded)
        elif isinstance(node, nodes.CallBlock):
            # `${% call(a=DEFAULT) macro(ARGS) %}`: the caller's defaults come first in the source.
            for default in node.defaults:
                self.expression(default, guarded, valued=True)
            self.expression(node.call, guarded, valued=True)
            self.statements(node.body, guarded)
        elif isinstance(node, nodes.FilterBlock):
            self.expression(node.filter, guarded, valued=True)
            self.statements(node.body, guarded)
        else:
            # Assign, AssignBlock, With, Macro, ExprStmt, Include, Block, Scope, ...: every
            # expression is a value (targets and parameter names hold no reference to walk).
            for child in node.iter_child_nodes():
                if isinstance(child, (nodes.Stmt, nodes.Template)):
                    self.statement(child, guarded)
                elif isinstance(child, nodes.Expr) and not _is_target(child):
                    self.expression(child, guarded, valued=True)

    def _if_chain(self, node: nodes.If, guarded: Kinds) -> None:
        # Each branch may rely on its own test and on every earlier test having been false.
        failed: Kinds = EMPTY
        for branch in (node, *node.elif_):
            self.expression(branch.test, guarded, valued=False)
            when_true, when_false = implied(branch.test)
            self.statements(branch.body, guarded | failed | when_true)
            failed = failed | when_false
        self.statements(node.else_, guarded | failed)

    def _record(self, node: nodes.Node, problem: str | None, kind: str | None = None) -> None:
        self.references.append(_Reference(_namespace_line(node), problem, kind, self._output))

    def expression(self, node: nodes.Node, guarded: Kinds, valued: bool) -> None:
        """Records every `tools` inside `node`; `valued` is False where the value is only tested
        (it can never reach the output or a variable)."""
        is_ref, kind = _tool_kind(node)
        if is_ref:
            problem = None
            if valued and kind is None:
                problem = DYNAMIC
            elif valued and kind not in guarded and kind not in self.exempt:
                problem = UNGUARDED
            self._record(node, problem, kind)
            if isinstance(node, nodes.Getitem):
                self.expression(node.arg, guarded, valued=False)  # a key, never itself written
            return
        if isinstance(node, nodes.Call) and isinstance(node.node, nodes.Getattr) and node.node.attr in MAPPING_METHODS and _is_mapping(node.node.node):
            # `tools.by_kind.items()` walks the mapping; it names no tool.
            self._record(node.node, None)
            self._arguments(node, guarded, valued)
            return
        if isinstance(node, nodes.Filter) and node.name in MAPPING_FILTERS and node.node is not None and (_is_mapping(node.node) or _is_namespace(node.node)):
            self._record(node.node, None)
            self._arguments(node, guarded, valued)
            return
        if _is_mapping(node) or _is_namespace(node):
            self._record(node, ALIASED if valued else None)
            return
        if isinstance(node, (nodes.Getattr, nodes.Getitem)) and _is_namespace(node.node):
            # `tools[k]` may be `tools.by_kind`; `tools.other` is some other (undefined) key.
            computed = isinstance(node, nodes.Getitem) and not isinstance(node.arg, nodes.Const)
            self._record(node, DYNAMIC if valued and computed else None)
            if isinstance(node, nodes.Getitem):
                self.expression(node.arg, guarded, valued=False)
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

    def _arguments(self, node: nodes.Call | nodes.Filter, guarded: Kinds, valued: bool) -> None:
        for arg in (*node.args, *(kw.value for kw in node.kwargs), node.dyn_args, node.dyn_kwargs):
            if arg is not None:
                self.expression(arg, guarded, valued)


# -- the token pass (columns) ------------------------------------------------------------------


class _Positions:
    """(line, column) of each `tools` name in the template's tags, handed out line by line in
    source order, the order the walker records them in."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.by_line: dict[int, list[int]] = {}
        self.taken: dict[int, int] = {}
        for line, column in _namespace_positions(source):
            self.by_line.setdefault(line, []).append(column)

    def next_on(self, line: int) -> tuple[int, int]:
        columns = self.by_line.get(line)
        if not columns:
            return line, _first_column(self.source, line)
        index = self.taken.get(line, 0)
        self.taken[line] = index + 1
        # More references than names on the line means a name the token pass skipped (a
        # keyword argument called `tools`): the last known column is still on the right line.
        return line, columns[min(index, len(columns) - 1)]


def _namespace_positions(source: str) -> Iterator[tuple[int, int]]:
    """(line, column) of each `tools` name inside `${{ }}` and `${% %}`, in source order: a name
    token, not an attribute (`x.tools`)."""
    env = engine().environment
    cursor = 0
    inside = False
    previous: tuple[str, str] | None = None
    try:
        for _lineno, token_type, value in env.lex(source):
            offset = source.find(value, cursor) if value else cursor
            if offset < 0:
                return
            cursor = offset + len(value)
            if token_type in ("variable_begin", "block_begin"):
                inside = True
            elif token_type in ("variable_end", "block_end"):
                inside = False
            elif inside and token_type != "whitespace":
                if token_type == "name" and value == NAMESPACE and previous != ("operator", "."):
                    yield _line_column(source, offset)
                previous = (token_type, value)
    except TemplateSyntaxError:
        return


def _line_column(source: str, offset: int) -> tuple[int, int]:
    line = source.count("\n", 0, offset) + 1
    start = source.rfind("\n", 0, offset) + 1
    return line, offset - start + 1


def _first_column(source: str, line: int) -> int:
    text = source.split("\n")[line - 1] if 0 < line <= source.count("\n") + 1 else ""
    found = text.find("tools")
    return found + 1 if found >= 0 else 1
