"""The template lint (docs/templates.md, "Lint"): everything that can be known about a template
without rendering it, as findings with a line and a column.

Domain layer: must not import promptd.rpc or promptd.methods; imported lazily (it uses jinja2).

The template is parsed and compiled (an unknown filter or test is a finding, even inside an `if`
branch, where Jinja would only notice it at render time); the guard rule runs over its syntax
tree (guards.py); with strict undefined (the default) every name the template reads must be one a
render defines (`undefined_variable`, with "did you mean"); a tool kind that looks like a
misspelling of a documented one is reported (`unknown_tool_kind`); and Python-only methods and
filters, which the reference engine does not have, are warnings (`not_portable`, from two data
sets below that are meant to grow). Two rules keep a prompt cacheable and printable: a read of a
volatile variable is a warning with the share of text it puts at risk (`cache_volatile`), and a
`${{ }}` of a value with no printed form is an error (`no_printed_form`). A sealed envelope is
refused, not linted as text. The syntax tree has lines but no columns, so columns come from the token stream (positions.py). Results are
cached by content hash, so linting an unchanged template again is a lookup.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable
from typing import Any, NamedTuple

from jinja2 import nodes
from jinja2.idtracking import VAR_LOAD_RESOLVE

from promptd.errors import TemplateSyntax
from promptd.prompt import portability, positions
from promptd.prompt.engine import compile_tree, engine, normalize, parse
from promptd.prompt.guards import EMPTY, NAMESPACE, PARAMS, UNDEFINED, Walker, message_for
from promptd.prompt.names import suggest

UNKNOWN_KIND = "unknown_tool_kind"
NOT_PORTABLE = "not_portable"
SYNTAX = "syntax"
CACHE_VOLATILE = "cache_volatile"
NO_PRINTED_FORM = "no_printed_form"

# Portability (docs/template-compatibility.md): methods, filters and tests Jinja2 has and the
# reference engine (MiniJinja) does not, so a template using them renders here and fails there.
# The data lives with the rest of the portability rule (portability.py); add a name there and the rule applies to it.
PYTHON_ONLY_METHODS = portability.PYTHON_ONLY_METHODS
PYTHON_ONLY_FILTERS = portability.JINJA2_ONLY_FILTERS
PYTHON_ONLY_TESTS = portability.JINJA2_ONLY_TESTS
# Where each volatile fact belongs instead (docs/reminder-keys.md): the reminders a turn carries.
VOLATILE_HOMES = {"current_date": "session.date", "working_directory": "session.cwd", "os_name": "session.env", "shell_path": "session.env"}
# Global functions and the methods of the dialect's objects: printed bare, none has a printed form
# (dialect.py refuses them at render time; the lint says so before).
CALLABLE_GLOBALS = frozenset({"range", "dict", "joiner", "cycler", "namespace"})
LOOP_METHODS = frozenset({"cycle", "changed"})
CYCLER_METHODS = frozenset({"next", "reset"})
# Lint results kept by content hash: an editor or a host re-linting an unchanged template (10,000
# lines take a second or more) gets the answer at once. Bounded, as callers choose the templates.
CACHE_ENTRIES = 64
# The name a linted template is compiled under (its errors name the template the same way).
NAME = "template"
ERROR = "error"
WARNING = "warning"


class Violation(NamedTuple):
    line: int
    column: int
    kind: str  # unguarded_tool | dynamic_tool | aliased_tools | unguarded_param | undefined_variable | unknown_tool_kind | not_portable | cache_volatile | no_printed_form | syntax
    message: str
    severity: str = ERROR  # error | warning (not_portable, cache_volatile)


_cache: OrderedDict[str, tuple[Violation, ...]] = OrderedDict()
_cache_lock = threading.Lock()


# Finds the findings of a source: (source, exempt, strict, flags, tool_kinds, volatile) -> findings.
# `findings` itself by default; the server passes one that runs it in a render worker.
Finder = Callable[[str, frozenset[str], bool, frozenset[str], frozenset[str], frozenset[str]], list[Violation]]


def lint(
    source: str,
    exempt: Iterable[str] = (),
    *,
    strict: bool = True,
    flags: Iterable[str] = (),
    tool_kinds: Iterable[str] = (),
    volatile: Iterable[str] = (),
    name: str = "template",
    finder: Finder | None = None,
) -> list[Violation]:
    """Every finding in `source`, in order of position; a syntax error is one finding. `strict`
    checks names against the variables a render defines (plus the `flags` a host sends);
    `tool_kinds` are kinds the host sends besides the documented ones; `volatile` the variables
    whose reads cost the prompt its cache (config prompt.volatile_variables). Raises
    TemplateSyntax for a sealed envelope. `finder` does the work (here by default); what it raises passes through,
    and its answer is cached."""
    source = normalize(source)
    _refuse_sealed(source, name)
    exempt, flags, tool_kinds, volatile = frozenset(exempt), frozenset(flags), frozenset(tool_kinds), frozenset(volatile)
    key = hashlib.sha256(repr((source, sorted(exempt), strict, sorted(flags), sorted(tool_kinds), sorted(volatile))).encode("utf-8", "surrogatepass")).hexdigest()
    with _cache_lock:
        hit = _cache.get(key)
        if hit is not None:
            _cache.move_to_end(key)
            return list(hit)
    found = tuple((finder or findings)(source, exempt, strict, flags, tool_kinds, volatile))
    with _cache_lock:
        _cache[key] = found
        while len(_cache) > CACHE_ENTRIES:
            _cache.popitem(last=False)
    return list(found)


def _refuse_sealed(source: str, name: str) -> None:
    """A sealed file is a JSON envelope with no template markers: linted as text it would pass.
    It is refused, with the way to lint what it holds. Recognised by its leading characters, not
    parsed: this is the caller's text, in promptd's own process."""
    from promptd.prompt.vault import FORMAT, has_envelope_head

    if has_envelope_head(source):
        cause = f"this is a sealed template ({FORMAT} envelope), not a template: lint its plaintext before sealing, or `promptd vault open FILE | promptd lint -`"
        raise TemplateSyntax(f"{name}: {cause}", template=name, line=1, column=1, cause=cause, reason="sealed")


def findings(source: str, exempt: frozenset[str], strict: bool, flags: frozenset[str], tool_kinds: frozenset[str], volatile: frozenset[str] = frozenset()) -> list[Violation]:
    """The lint's work on a normalized, unsealed source (lint() above checks both and caches)."""
    env = engine().environment
    try:
        tree = parse(env, source, NAME)
    except TemplateSyntax as exc:
        return [_syntax_finding(exc)]
    unknown = _unknown_filters_and_tests(env, source, tree)
    if unknown:
        return unknown
    try:
        # Compiled as a render compiles it (Python's compiler included, whose limits Jinja does
        # not check), so what a render would refuse is a finding; the same pass collects the
        # names the template reads from its context.
        undeclared = _compile(env, source, tree)
    except TemplateSyntax as exc:
        return [_syntax_finding(exc)]
    walker = Walker(exempt)
    walker.statements(tree.body, EMPTY)
    names = positions.name_positions(env, source, frozenset({NAMESPACE, PARAMS}))
    located = _Located(source, names)
    violations = []
    for ref in walker.references:
        line, column = located.next(ref.line, ref.name)
        if ref.problem is not None:
            violations.append(Violation(line, column, ref.problem, message_for(ref)))
        elif ref.kind is not None and ref.name == NAMESPACE:
            misspelled = _unknown_kind(ref.kind, tool_kinds)
            if misspelled:
                violations.append(Violation(line, column, UNKNOWN_KIND, misspelled))
    index = _Index(tree)
    if strict:
        violations.extend(_undefined_names(env, source, index, undeclared, flags))
    violations.extend(_not_portable(env, source, tree))
    violations.extend(_cache_volatile(env, source, index, volatile))
    violations.extend(_no_printed_form(env, source, index))
    violations.sort(key=lambda v: (v.line, v.column))
    return violations


