"""The reference dialect's output formatting, filters and tests: values printed, and filters and
tests answered, as the reference's engine (MiniJinja) does.

Domain layer: must not import promptd.rpc or promptd.methods. Imported with the engine (lazily).
"""

from __future__ import annotations

import math
from collections.abc import Callable, ItemsView, Iterable, Iterator, KeysView, Mapping, ValuesView
from decimal import ROUND_CEILING, ROUND_FLOOR, ROUND_HALF_UP, Decimal
from typing import Any

from jinja2 import Undefined, pass_eval_context
from jinja2.runtime import LoopContext
from jinja2.utils import Namespace
from markupsafe import Markup

from promptd.prompt import limits
from promptd.prompt.filters import bounded_filter, bounded_filters

# The reference pipeline renders with MiniJinja, which prints values the way its own Value type
# displays them, not the way Python's str() does: `true`/`false`, `none`, lists and maps in a
# JSON-like form with double-quoted strings, floats always with a decimal point and never in
# exponent notation. Templates and bodies written for it must give the same bytes here
# (docs/template-compatibility.md). Strings and integers print the same in both.


def reference_text(value: Any) -> str:
    """`value` as MiniJinja prints it in output, `~` and `|string`; refused over the size cap."""
    if isinstance(value, str):
        return value
    if isinstance(value, Undefined):
        # Its own str(): empty text when lenient, an error naming the variable when strict.
        return str(value)
    # A bound first, from sizes alone: a list shared at every level of 40 nested lists is
    # measured in 40 steps here, and would take 2**40 to print.
    limits.require_text(value, "an output value")
    parts: list[str] = []
    _Printer(parts).top(value)
    return "".join(parts)


class _Printer:
    """Writes a value's reference text into `parts`, keeping the running size under the cap (a
    float prints up to 330 characters, so a list's Python repr size is no bound for its text)."""

    def __init__(self, parts: list[str]) -> None:
        self.parts = parts
        self.size = 0

    def add(self, text: str) -> None:
        self.size += len(text)
        if self.size > limits.MAX_TEXT_CHARS:
            raise limits.refuse("an output value")
        self.parts.append(text)

    def top(self, value: Any) -> None:
        if isinstance(value, str):
            self.add(value)
        else:
            self.nested(value, depth=0)

    def nested(self, value: Any, depth: int) -> None:
        if depth > _MAX_PRINT_DEPTH:
            raise limits.refuse("an output value")
        if isinstance(value, Undefined):
            str(value)  # strict undefined fails here, naming the variable
            self.add("undefined")  # as the reference prints one inside a list or map
        elif isinstance(value, str):
            self.add(_quoted(value))
        elif value is None:
            self.add("none")
        elif isinstance(value, bool):
            self.add("true" if value else "false")
        elif isinstance(value, int):
            self.add(str(value))
        elif isinstance(value, float):
            self.add(_float_text(value))
        elif isinstance(value, Mapping):
            self.add("{")
            for index, (key, item) in enumerate(in_key_order(value.items())):
                if index:
                    self.add(", ")
                self.nested(key, depth + 1)
                self.add(": ")
                self.nested(item, depth + 1)
            self.add("}")
        elif isinstance(value, Namespace):
            # The reference prints a namespace as the map of what was set on it.
            self.nested(object.__getattribute__(value, "_Namespace__attrs"), depth)
        elif isinstance(value, (list, tuple, range, Iterator, KeysView, ValuesView, ItemsView)) and not isinstance(value, LoopContext):
            # A sequence, however the dialect built it: `reverse`, `map`, `select`, `unique`,
            # `batch`, `items` and `.keys()` give iterators, `range()` a range. The reference
            # prints each as a list; Python would print an object description with its memory
            # address, new bytes in every process, which breaks a provider's prompt cache.
            self.add("[")
            for index, item in enumerate(value):
                if index:
                    self.add(", ")
                self.nested(item, depth + 1)
            self.add("]")
        else:
            # joiner(), cycler(), macros, `loop` (an iterator too: printing it would advance the
            # loop), methods: nothing the reference prints.
            raise TypeError(f"a {type(value).__name__} value has no printed form; call it or print one of its fields")


# Deeper than any data a prompt template handles; a self-containing list stops here.
_MAX_PRINT_DEPTH = 64
_ESCAPES = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\0": "\\0"}


