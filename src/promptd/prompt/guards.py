"""The guard rule (docs/templates.md, "The guard rule"): the walk over a template's syntax tree
that finds every use of `tools.by_kind.X` that can carry the tool's name anywhere (output, a
variable, a loop, an argument) outside a condition that is only true when `tools.by_kind.X` is
set, and every `params.X.Y` outside a condition on `params.X`.

Domain layer: must not import promptd.rpc or promptd.methods; imported lazily (it uses jinja2).

The walk understands the template as the engine does: `if` / `elif` / `else` chains, `not`, `and`,
`or`, nesting, and conditional expressions. What a branch may rely on is computed from its
condition: inside `if A and B` both A and B are set; inside the `else` of `if not A`, A is set;
the `else` of `if A` guards nothing. A reference that is only tested (an `if` test, `is defined`,
a comparison) carries no name and needs no guard; any other use does: `${{ }}` output,
`${% set %}`, a `for` iterable, a `with` value, a filter, call or macro argument, a macro default.
A copy of the tool mapping itself (`${% set t = tools.by_kind %}`) would let a name out unseen, so
using `tools` or `tools.by_kind` as a value is reported too. `params.X.Y` fails at render whenever
the host sends no `X` parameters, so it needs a condition on `params.X` even in a test.

References are recorded in source order with their line; lint.py gives them columns.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from jinja2 import nodes

from promptd.prompt.names import suggest
from promptd.prompt.sandbox import MAPPING_METHODS

Kinds = frozenset[str]
EMPTY: Kinds = frozenset()
NAMESPACE = "tools"
PARAMS = "params"
MAPPING = "by_kind"
# A guard on `params.X` is kept among the guarded tool kinds under this prefix (no tool kind written
# `tools.by_kind.X` can contain a colon).
PARAM_GUARD = "params:"
# Filters that turn the tool mapping into something that can no longer be looked up by kind (a
# count, the kinds, or the pairs of tools that exist): applying them to the mapping is no copy.
MAPPING_FILTERS = frozenset({"count", "dictsort", "first", "items", "join", "last", "length", "list", "sort", "tojson"})

UNGUARDED = "unguarded_tool"
DYNAMIC = "dynamic_tool"
ALIASED = "aliased_tools"
UNGUARDED_PARAM = "unguarded_param"
UNDEFINED = "undefined_variable"


@dataclass(slots=True)
class _Reference:
    """One occurrence of the name `tools` or `params` in the template, in source order, with what
    is wrong with it (None: nothing)."""

    line: int
    problem: str | None = None
    kind: str | None = None
    output: bool = False
    name: str = NAMESPACE


def message_for(ref: _Reference) -> str:
    if ref.problem == DYNAMIC:
        return "a tool looked up by a computed kind cannot be checked; test `tools.by_kind.X` by name"
    if ref.problem == ALIASED:
        return "the tool mapping is used as a value, which the lint cannot follow; use `tools.by_kind.X` inside `${% if tools.by_kind.X %}`"
    if ref.problem == UNGUARDED_PARAM:
        return f"`params.{ref.kind}` is used outside `${{% if params.{ref.kind} %}}`: it is undefined whenever the host sends no `{ref.kind}` parameters"
    if ref.problem == UNDEFINED:
        hint = "; did you mean `by_kind`?" if suggest(ref.kind or "", [MAPPING]) else ""
        return f"`tools` has only `by_kind`; `tools.{ref.kind}` is undefined{hint}"
    verb = "output" if ref.output else "used"
    return f"`tools.by_kind.{ref.kind}` is {verb} outside `${{% if tools.by_kind.{ref.kind} %}}`"


# -- the AST pass ------------------------------------------------------------------------------


def _is_namespace(node: nodes.Node) -> bool:
    return isinstance(node, nodes.Name) and node.name == NAMESPACE


def _const_key(node: nodes.Getattr | nodes.Getitem) -> str | None:
    if isinstance(node, nodes.Getattr):
        return node.attr
    return node.arg.value if isinstance(node.arg, nodes.Const) and isinstance(node.arg.value, str) else None


def _param_kind(node: nodes.Node) -> str | None:
    """X of `params.X` / `params['X']`, else None."""
    if isinstance(node, (nodes.Getattr, nodes.Getitem)) and isinstance(node.node, nodes.Name) and node.node.name == PARAMS:
        return _const_key(node)
    return None


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
        # Every node a reference sits in (Getattr, Getitem, Filter, Call, Test) keeps its operand
        # in `.node`, which jinja2's base Node does not declare.
        node = getattr(node, "node")  # noqa: B009 - typed as the base Node, which declares no `.node`
    return node.lineno


def _truthy_const(node: nodes.Node) -> bool:
    return isinstance(node, nodes.Const) and bool(node.value)


def implied(test: nodes.Node) -> tuple[Kinds, Kinds]:
    """(kinds certainly set when `test` is true, kinds certainly set when it is false)."""
    is_ref, kind = _tool_kind(test)
    if is_ref:
        return (frozenset({kind}) if kind else EMPTY), EMPTY
    param = _param_kind(test)
    if param is not None:
        return frozenset({PARAM_GUARD + param}), EMPTY
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


class Walker:
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
            for part in node.iter_child_nodes():
                if isinstance(part, (nodes.Stmt, nodes.Template)):
                    self.statement(part, guarded)
                elif isinstance(part, nodes.Expr) and not _is_target(part):
                    self.expression(part, guarded, valued=True)

    def _if_chain(self, node: nodes.If, guarded: Kinds) -> None:
        # Each branch may rely on its own test and on every earlier test having been false.
        failed: Kinds = EMPTY
        for branch in (node, *node.elif_):
            self.expression(branch.test, guarded, valued=False)
            when_true, when_false = implied(branch.test)
            self.statements(branch.body, guarded | failed | when_true)
            failed = failed | when_false
        self.statements(node.else_, guarded | failed)

    def _record(self, node: nodes.Node, problem: str | None, kind: str | None = None, name: str = NAMESPACE) -> None:
        self.references.append(_Reference(_namespace_line(node), problem, kind, self._output, name))

    def _params(self, node: nodes.Node, guarded: Kinds, valued: bool) -> bool:
        """Records `params.X` (needs a guard on itself when used as a value) and `params.X.Y`
        (needs a guard on `params.X` even in a test: reading Y of an undefined X fails)."""
        if isinstance(node, (nodes.Getattr, nodes.Getitem)):
            kind = _param_kind(node.node)
            if kind is not None:
                problem = None if PARAM_GUARD + kind in guarded else UNGUARDED_PARAM
                self._record(node, problem, kind, PARAMS)
                if isinstance(node, nodes.Getitem):
                    self.expression(node.arg, guarded, valued=False)
                return True
        kind = _param_kind(node)
        if kind is not None:
            problem = UNGUARDED_PARAM if valued and PARAM_GUARD + kind not in guarded else None
            self._record(node, problem, kind, PARAMS)
            return True
        return False

    def expression(self, node: nodes.Node, guarded: Kinds, valued: bool) -> None:
        """Records every `tools` inside `node`; `valued` is False where the value is only tested
        (it can never reach the output or a variable)."""
        if self._params(node, guarded, valued):
            return
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
        if isinstance(node, nodes.Call) and isinstance(node.node, nodes.Getattr) and node.node.attr == "get" and _is_mapping(node.node.node):
            # `tools.by_kind.get("read")` is `tools.by_kind.read` by another name.
            first = node.args[0] if node.args else None
            kind = first.value if isinstance(first, nodes.Const) and isinstance(first.value, str) else None
            problem = None
            if valued and kind is None:
                problem = DYNAMIC
            elif valued and kind not in guarded and kind not in self.exempt:
                problem = UNGUARDED
            self._record(node.node, problem, kind)
            self._arguments(node, guarded, valued=False)
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
            key = None if computed else _const_key(node)
            self._record(node, DYNAMIC if valued and computed else (UNDEFINED if key is not None else None), key)
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
