"""Size bounds of the template sandbox: how large a value an operation would build, known before
the operation runs.

Domain layer: must not import promptd.rpc or promptd.methods. Imported with the engine (lazily).

A caller's template must not be able to make one C call that allocates hundreds of megabytes or
holds the GIL for seconds (`"x".ljust(300000000)`, `9**64**64`): the output-size check in the engine
only sees text after it exists. So every operation that can build a value much larger than its
inputs has an estimator here, an upper bound of the result's size computed from sizes and counts
alone, and the sandbox refuses the operation when the bound is above the cap. The estimators are
deliberately pessimistic (a refused template had no business building such values in a prompt),
cheap (no estimate walks more than the cap allows), and never run the operation themselves.
"""

from __future__ import annotations

import math
import re
from collections.abc import ItemsView, Iterable, Iterator, KeysView, Mapping, ValuesView
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from jinja2.exceptions import SecurityError
from jinja2.utils import Namespace
from markupsafe import Markup

# Text: no single value a template builds, and no rendered output, may exceed this many characters.
# 4 Mi characters is hundreds of times any real system prompt; it is also the engine's output cap.
MAX_TEXT_CHARS = 4 << 20
# Everything one render builds, intermediate values included: each value is under the cap, but an
# expression with a hundred operands (`a ~ b ~ ...`, arguments, list items) holds them all at once.
# Eight outputs' worth leaves room for templates that assemble text in pieces.
MAX_RENDER_CHARS = 8 * MAX_TEXT_CHARS
# Sequences built by `*` or `+` (and `*` on text, as before): 1 Mi items or characters. A list only
# holds references, so this bounds memory at a few MiB per value.
MAX_ITEMS = 1 << 20
# Integers built by `*` and `**`: 4096 bits (1,234 decimal digits). Far beyond any arithmetic a
# prompt does, small enough that multiplying two such numbers costs microseconds, and below
# Python's 4,300-digit limit for turning an integer into text.
MAX_INT_BITS = 4096
# A width or precision written with more digits than this is refused before Python parses it.
MAX_NUMBER_DIGITS = 12
# Expansion factors of text operations (upper bounds): a Unicode case mapping produces at most 3
# code points per code point ('ﬃ'.upper() == 'FFI'); HTML escaping at most 5 ('"' -> '&#34;');
# percent-encoding 12 (4 UTF-8 bytes, '%XX' each); str.encode 10 ('\U0010ffff' with
# backslashreplace or unicode_escape); bytes.decode 4 ('\xff' with backslashreplace).
CASE_FACTOR = 3
ESCAPE_FACTOR = 6
URL_FACTOR = 12
ENCODE_FACTOR = 10
DECODE_FACTOR = 4
# repr() of one non-printable character: '\U000e0001' is 10 characters.
REPR_FACTOR = 10
# Characters of one float written by repr() or '%g' ('-1.7976931348623157e+308'), and of one
# written with '%f' before its precision: 309 digits of 1e308, sign and point.
FLOAT_CHARS = 24
FIXED_FLOAT_CHARS = 312
# repr() of an object the estimator does not know (a loop object, a macro, a generator): Jinja's
# and Python's own reprs of these are short.
OTHER_CHARS = 128
# pprint lays a value of n characters out on at most n lines, each indented by at most n columns,
# so the result is bounded by n * (n + 2): values up to 2,000 characters stay below the cap.
MAX_PPRINT_INPUT = 2000

# What a render over the render worker's memory limit is told (config prompt.render_memory_mb).
MEMORY_CAUSE = "the render needs more memory than the sandbox allows (prompt.render_memory_mb)"

_VIEWS: tuple[type[KeysView[Any]], type[ValuesView[Any]], type[ItemsView[Any, Any]]] = (type({}.keys()), type({}.values()), type({}.items()))


def refuse(what: str) -> SecurityError:
    return SecurityError(f"{what} is larger than the sandbox allows")


@dataclass(slots=True)
class _Budget:
    left: int


_BUDGET: ContextVar[_Budget | None] = ContextVar("promptd_render_budget", default=None)