def _quoted(text: str) -> str:
    """A string inside a list or map, as Rust's debug format writes it."""
    out = ['"']
    for char in text:
        escaped = _ESCAPES.get(char)
        if escaped is not None:
            out.append(escaped)
        elif not char.isprintable() and char != " ":
            out.append(f"\\u{{{ord(char):x}}}")
        else:
            out.append(char)
    out.append('"')
    return "".join(out)


def _float_text(value: float) -> str:
    if value != value:  # noqa: PLR0124 - NaN
        return "NaN"
    if value in (float("inf"), float("-inf")):
        return "inf" if value > 0 else "-inf"
    # Rust prints the shortest round-tripping digits, as repr does, but never in exponent form.
    text = repr(value)
    if "e" in text or "E" in text:
        text = format(Decimal(text), "f")
    return text if "." in text else text + ".0"


def in_key_order(items: Iterable[tuple[Any, Any]]) -> list[tuple[Any, Any]]:
    """A map's items as the reference keeps them: sorted by key (MiniJinja without
    `preserve_order`). Keys that do not compare (text and numbers mixed) keep their order."""
    pairs = list(items)
    try:
        return sorted(pairs, key=lambda pair: _sort_key(pair[0]))
    except TypeError:
        return pairs


def _sort_key(key: Any) -> Any:
    if isinstance(key, bool) or not isinstance(key, (str, int, float)):
        raise TypeError("not a sortable key")
    return key


def reference_number_op(operator_name: str, left: Any, right: Any) -> Any:
    """`left / right` or `left % right` on two numbers as the reference computes them, where that
    differs from Python (a zero divisor, a negative remainder); None everywhere else."""
    if not (_is_number(left) and _is_number(right)):
        return None
    if operator_name == "/" and right == 0:
        if left == 0 or left != left:
            return math.nan
        return math.copysign(math.inf, left) * math.copysign(1.0, right)
    if operator_name == "%":
        if isinstance(left, int) and isinstance(right, int):
            # Rust's rem_euclid: 7 % -2 is 1 (Python: -1); a zero divisor fails as in Python.
            return left % abs(right) if right else None
        return math.fmod(left, right) if right else math.nan
    return None


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def reference_finalize(value: Any) -> Any:
    """The engine's `finalize`: every `${{ }}` value goes out as the reference prints it."""
    if isinstance(value, (str, Undefined)):
        return value  # an undefined value prints (or, when strict, fails) by its own rules
    return reference_text(value)


def reference_round(value: Any, precision: int = 0, method: str = "common") -> Any:
    """MiniJinja's round: integers unchanged, floats rounded half away from zero (2.5 -> 3.0,
    where Python's round gives 2). `method` ("ceil", "floor") is Jinja2's and is kept."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"cannot round a {type(value).__name__} value")
    if isinstance(value, int):
        return value
    if method not in ("common", "ceil", "floor"):
        raise TypeError("method must be common, ceil or floor")
    if value != value or value in (float("inf"), float("-inf")):
        return value
    scale = Decimal(10) ** int(precision)
    rounding = {"common": ROUND_HALF_UP, "ceil": ROUND_CEILING, "floor": ROUND_FLOOR}[method]
    # Decimal(value) is the float's exact binary value, so only true halves round up.
    return float((Decimal(value) * scale).to_integral_value(rounding) / scale)


def reference_split(value: Any, split: str | None = None, maxsplits: int | None = None) -> list[str]:
    """MiniJinja's split: on whitespace (empty pieces dropped) without a separator."""
    text = value if isinstance(value, str) else reference_text(value)
    return text.split(split, -1 if maxsplits is None else int(maxsplits))


def reference_lines(value: Any) -> list[str]:
    """MiniJinja's lines (Rust's str::lines): split at "\\n", one "\\r" before it dropped, no
    empty last line for a final newline; unlike Python's splitlines, no other separators."""
    text = value if isinstance(value, str) else reference_text(value)
    if not text:
        return []
    pieces = text.split("\n")
    if text.endswith("\n"):
        pieces.pop()
    return [piece[:-1] if piece.endswith("\r") else piece for piece in pieces]