def _unknown_filters_and_tests(env: Any, source: str, tree: nodes.Template) -> list[Violation]:
    """Filters and tests that do not exist, every one of them (a render refuses the first)."""
    from promptd.prompt import unknowns

    found = unknowns.find(env, tree)
    if not found:
        return []
    located = _Located(source, positions.name_positions(env, source, frozenset(u.name for u in found)))
    return [Violation(*located.next(u.line, u.name), SYNTAX, u.cause) for u in found]


def _did_you_mean(name: str, candidates: Iterable[str]) -> str:
    found = suggest(name, candidates)
    return ("; did you mean " + " or ".join(f"`{s}`" for s in found) + "?") if found else ""


def _unknown_kind(kind: str, declared: frozenset[str]) -> str | None:
    """A message when `kind` is neither documented nor declared and reads like a misspelling of a
    kind that is: a host may send kinds of its own, but `tools.by_kind.excute` is a typo that
    silently drops a section."""
    from promptd.prompt.variables import TOOL_KINDS

    known = TOOL_KINDS | declared
    if kind in known:
        return None
    found = suggest(kind, known)
    if not found:
        return None
    return f"`tools.by_kind.{kind}` is not a documented tool kind" + _did_you_mean(kind, known) + " (declare the kinds your host sends to silence this)"