@contextmanager
def render_budget(chars: int = MAX_RENDER_CHARS) -> Iterator[None]:
    """Charges what the operations inside build against `chars` (one render)."""
    token = _BUDGET.set(_Budget(chars))
    try:
        yield
    finally:
        _BUDGET.reset(token)


def require(size: int, what: str, limit: int = MAX_TEXT_CHARS, *, charge: bool = True) -> None:
    """Raises SecurityError when `size` (an upper bound of what an operation is about to build) is
    above `limit`, or above what is left of the render's budget; `charge` takes it from the budget.
    Checks of a running total, or of bits and lines rather than text or items, do not charge."""
    if size > limit:
        raise refuse(what)
    budget = _BUDGET.get()
    if charge and budget is not None:
        budget.left -= size
        if budget.left < 0:
            raise refuse(f"the text built by this render ({what})")


def charge(size: int, what: str) -> None:
    """Takes `size` from the render's budget, with no cap of its own: for what a template keeps or
    copies out of a value that exists already (a slice, a list made of a text, a value stored in
    a namespace), bounded by that value, but held on to, possibly once per loop iteration."""
    budget = _BUDGET.get()
    if budget is not None and size > 0:
        budget.left -= size
        if budget.left < 0:
            raise refuse(f"the text built by this render ({what})")


def built_size(value: Any) -> int:
    """What a value made from others holds, for the budget: the characters of a text; the items of
    a list, tuple, set or mapping plus the characters of the texts it holds directly (a split's
    pieces, a list of a text's characters). Scalars and other objects count nothing. Linear in
    the items, as building them was."""
    if isinstance(value, (str, bytes)):
        return len(value)
    if isinstance(value, Mapping):
        value = value.keys()
    elif not isinstance(value, (list, tuple, set, frozenset)):
        return 0
    return len(value) + sum(len(item) for item in value if isinstance(item, (str, bytes)))


def slice_size(value: Any, index: slice) -> int:
    """The length of `value[index]` for a text, list or tuple, before it is built; 0 when Python
    will refuse the slice (it then fails as it would have)."""
    if not isinstance(value, (str, bytes, list, tuple)):
        return 0
    try:
        return len(range(*index.indices(len(value))))
    except (TypeError, ValueError):
        return 0


def kept_size(value: Any) -> int:
    """What storing `value` in a namespace charges: the items of a container (whose texts were
    charged where they were built). A namespace is the one place a value outlives a loop
    iteration, so a loop storing new containers (`ns.a = [ns.a, x]`) is charged per iteration."""
    if isinstance(value, (list, tuple, set, frozenset, Mapping)):
        return len(value) + 1
    return 0


def as_count(value: Any) -> int:
    """A width or count argument as an int (0 when it is not one: the real call will reject it)."""
    return abs(value) if isinstance(value, int) else 0


# -- sizes of values ---------------------------------------------------------------------------


def repr_size_of_text(text: str | bytes) -> int:
    if isinstance(text, bytes):
        return 4 * len(text) + 3
    if text.isprintable():
        # Quotes, and a backslash before every backslash and (at worst) every quote.
        return len(text) + 2 + text.count("\\") + text.count("'")
    return REPR_FACTOR * len(text) + 2


def json_size_of_text(text: str) -> int:
    # htmlsafe_json_dumps writes <, >, &, ' as \u00XX and non-ASCII as \uXXXX (a pair past the BMP).
    if text.isascii() and text.isprintable() and not any(c in text for c in "<>&'\"\\"):
        return len(text) + 2
    return 12 * len(text) + 2


def int_chars(value: int) -> int:
    # floor(bits / 3) + 2 covers every decimal digit (log10(2) < 1/3) and a sign.
    return value.bit_length() // 3 + 2


def _scalar_size(value: Any, *, json: bool = False) -> int:
    if isinstance(value, bool) or value is None:
        return 5
    if isinstance(value, int):
        return int_chars(value)
    if isinstance(value, float):
        return FLOAT_CHARS
    if isinstance(value, complex):
        return 2 * FLOAT_CHARS + 4
    if isinstance(value, (str, bytes)):
        return json_size_of_text(value) if json and isinstance(value, str) else repr_size_of_text(value)
    return OTHER_CHARS


