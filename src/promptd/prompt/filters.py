"""Jinja's filters, each checked against the sandbox's size bounds before it
runs.

Domain layer: must not import promptd.rpc or promptd.methods. Imported with the engine (lazily).

Every filter is wrapped; a filter that turns its input into text first refuses an input whose text
would be over the cap, and a filter that can make its result much larger than its input (`center`,
`indent`, `format`, `join`, `replace`, `wordwrap`, `tojson`, `batch` and `slice` with fill values,
`sum` of lists, escaping) checks its bound from limits.py. The wrappers take the render context,
which also keeps Jinja from running them at compile time on constant arguments: the compiler
folds constant filter calls (and then joins folded text) before any runtime check could see them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from jinja2 import pass_context
from jinja2.filters import make_attrgetter
from jinja2.runtime import Context
from jinja2.utils import _PassArg

from promptd.prompt import limits
from promptd.prompt.limits import MAX_ITEMS, require, require_text, text_size

Args = tuple[Any, ...]
Kwargs = dict[str, Any]
# A check receives the filter's input and arguments and returns them, possibly replaced (an
# iterable it had to read to measure is handed on as a list).
Check = Callable[[Context, Any, Args, Kwargs], tuple[Any, Args, Kwargs]]

# Filters that do not turn their input into text: they select, count, sort or regroup it. Every
# other filter refuses an input whose text would be over the cap.
STRUCTURAL = frozenset(
    {
        "abs", "attr", "batch", "bool", "count", "d", "default", "dictsort", "first", "float", "groupby",
        "int", "items", "last", "length", "list", "map", "max", "min", "reject",
        "rejectattr", "reverse", "round", "select", "selectattr", "slice", "sort", "sum",
        "unique", "tojson", "pprint",
    }
)  # fmt: skip

# Filters whose result is their input or one of its items: they build nothing to charge.
PICKING = frozenset({"attr", "d", "default", "first", "last", "max", "min"})


def _arg(args: Args, kwargs: Kwargs, index: int, name: str, default: Any) -> Any:
    if len(args) > index:
        return args[index]
    return kwargs.get(name, default)


def _text(value: Any) -> str:
    return value if isinstance(value, str) else str(value)


def _format(context: Context, value: Any, args: Args, kwargs: Kwargs) -> tuple[Any, Args, Kwargs]:
    if not (args and kwargs):  # both at once: the filter itself refuses
        limits.check_percent(_text(value), kwargs or args)
    return value, args, kwargs


def _center(context: Context, value: Any, args: Args, kwargs: Kwargs) -> tuple[Any, Args, Kwargs]:
    require(max(text_size(value), limits.as_count(_arg(args, kwargs, 0, "width", 80))), "the result of |center")
    return value, args, kwargs


def _indent(context: Context, value: Any, args: Args, kwargs: Kwargs) -> tuple[Any, Args, Kwargs]:
    width = _arg(args, kwargs, 0, "width", 4)
    indention = len(width) if isinstance(width, str) else limits.as_count(width)
    text = _text(value)
    require(len(text) + (text.count("\n") + 2) * indention, "the result of |indent")
    return value, args, kwargs


def _join(context: Context, value: Any, args: Args, kwargs: Kwargs) -> tuple[Any, Args, Kwargs]:
    items = list(value)
    separator = _arg(args, kwargs, 0, "d", "")
    require_text(separator, "the separator of |join")
    total = text_size(separator) * max(len(items) - 1, 0)
    for item in items:
        total += text_size(item, limits.MAX_TEXT_CHARS - total)
        if total > limits.MAX_TEXT_CHARS:
            break
    require(total, "the result of |join")
    return items, args, kwargs


def _replace(context: Context, value: Any, args: Args, kwargs: Kwargs) -> tuple[Any, Args, Kwargs]:
    old, new = _arg(args, kwargs, 0, "old", ""), _arg(args, kwargs, 1, "new", "")
    require_text(old, "the argument of |replace")
    require_text(new, "the argument of |replace")
    count = _arg(args, kwargs, 2, "count", None)
    limits.check_text_method(_text(value), "replace", (_text(old), _text(new), -1 if count is None else count), {})
    return value, args, kwargs


def _wordwrap(context: Context, value: Any, args: Args, kwargs: Kwargs) -> tuple[Any, Args, Kwargs]:
    wrapstring = _arg(args, kwargs, 2, "wrapstring", None)
    separator = len(wrapstring) if isinstance(wrapstring, str) else 1
    size = text_size(value)
    # Every line and every paragraph holds at least one character, so there are at most 2n + 1
    # places a separator goes.
    require(size + (2 * size + 1) * separator, "the result of |wordwrap")
    return value, args, kwargs


def _tojson(context: Context, value: Any, args: Args, kwargs: Kwargs) -> tuple[Any, Args, Kwargs]:
    indent = _arg(args, kwargs, 0, "indent", None)
    step = len(indent) if isinstance(indent, str) else limits.as_count(indent)
    require(limits.nested_size(value, json=True, indent=step), "the result of |tojson")
    return value, args, kwargs


def _pprint(context: Context, value: Any, args: Args, kwargs: Kwargs) -> tuple[Any, Args, Kwargs]:
    require(limits.nested_size(value, limits.MAX_PPRINT_INPUT), "the input of |pprint", limits.MAX_PPRINT_INPUT, charge=False)
    return value, args, kwargs


def _batch(context: Context, value: Any, args: Args, kwargs: Kwargs) -> tuple[Any, Args, Kwargs]:
    if _arg(args, kwargs, 1, "fill_with", None) is not None:
        # The last batch is filled up to the full count.
        require(limits.as_count(_arg(args, kwargs, 0, "linecount", 0)), "the count of |batch", MAX_ITEMS)
    return value, args, kwargs


def _slice(context: Context, value: Any, args: Args, kwargs: Kwargs) -> tuple[Any, Args, Kwargs]:
    # One list per slice, whatever the input: a billion slices are a billion lists.
    require(limits.as_count(_arg(args, kwargs, 0, "slices", 0)), "the count of |slice", MAX_ITEMS)
    return value, args, kwargs


def _sum(context: Context, value: Any, args: Args, kwargs: Kwargs) -> tuple[Any, Args, Kwargs]:
    start = _arg(args, kwargs, 1, "start", 0)
    if not isinstance(start, (list, tuple)):
        return value, args, kwargs
    # Lists are concatenated: the result holds every item of every list.
    items = list(value)
    attribute = _arg(args, kwargs, 0, "attribute", None)
    if attribute is not None:
        getter = make_attrgetter(context.environment, attribute)
        items = [getter(item) for item in items]
    require(len(start) + sum(len(item) for item in items if isinstance(item, (list, tuple))), "the result of |sum", MAX_ITEMS)
    return items, (), {"start": start}


def _expanding(factor: int, what: str) -> Check:
    def check(context: Context, value: Any, args: Args, kwargs: Kwargs) -> tuple[Any, Args, Kwargs]:
        require(text_size(value) * factor, what)
        return value, args, kwargs

    return check


def _urlize(context: Context, value: Any, args: Args, kwargs: Kwargs) -> tuple[Any, Args, Kwargs]:
    size = text_size(value)
    extra = sum(text_size(v) for v in (_arg(args, kwargs, 2, "target", ""), _arg(args, kwargs, 3, "rel", "")) if v is not None)
    # A link wraps a word of at least two characters in an anchor that repeats it.
    require(3 * size + (size // 2 + 1) * (extra + 64), "the result of |urlize")
    return value, args, kwargs


def _xmlattr(context: Context, value: Any, args: Args, kwargs: Kwargs) -> tuple[Any, Args, Kwargs]:
    require(limits.nested_size(value) * limits.ESCAPE_FACTOR, "the result of |xmlattr")
    return value, args, kwargs


def _truncate(context: Context, value: Any, args: Args, kwargs: Kwargs) -> tuple[Any, Args, Kwargs]:
    require_text(_arg(args, kwargs, 2, "end", "..."), "the argument of |truncate")
    return value, args, kwargs


CHECKS: Mapping[str, Check] = {
    "format": _format,
    "center": _center,
    "indent": _indent,
    "join": _join,
    "replace": _replace,
    "wordwrap": _wordwrap,
    "tojson": _tojson,
    "pprint": _pprint,
    "batch": _batch,
    "slice": _slice,
    "sum": _sum,
    "escape": _expanding(limits.ESCAPE_FACTOR, "the result of |escape"),
    "e": _expanding(limits.ESCAPE_FACTOR, "the result of |e"),
    "forceescape": _expanding(limits.ESCAPE_FACTOR, "the result of |forceescape"),
    "urlencode": _expanding(limits.URL_FACTOR, "the result of |urlencode"),
    "upper": _expanding(limits.CASE_FACTOR, "the result of |upper"),
    "lower": _expanding(limits.CASE_FACTOR, "the result of |lower"),
    "title": _expanding(limits.CASE_FACTOR, "the result of |title"),
    "capitalize": _expanding(limits.CASE_FACTOR, "the result of |capitalize"),
    "urlize": _urlize,
    "xmlattr": _xmlattr,
    "truncate": _truncate,
}


def bounded_filter(name: str, func: Callable[..., Any]) -> Callable[..., Any]:
    """`func` behind the size checks; it receives what it asked for (context, eval context or
    environment) as before. A filter without a check of its own (`list`, `sort`, `trim`, ...)
    builds at most what its input holds, so it is not refused before it runs; what it built is
    charged to the render's budget after (a loop keeping `big | list` would otherwise hold many
    copies of a bounded value). Filters that only pick one of their input's items build nothing."""
    passes = _PassArg.from_obj(func)
    check = CHECKS.get(name)
    structural = name in STRUCTURAL
    charged_after = check is None and name not in PICKING

    @pass_context
    def run(context: Context, value: Any, *args: Any, **kwargs: Any) -> Any:
        if not structural:
            require_text(value, f"the input of |{name}")
        if check is not None:
            value, args, kwargs = check(context, value, args, kwargs)
        if passes is _PassArg.context:
            result = func(context, value, *args, **kwargs)
        elif passes is _PassArg.eval_context:
            result = func(context.eval_ctx, value, *args, **kwargs)
        elif passes is _PassArg.environment:
            result = func(context.environment, value, *args, **kwargs)
        else:
            result = func(value, *args, **kwargs)
        if charged_after and result is not value:
            limits.charge(limits.built_size(result), f"the result of |{name}")
        return result

    run.__name__ = f"bounded_{name}"
    return run


def bounded_filters(filters: Mapping[str, Callable[..., Any]]) -> dict[str, Callable[..., Any]]:
    return {name: bounded_filter(name, func) for name, func in filters.items()}