def _syntax_finding(exc: TemplateSyntax) -> Violation:
    """A template that does not parse or compile, as one finding; at line 1, column 1 when the
    error has no position (a compile limit found by recursion)."""
    return Violation(exc.data.get("line") or 1, exc.data.get("column") or 1, SYNTAX, str(exc.data.get("cause") or exc.message))


def _compile(env: Any, source: str, tree: nodes.Template) -> set[str]:
    """Compiles `tree` through the engine (raising TemplateSyntax as a render's compile would) and
    returns the names resolved from the render's variables: Jinja's
    `meta.find_undeclared_variables`, without a second pass over a large template."""
    _, generator = compile_tree(env, source, tree, NAME, _tracking_generator(env))
    undeclared: set[str] = generator.undeclared  # type: ignore[attr-defined]
    return undeclared


def _tracking_generator(env: Any) -> Any:
    base = env.code_generator_class

    class Tracking(base):  # type: ignore[misc, valid-type]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.undeclared: set[str] = set()

        def enter_frame(self, frame: Any) -> None:
            super().enter_frame(frame)
            for action, param in frame.symbols.loads.values():
                if action == VAR_LOAD_RESOLVE and param not in self.environment.globals:
                    self.undeclared.add(param)

    return Tracking


def _undefined_names(env: object, source: str, index: _Index, read: set[str], flags: frozenset[str]) -> list[Violation]:
    """Every read of a top-level name that no render defines (strict undefined would refuse it)."""
    from promptd.prompt.variables import known_names

    known = known_names(flags)
    undeclared = read - known - index.assigned
    if not undeclared:
        return []
    located = _Located(source, positions.name_positions(env, source, frozenset(undeclared)))
    out = []
    reported: set[tuple[int, int]] = set()
    for node in index.of(nodes.Name):
        if node.ctx != "load" or node.name not in undeclared:
            continue
        line, column = located.next(node.lineno, node.name)
        if (line, column) in reported:
            continue
        reported.add((line, column))
        hint = _did_you_mean(node.name, known) or " (a flag the host sends? declare it with --flag / `flags`)"
        message = f"`{node.name}` is not a variable a render defines{hint}"
        out.append(Violation(line, column, UNDEFINED, message))
    return out