def nested_size(value: Any, budget: int = MAX_TEXT_CHARS, *, json: bool = False, indent: int = 0) -> int:
    """An upper bound of len(repr(value)) (or of its JSON text with `json`, indented by `indent`).

    Stops as soon as the bound passes `budget`, and measures a container held in many places once
    (per nesting depth when indented), so a structure that would print as gigabytes (a list holding
    a list holding ... the same text, 40 levels deep) costs a few steps. Nesting too deep to measure
    counts as too large."""
    memo: dict[tuple[int, int], int] = {}
    try:
        return _nested(value, 0, budget, memo, json, indent)
    except RecursionError:
        return budget + 1


def _nested(item: Any, depth: int, budget: int, memo: dict[tuple[int, int], int], json: bool, indent: int) -> int:
    if isinstance(item, str):
        return json_size_of_text(item) if json else repr_size_of_text(item)
    if isinstance(item, Namespace):
        item = object.__getattribute__(item, "_Namespace__attrs")
    if isinstance(item, Mapping):
        children: Iterable[Any] = (child for pair in item.items() for child in pair)
        per_item = 2  # ": " or ", " between keys and values, counted for each of both
        count = 2 * len(item)
    elif isinstance(item, (list, tuple, set, frozenset, *_VIEWS)):
        children, per_item, count = item, 2, len(item)
    else:
        return _scalar_size(item, json=json)
    key = (id(item), depth if indent else 0)
    if key in memo:
        return memo[key]
    # Indented, every item of a container starts a new line (a newline and `indent` columns per
    # level of nesting), and so does the closing bracket.
    line = 1 + indent * (depth + 1) if indent else 0
    total = 16 + line + (per_item + line) * count
    if total <= budget:
        for child in children:
            kind = type(child)
            # Most items are plain scalars: measured here, without a call (a list of a million
            # numbers is measured in a fraction of a second).
            if kind is int:
                total += child.bit_length() // 3 + 2
            elif kind is str and not json:
                total += repr_size_of_text(child)
            else:
                total += _nested(child, depth + 1, budget - total, memo, json, indent)
            if total > budget:
                break
    memo[key] = total
    return total


def text_size(value: Any, budget: int = MAX_TEXT_CHARS) -> int:
    """An upper bound of len(str(value))."""
    if isinstance(value, str):
        return len(value)
    if isinstance(value, (int, float, complex, bool)) or value is None:
        return _scalar_size(value)
    return nested_size(value, budget)


def repr_size(value: Any, budget: int = MAX_TEXT_CHARS) -> int:
    """An upper bound of len(repr(value))."""
    if isinstance(value, (str, bytes)):
        return repr_size_of_text(value)
    return nested_size(value, budget)


def require_text(value: Any, what: str) -> None:
    """Refuses turning `value` into text when that text would be over the cap (a list holding one
    megabyte string a thousand times is a few kilobytes of memory, and a gigabyte as text)."""
    if not isinstance(value, str):
        require(text_size(value), what)


# -- operators ---------------------------------------------------------------------------------


def check_power(base: Any, exponent: Any) -> None:
    """`base ** exponent` between integers: the result's size is exponent * log2(|base|) bits,
    known before Python spends seconds computing it."""
    if isinstance(base, int) and isinstance(exponent, int) and exponent > 0 and abs(base) > 1:
        if exponent * math.log2(abs(base)) > MAX_INT_BITS:
            raise refuse("the result of **")


