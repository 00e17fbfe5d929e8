"""The template constructs that render here and differently (or not at all) in the reference
engine: the lists of names (methods, filters, tests) the lint's `not_portable` rule warns on, and
the constructs found in a syntax tree. Each finding names a row of docs/template-compatibility.md.

Domain layer: must not import promptd.rpc or promptd.methods; imported by the lint (lazily, it
uses jinja2).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from jinja2 import nodes

# Loop fields the reference leaves empty when the loop walks a text (it does not count one ahead).
COUNTED_LOOP_FIELDS = frozenset({"length", "revindex", "revindex0", "last"})
# Globals Jinja2 has and the reference's builtins do not (they come from minijinja-contrib).
JINJA2_ONLY_GLOBALS = frozenset({"joiner", "cycler"})

# -- portability data for the lint ---------------------------------------------------------------
#
# What a template may use here but not in the reference's engine (MiniJinja's builtins, without
# its Python-compatibility callback and without minijinja-contrib): the lint warns on them.

# Methods called on values (`name.startswith("x")`, `tools.by_kind.items()`): MiniJinja values
# have no such methods. The filters or tests to use instead are in docs/template-compatibility.md.
PYTHON_ONLY_METHODS = frozenset(
    {
        "capitalize", "casefold", "center", "count", "encode", "endswith", "expandtabs", "find", "format",
        "format_map", "get", "index", "isalnum", "isalpha", "isdecimal", "isdigit", "isidentifier", "islower",
        "isnumeric", "isspace", "istitle", "isupper", "items", "join", "keys", "ljust", "lower", "lstrip",
        "partition", "removeprefix", "removesuffix", "replace", "rfind", "rindex", "rjust", "rpartition",
        "rsplit", "rstrip", "split", "splitlines", "startswith", "strip", "swapcase", "title", "upper",
        "values", "zfill",
    }
)  # fmt: skip
# Jinja2 filters MiniJinja's builtins do not have.
# `tojson` and `urlencode` are features the reference build leaves out (`json`, `urlencode`).
JINJA2_ONLY_FILTERS = frozenset({"center", "filesizeformat", "forceescape", "striptags", "tojson", "truncate", "urlencode", "urlize", "wordcount", "wordwrap", "xmlattr"})
# Jinja2 tests MiniJinja's builtins do not have.
JINJA2_ONLY_TESTS = frozenset({"callable"})
# What MiniJinja offers instead of a Python method, for the lint's message.
PORTABLE_ALTERNATIVES: Mapping[str, str] = {
    "startswith": "the test `is startingwith(...)`",
    "endswith": "the test `is endingwith(...)`",
    "split": "the filter `|split(...)`",
    "splitlines": "the filter `|lines`",
    "strip": "the filter `|trim`",
    "lower": "the filter `|lower`",
    "upper": "the filter `|upper`",
    "title": "the filter `|title`",
    "capitalize": "the filter `|capitalize`",
    "replace": "the filter `|replace(...)`",
    "items": "the filter `|items`",
    "keys": "`|items` (or `|list` of the mapping)",
    "values": "`|items`",
    "get": "a subscript `[...]` or `.name`, with `|default(...)`",
    "join": "the filter `|join(...)`",
    "count": "the filter `|length`",
}


class Finding(NamedTuple):
    line: int
    word: str  # the name the lint points its column at
    message: str


def differences(tree: nodes.Template) -> list[Finding]:
    """Every construct in `tree` that the reference engine renders differently or refuses."""
    found: list[Finding] = []
    for output in tree.find_all(nodes.Output):
        found.extend(_printed(output))
    for name in tree.find_all(nodes.Name):
        if name.name in ("varargs", "kwargs") and name.ctx == "load":
            found.append(Finding(name.lineno, name.name, f"`{name.name}` (a macro's extra arguments) is Jinja2's; the reference engine refuses a call with arguments the macro does not declare"))
    for node in tree.find_all((nodes.Filter, nodes.Call, nodes.For, nodes.Mod, nodes.Concat, nodes.Pow, nodes.Pos)):
        if isinstance(node, nodes.Pos):
            found.append(Finding(node.lineno, "+", "a unary `+` is a syntax error in the reference engine"))
        elif isinstance(node, nodes.Pow):
            if isinstance(node.right, nodes.Neg) or (isinstance(node.right, nodes.Const) and isinstance(node.right.value, int) and node.right.value < 0):
                found.append(Finding(node.lineno, "**", "an integer to a negative power is an error in the reference engine (write the float: `2.0 ** -1`)"))
        elif isinstance(node, nodes.Filter):
            found.extend(_filter(node))
        elif isinstance(node, nodes.Call):
            if isinstance(node.node, nodes.Name) and node.node.name in JINJA2_ONLY_GLOBALS:
                helper = node.node.name
                found.append(Finding(node.lineno, helper, f"`{helper}()` is Jinja2's; the reference engine does not have it (write the separator or the cycle with `loop.first` / `loop.index`)"))
        elif isinstance(node, nodes.For):
            if _is_text(node.iter) and _reads_counted_loop_fields(node):
                found.append(Finding(node.lineno, "for", "a loop over text: the reference engine leaves `loop.length`, `loop.revindex` and `loop.last` empty there (loop over `|list` of it)"))
        elif isinstance(node, nodes.Mod):
            if _is_text(node.left):
                found.append(Finding(node.lineno, "%", "`%` formatting of text is Python's; the reference engine refuses it (use `|format(...)` or `~`)"))
        elif isinstance(node, nodes.Concat) and _joins_python_constants(node):
            found.append(Finding(node.lineno, "~", "`~` between constants is joined when compiling and prints `True` / `None` the Python way; put the text in the literal itself"))
    return found


def _printed(output: nodes.Output) -> list[Finding]:
    """Values printed straight from `${{ }}` that print differently there."""
    found = []
    for node in output.nodes:
        if isinstance(node, nodes.Filter) and node.name == "split":
            found.append(Finding(node.lineno, "split", "the reference engine prints `|split` as `<iterator>`; print `|split(...)|list` or `|join(...)`"))
        elif isinstance(node, (nodes.And, nodes.Or)):
            found.append(
                Finding(
                    node.lineno,
                    "and" if isinstance(node, nodes.And) else "or",
                    "a printed `and` / `or` whose left side is false prints `false` in the reference engine and that value here; use `x if cond else y`",
                )
            )
    return found


def _filter(node: nodes.Filter) -> list[Finding]:
    arguments = len(node.args) + len(node.kwargs)
    if node.name == "sum" and arguments:
        return [Finding(node.lineno, "sum", "`|sum` takes no arguments in the reference engine (no attribute, no start)")]
    if node.name == "pprint":
        return [Finding(node.lineno, "pprint", "`|pprint` prints Python's repr here and an indented JSON-like form in the reference engine")]
    if node.name == "attr":
        return [Finding(node.lineno, "attr", "`|attr` reads a map's key in the reference engine and only a Python attribute here; use `[...]` or `.name`")]
    if node.name == "replace" and arguments > 2:
        return [Finding(node.lineno, "replace", "`|replace` takes two arguments in the reference engine; a count is an error there")]
    if node.name == "int":
        if arguments:
            return [Finding(node.lineno, "int", "`|int` takes no arguments in the reference engine (no default, no base)")]
        if isinstance(node.node, nodes.Const) and isinstance(node.node.value, str) and not _is_numeral(node.node.value):
            return [Finding(node.lineno, "int", "`|int` of text that is not a number is 0 here and an error in the reference engine")]
    return []


def _is_text(node: Any) -> bool:
    return isinstance(node, nodes.Const) and isinstance(node.value, str)


def _is_numeral(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _reads_counted_loop_fields(loop: nodes.For) -> bool:
    return any(isinstance(attr.node, nodes.Name) and attr.node.name == "loop" and attr.attr in COUNTED_LOOP_FIELDS for attr in loop.find_all(nodes.Getattr))


def _is_constant(node: nodes.Expr) -> bool:
    try:
        node.as_const()
    except nodes.Impossible:
        return False
    return True


def _joins_python_constants(node: nodes.Concat) -> bool:
    """Only constants, one of which Python prints otherwise (`True`, `None`, a float)."""
    return any(isinstance(part, nodes.Const) and type(part.value) not in (str, int) for part in node.nodes) and all(_is_constant(part) for part in node.nodes)