# MiniJinja's HTML escaping: `'` and `/` too, `"` as a named entity (markupsafe writes `&#34;`
# and `&#39;` and leaves `/`).
_HTML_ESCAPES = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#x27;", "/": "&#x2f;"})


def reference_escape(value: Any) -> Markup:
    """MiniJinja's escape: text already marked safe unchanged, anything else printed and escaped."""
    if isinstance(value, Markup):
        return value
    return Markup(reference_text(value).translate(_HTML_ESCAPES))


def reference_indent(value: Any, width: Any = 4, first: bool = False, blank: bool = False) -> str:
    """MiniJinja's indent: a final line break of the input (and of the result) dropped."""
    text = value if isinstance(value, str) else reference_text(value)
    prefix = width if isinstance(width, str) else " " * int(width)
    text = _without_final_newline(text)
    lines = text.split("\n")
    out = []
    for index, line in enumerate(lines):
        if index == 0 and not first:
            out.append(line)
        elif line:
            out.append(prefix + line)
        else:
            out.append(prefix if blank else "")
    return _without_final_newline("\n".join(out) + "\n")


def _without_final_newline(text: str) -> str:
    if text.endswith("\n"):
        text = text[:-1]
    return text[:-1] if text.endswith("\r") else text


def reference_title(value: Any) -> str:
    """MiniJinja's title: a word starts after whitespace or ASCII punctuation (`it's` -> `It'S`,
    `foo_bar` -> `Foo_Bar`, where Python's title rules give `It's` and `Foo_bar`)."""
    text = value if isinstance(value, str) else reference_text(value)
    out = []
    capitalize = True
    for char in text:
        if char.isspace() or (char.isascii() and not char.isalnum() and char.isprintable() and char != " "):
            out.append(char)
            capitalize = True
        elif capitalize:
            out.append(char.upper())
            capitalize = False
        else:
            out.append(char.lower())
    return "".join(out)


def reference_bool(value: Any) -> bool:
    return bool(value)


def reference_string(value: Any) -> str:
    return reference_text(value)


# Filters MiniJinja has that Jinja2 lacks (or prints differently), added to the sandbox. Each
# goes through bounded_filter like Jinja's own.
REFERENCE_FILTERS: Mapping[str, Callable[..., Any]] = {
    "round": reference_round,
    "split": reference_split,
    "lines": reference_lines,
    "bool": reference_bool,
    "string": reference_string,
    "escape": reference_escape,
    "e": reference_escape,
    "indent": reference_indent,
    "title": reference_title,
}


def _startingwith(value: Any, prefix: Any) -> bool:
    # The reference compares the printed forms: `1 is startingwith("1")` is true.
    return reference_text(value).startswith(reference_text(prefix))


def _endingwith(value: Any, suffix: Any) -> bool:
    return reference_text(value).endswith(reference_text(suffix))


def _is_sequence(value: Any) -> bool:
    # A list (or what the dialect builds as one), never text or a map as Jinja2's test allows.
    return isinstance(value, (list, tuple, range))


def _is_integer(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_safe(value: Any) -> bool:
    return isinstance(value, Markup)


# Tests MiniJinja has that Jinja2 lacks, and those it answers differently (`true is number` is
# false there, `"a" is sequence` too).
REFERENCE_TESTS: Mapping[str, Callable[..., bool]] = {
    "startingwith": _startingwith,
    "endingwith": _endingwith,
    "number": _is_number,
    "sequence": _is_sequence,
    "int": _is_integer,
    "safe": _is_safe,
}


def install_reference_dialect(environment: Any) -> None:
    """Gives a freshly built environment the reference's output formatting, filters and tests
    (before anything is compiled with it: the compiler reads `finalize`)."""
    environment.finalize = reference_finalize
    environment.filters.update(bounded_filters(REFERENCE_FILTERS))
    environment.filters["join"] = bounded_filter("join", _reference_join())
    environment.tests.update(REFERENCE_TESTS)


def _reference_join() -> Callable[..., Any]:
    from jinja2.filters import do_join

    @pass_eval_context
    def join(eval_ctx: Any, value: Any, d: str = "", attribute: Any = None) -> str:
        # Items print as the reference prints them (`true`, `none`), not as str() would.
        items = [item if isinstance(item, str) else reference_text(item) for item in value] if attribute is None else value
        joined: str = do_join(eval_ctx, items, d, attribute)
        return joined

    return join