class _Index:
    """The nodes of one syntax tree by class, each class's in tree order, from one walk: every
    `find_all` is a walk of its own, and a 10,000-line template has hundreds of thousands of
    nodes. Also the names the template sets itself (anywhere) and its macros: Jinja resolves from
    the variables a name the template sets in only some branches (in case the branch did not
    run), so such a name shows up as read; it is the template's own all the same."""

    def __init__(self, tree: nodes.Template) -> None:
        self._by_class: dict[type[nodes.Node], list[Any]] = {}
        stack: list[nodes.Node] = [tree]
        while stack:
            node = stack.pop()
            self._by_class.setdefault(type(node), []).append(node)
            stack.extend(reversed(list(node.iter_child_nodes())))
        self.macros = {m.name for m in self.of(nodes.Macro)}
        self.assigned = {n.name for n in self.of(nodes.Name) if n.ctx in ("store", "param")} | self.macros

    def of(self, cls: type[nodes.Node]) -> list[Any]:
        return self._by_class.get(cls, [])


def _cache_volatile(env: object, source: str, index: _Index, volatile: frozenset[str]) -> list[Violation]:
    """Warnings for every read of a volatile variable (docs/templates.md, "Prompt caching"): a
    provider caches the prompt by its exact prefix, and the prefix that stays the same from one
    day or folder to the next ends at the line of the first such read (pipeline.stable_prefix).
    Each warning says how much of the template's text comes from that line on."""
    names = volatile - index.assigned
    if not names:
        return []
    reads = [node for node in index.of(nodes.Name) if node.ctx == "load" and node.name in names]
    if not reads:
        return []
    located = _Located(source, positions.name_positions(env, source, frozenset(node.name for node in reads)))
    out = []
    seen: set[tuple[int, int]] = set()
    for node in reads:
        line, column = located.next(node.lineno, node.name)
        if (line, column) in seen:
            continue
        seen.add((line, column))
        at_risk = len(source) - located.lines.start(line)
        share = round(100 * at_risk / len(source))
        home = VOLATILE_HOMES.get(node.name)
        instead = f"the `{home}` reminder key" if home else "a `session.*` reminder key"
        message = (
            f"`{node.name}` is volatile (config prompt.volatile_variables): the cacheable prefix ends at this line, so {share}% of the "
            f"template's text ({at_risk} characters) is sent uncached whenever it changes; move the fact to {instead} (docs/reminder-keys.md) or to the end of the template"
        )
        out.append(Violation(line, column, CACHE_VOLATILE, message, WARNING))
    return out


def _no_printed_form(env: object, source: str, index: _Index) -> list[Violation]:
    """Errors for a `${{ }}` whose value can never be printed (dialect.py refuses it when the line
    renders): a macro, a `joiner()` or `cycler()` object, the `loop` object, a global function or
    one of these objects' methods, printed without calling it. A namespace prints (as the map of
    what was set on it), and so do its attributes."""
    assigned, macros = index.assigned, index.macros
    objects: dict[str, str] = {}  # a name set to joiner(...) or cycler(...) -> which
    for assign in index.of(nodes.Assign):
        value = assign.node
        if isinstance(assign.target, nodes.Name) and isinstance(value, nodes.Call) and isinstance(value.node, nodes.Name) and value.node.name in ("joiner", "cycler"):
            objects[assign.target.name] = value.node.name
    stores = [n.name for n in index.of(nodes.Name) if n.ctx == "store"]
    # A name set more than once may hold something else by the time it is printed.
    objects = {name: what for name, what in objects.items() if stores.count(name) == 1 and name not in macros}

    def unprintable(expr: nodes.Node) -> tuple[str, str] | None:
        """(the word to point at, what it is) or None."""
        if isinstance(expr, nodes.Name) and expr.ctx == "load":
            name = expr.name
            if name in objects:
                return name, f"a {objects[name]}() object (call it: `{name}()`)"
            if name in macros or name == "caller":
                return name, f"the macro `{name}` (call it: `{name}()`)"
            if name == "loop" and name not in assigned:
                return name, "the `loop` object (print one of its fields: `loop.index`)"
            if name in CALLABLE_GLOBALS and name not in assigned:
                return name, f"the function `{name}` (call it)"
        elif isinstance(expr, nodes.Getattr) and isinstance(expr.node, nodes.Name):
            owner = expr.node.name
            if owner == "loop" and expr.attr in LOOP_METHODS and owner not in assigned:
                return expr.attr, f"the method `loop.{expr.attr}` (call it)"
            if objects.get(owner) == "cycler" and expr.attr in CYCLER_METHODS:
                return expr.attr, f"the method `{owner}.{expr.attr}` (call it)"
        return None

    found: list[tuple[int, str, str]] = []
    for output in index.of(nodes.Output):
        for expr in output.nodes:
            problem = unprintable(expr)
            if problem is not None:
                found.append((expr.lineno, *problem))
    if not found:
        return []
    located = _Located(source, _bare_outputs(env, source))
    return [Violation(*located.next(line, word), NO_PRINTED_FORM, f"`${{{{ }}}}` prints {what}, which has no printed form: the render fails here") for line, word, what in found]