def check_product(left: Any, right: Any) -> None:
    if isinstance(left, int) and isinstance(right, int):
        if left.bit_length() + right.bit_length() > MAX_INT_BITS:
            raise refuse("the result of *")
        return
    for seq, count in ((left, right), (right, left)):
        if isinstance(seq, (str, bytes, list, tuple)) and isinstance(count, int) and count > 1:
            require(len(seq) * count, "the result of *", MAX_ITEMS)
            if isinstance(seq, (list, tuple)) and seq:
                # The items themselves may be large: [text] * 1000 is small until it is printed.
                # Brackets are written once, the items `count` times.
                items = nested_size(seq, MAX_TEXT_CHARS // count + 16) - 16
                require(16 + items * count, "the result of *", charge=False)


def check_sum(left: Any, right: Any) -> None:
    if isinstance(left, (str, bytes)) and isinstance(right, (str, bytes)):
        factor = ESCAPE_FACTOR if isinstance(left, Markup) or isinstance(right, Markup) else 1
        require((len(left) + len(right)) * factor, "the result of +")
    elif isinstance(left, (list, tuple)) and isinstance(right, (list, tuple)):
        require(len(left) + len(right), "the result of +", MAX_ITEMS)


def check_concat(values: Iterable[Any]) -> None:
    """`a ~ b ~ c`: every operand becomes text, then the texts are joined."""
    total = 0
    for value in values:
        total += text_size(value, MAX_TEXT_CHARS - total)
        if total > MAX_TEXT_CHARS:
            break
    require(total, "the result of ~")


# -- formatting --------------------------------------------------------------------------------

# The format specification mini-language: [[fill]align][sign][z][#][0][width][grouping][.precision][type]
_SPEC = re.compile(
    r"(?:.?[<>=^])?[-+ ]?z?#?0?(?P<width>\d*)(?P<grouping>[,_]?)(?:\.(?P<precision>\d+))?(?P<type>[bcdeEfFgGnosxX%]?)",
    re.S,
)


def _number(digits: str) -> int:
    if len(digits) > MAX_NUMBER_DIGITS:
        raise refuse("a width or precision")
    return int(digits)


def converted_size(value: Any, conversion: str, precision: int | None) -> int:
    """Upper bound of one value written with a printf-style or format-spec type, before padding.
    `precision` truncates text and sets the digits of numbers."""
    if conversion == "b" and not isinstance(value, int):
        conversion = "r"  # printf-style %b of bytes: the bytes themselves, at most their repr
    if conversion in ("s", ""):
        if isinstance(value, float) and conversion == "":
            return FLOAT_CHARS + (precision or 0)
        size = repr_size(value) if isinstance(value, bytes) else text_size(value)
    elif conversion in ("r", "a"):
        size = repr_size(value)
    elif conversion in ("d", "i", "u", "n", "o", "x", "X", "b", "c"):
        if conversion == "c":
            return 1
        # Binary is the longest form: bit_length digits, plus sign and prefix.
        digits = value.bit_length() + 4 if isinstance(value, int) else FIXED_FLOAT_CHARS * 4
        return max(digits, (precision or 0) + 4)
    elif conversion in ("f", "F", "%"):
        return FIXED_FLOAT_CHARS + (6 if precision is None else precision) + 4
    elif conversion in ("e", "E", "g", "G"):
        return FLOAT_CHARS + (6 if precision is None else precision)
    else:
        return 0  # not a conversion: Python rejects the format
    return size if precision is None else min(size, precision)


def spec_size(value: Any, spec: str) -> int:
    """Upper bound of format(value, spec)."""
    match = _SPEC.fullmatch(spec)
    if match is None:
        # Not the standard mini-language: Python rejects it for every type a template can build.
        return text_size(value) + len(spec)
    width = _number(match["width"]) if match["width"] else 0
    precision = _number(match["precision"]) if match["precision"] else None
    size = converted_size(value, match["type"], precision)
    if match["grouping"]:
        size = size * 4 // 3 + 1
    return max(width, size)


def percent_size(template: str | bytes, args: Any) -> int:
    """Upper bound of `template % args` (printf-style), widths and precisions from `*` included."""
    text = template.decode("latin-1") if isinstance(template, bytes) else template
    mapping = args if isinstance(args, Mapping) else None
    positional = list(args) if isinstance(args, tuple) else [args]
    factor = ESCAPE_FACTOR if isinstance(template, Markup) else 1

    def next_value() -> Any:
        return positional.pop(0) if positional else None

    total = len(text)
    start = 0
    length = len(text)
    while (at := text.find("%", start)) >= 0:
        i = at + 1
        key = None
        if i < length and text[i] == "(":
            depth, i, key_start = 1, i + 1, i + 1
            while i < length and depth:
                depth += {"(": 1, ")": -1}.get(text[i], 0)
                i += 1
            key = text[key_start : i - 1]
        while i < length and text[i] in "-+ #0":
            i += 1
        width = 0
        if i < length and text[i] == "*":
            width, i = as_count(next_value()), i + 1
        else:
            digits_start = i
            while i < length and text[i].isdigit():
                i += 1
            width = _number(text[digits_start:i]) if i > digits_start else 0
        precision = None
        if i < length and text[i] == ".":
            i += 1
            if i < length and text[i] == "*":
                precision, i = as_count(next_value()), i + 1
            else:
                digits_start = i
                while i < length and text[i].isdigit():
                    i += 1
                precision = _number(text[digits_start:i]) if i > digits_start else 0
        while i < length and text[i] in "hlL":
            i += 1
        if i >= length:
            break  # incomplete: Python rejects it
        conversion = text[i]
        start = i + 1
        if conversion == "%":
            continue
        value = mapping.get(key) if key is not None and mapping is not None else next_value()
        total += max(width, converted_size(value, conversion, precision) * factor)
        if total > MAX_TEXT_CHARS:
            return total
    return total


def check_percent(template: Any, args: Any) -> None:
    if isinstance(template, (str, bytes)):
        require(percent_size(template, args), "the result of %")


# -- methods of str, bytes and int -------------------------------------------------------------

# Deny by default: a template may call a method of a str, bytes or int value only when it is listed
# here, with its bound (or in the first set, whose results are never larger than their inputs).
# Any other name is refused before it runs, so a method this list forgot, or one a later Python or
# MarkupSafe adds, is an error until someone decides its bound, never an unbounded call.
#
# Results no larger than the text they are called on: a bool, an int, the text shortened, or a list
# of its pieces. Markup's striptags and unescape only ever remove characters.
SAME_SIZE_TEXT_METHODS = frozenset(
    {
        "count", "endswith", "find", "index", "rfind", "rindex", "startswith",
        "isalnum", "isalpha", "isascii", "isdecimal", "isdigit", "isidentifier", "islower",
        "isnumeric", "isprintable", "isspace", "istitle", "isupper",
        "strip", "lstrip", "rstrip", "removeprefix", "removesuffix",
        "partition", "rpartition", "split", "rsplit", "splitlines",
        "striptags", "unescape",
    }
)  # fmt: skip
CASE_METHODS = frozenset({"upper", "lower", "title", "capitalize", "swapcase", "casefold"})
PADDING_METHODS = frozenset({"center", "ljust", "rjust", "zfill"})
# Each bounded by its own branch of check_text_method. format and format_map are absent on
# purpose: the sandbox hands templates its own bounded wrapper of them (engine.wrap_str_format), so
# a raw str.format reaching a call has slipped past that wrapper and is refused.
TEXT_METHODS = SAME_SIZE_TEXT_METHODS | CASE_METHODS | PADDING_METHODS | {"expandtabs", "join", "replace", "translate", "encode", "decode", "hex"}
# Methods reached through a class rather than a value (`b.fromhex`, Markup's `escape`,
# `'x'.maketrans`): no text of their own, their arguments are the input.
TEXT_CLASS_METHODS = frozenset({"fromhex", "escape", "maketrans"})
# int (and bool): only to_bytes and from_bytes can build something large; both are bounded below.
INT_METHODS = frozenset({"as_integer_ratio", "bit_count", "bit_length", "conjugate", "is_integer", "to_bytes", "from_bytes"})


def not_allowed(owner: Any, name: str) -> SecurityError:
    kind = owner.__name__ if isinstance(owner, type) else type(owner).__name__
    return SecurityError(f"calling {kind}.{name}() is not allowed in templates")


def _text_arg(value: Any, markup: bool) -> int:
    """Characters an argument adds to a str method's result; Markup escapes its arguments, turning
    any value into text first."""
    if markup:
        return text_size(value) * ESCAPE_FACTOR
    return len(value) if isinstance(value, (str, bytes)) else 0


def check_text_method(owner: str | bytes | type, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, ...]:
    """Refuses a call of a str or bytes method (or of a str or bytes class) that is not listed
    above, or whose result would be over the cap; returns the arguments to call it with (an
    iterable given to join is read once, here)."""
    if isinstance(owner, type):
        if name not in TEXT_CLASS_METHODS:
            raise not_allowed(owner, name)
        # fromhex is half its input, maketrans a table of its inputs' characters, escape its input
        # as text, escaped.
        require(sum(text_size(value) for value in (*args, *kwargs.values())) * ESCAPE_FACTOR, f"the result of {name}()")
        return args
    if name not in TEXT_METHODS:
        raise not_allowed(owner, name)
    size = len(owner)
    first: Any = args[0] if args else None
    markup = isinstance(owner, Markup)
    if markup:
        # Markup escapes the arguments of most of its methods, turning any value into text first
        # (`Markup('x').split(a_huge_list)` would write the list out before splitting).
        for value in (*args, *kwargs.values()):
            require(_text_arg(value, markup), f"an argument of {name}()", charge=False)
    if name in SAME_SIZE_TEXT_METHODS:
        pass
    elif name in PADDING_METHODS:
        require(max(size, as_count(first)), f"the result of {name}()")
    elif name == "expandtabs":
        tab = "\t" if isinstance(owner, str) else b"\t"
        tabsize = kwargs.get("tabsize", first if args else 8)
        require(size + owner.count(tab) * as_count(tabsize), "the result of expandtabs()")  # type: ignore[arg-type]
    elif name == "join" and args:
        items = list(first)
        require(sum(_text_arg(item, markup) for item in items) + size * max(len(items) - 1, 0), "the result of join()")
        return (items, *args[1:])
    elif name == "replace" and len(args) >= 2:
        old, new = args[0], args[1]
        if isinstance(old, str if isinstance(owner, str) else bytes):
            count = size + 1 if not old else owner.count(old)  # type: ignore[arg-type]
            limit = args[2] if len(args) > 2 else kwargs.get("count", -1)
            if isinstance(limit, int) and limit >= 0:
                count = min(count, limit)
            require(size + count * max(_text_arg(new, markup) - len(old), 0), "the result of replace()")
    elif name == "translate" and args:
        require(size * _largest_entry(first), "the result of translate()")
    elif name in CASE_METHODS:
        require(size * CASE_FACTOR, f"the result of {name}()")
    elif name == "encode":
        require(size * ENCODE_FACTOR + 4, "the result of encode()")
    elif name == "decode":
        require(size * DECODE_FACTOR, "the result of decode()")
    elif name == "hex":
        require(size * 3, "the result of hex()")
    return args


def _largest_entry(table: Any) -> int:
    """The longest text one character can become through a translate() table."""
    if isinstance(table, Mapping):
        values: Iterable[Any] = table.values()
    elif isinstance(table, (str, bytes, list, tuple)):
        values = table
    else:
        return MAX_TEXT_CHARS + 1  # an object computing its entries: nothing to measure
    return max((len(v) if isinstance(v, (str, bytes)) else 1 for v in values), default=1)


def check_int_method(owner: Any, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """Refuses a call of an int method (or of int's classmethod from_bytes) that is not listed
    above, or whose result would be over the cap."""
    if name not in INT_METHODS:
        raise not_allowed(owner, name)
    if name == "to_bytes":
        length = kwargs.get("length", args[0] if args else 1)
        require(as_count(length), "the result of to_bytes()")
    elif name == "from_bytes" and args and hasattr(args[0], "__len__"):
        require(len(args[0]) * 8, "the result of from_bytes()", MAX_INT_BITS, charge=False)