def _bare_outputs(env: object, source: str) -> dict[tuple[int, str], list[int]]:
    """Columns of the word each `${{ name }}` and `${{ name.attr }}` tag prints (the name, or the
    attribute), by (line, word): the tags _no_printed_form reports, told apart from the same
    name elsewhere on the line (`${% set j = joiner() %}`, `${{ j() }}`)."""
    out: dict[tuple[int, str], list[int]] = {}
    inside: list[positions.Token] | None = None
    for token in positions.tokens(env, source):
        if token.type == "variable_begin":
            inside = []
        elif token.type == "variable_end" and inside is not None:
            shape = [(t.type, t.value) for t in inside]
            if len(inside) in (1, 3) and shape[0][0] == "name" and (len(inside) == 1 or (shape[1] == ("operator", ".") and shape[2][0] == "name")):
                word = inside[-1]
                out.setdefault((word.line, word.value), []).append(word.column)
            inside = None
        elif inside is not None and token.type != "whitespace":
            inside.append(token)
    return out


def _not_portable(env: object, source: str, tree: nodes.Template) -> list[Violation]:
    """Warnings for Python-only methods (`x.startswith(...)`), Jinja2-only filters and tests, and
    the constructs the reference engine renders differently (portability.py)."""
    found: list[tuple[int, str, str]] = []
    for call in tree.find_all(nodes.Call):
        if isinstance(call.node, nodes.Getattr) and call.node.attr in PYTHON_ONLY_METHODS:
            name = call.node.attr
            instead = portability.PORTABLE_ALTERNATIVES.get(name)
            found.append((call.node.lineno, name, f"`.{name}()` is a Python method the reference engine does not have" + (f"; use {instead}" if instead else "")))
    for node in tree.find_all((nodes.Filter, nodes.Test)):
        if isinstance(node, nodes.Filter) and node.name in PYTHON_ONLY_FILTERS:
            found.append((node.lineno, node.name, f"the `{node.name}` filter is Jinja2-only; the reference engine does not have it"))
        elif isinstance(node, nodes.Test) and node.name in PYTHON_ONLY_TESTS:
            found.append((node.lineno, node.name, f"the `{node.name}` test is Jinja2-only; the reference engine does not have it"))
    found.extend(portability.differences(tree))
    if not found:
        return []
    located = _Located(source, positions.name_positions(env, source, frozenset(word for _, word, _ in found), attributes=True))
    return [Violation(*located.next(line, word), NOT_PORTABLE, message, WARNING) for line, word, message in found]


class _Located:
    """Hands out the columns of one name on one line, in source order (the order the AST walk
    meets them); a line with fewer tokens than references keeps its last known column."""

    def __init__(self, source: str, columns: dict[tuple[int, str], list[int]]) -> None:
        self.source = source
        self.lines = positions.Lines(source)
        self.columns = columns
        self.taken: dict[tuple[int, str], int] = {}

    def next(self, line: int, name: str) -> tuple[int, int]:
        found = self.columns.get((line, name))
        if not found:
            return line, positions.first_tag_column(self.source, line, self.lines)
        index = self.taken.get((line, name), 0)
        self.taken[(line, name)] = index + 1
        return line, found[min(index, len(found) - 1)]
