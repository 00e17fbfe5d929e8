"""The reference engine, as a test oracle: MiniJinja 2.18.0 (the Python binding) configured the way
the reference pipeline configures the Rust crate.

Test support only; promptd never imports it. The reference build is the crate with its default
features plus `custom_syntax`, and nothing from minijinja-contrib. The binding is compiled with
more (`json`, `urlencode`, `loop_controls`, `preserve_order`, minijinja-contrib's filters and
functions, its Python-compatibility methods), so this module takes away what the reference lacks:

- the filters and functions the binding adds are removed (`FILTERS_NOT_IN_REFERENCE`,
  `GLOBALS_NOT_IN_REFERENCE`);
- `break` and `continue` (the `loop_controls` feature) are refused before rendering, as the
  reference's parser refuses an unknown block;
- map literals are written in key order before rendering: without `preserve_order` the reference
  keeps every map in a sorted map, so `{"b": 1, "a": 2}` prints and iterates as `{"a": 2, "b": 1}`;
- lists and maps in the context reach the template as engine values (literals bound with `set`
  ahead of the template), not as Python objects: the binding would print those the Python way and
  let a template call their methods.

tests/reference/ holds a Rust build of the reference itself; tests/prompt/test_reference_engine.py checks
that this set-up and that build agree byte for byte.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Mapping
from typing import Any

import minijinja

# What the binding has and the reference build does not: tojson (the crate's `json` feature),
# urlencode (`urlencode`), and what minijinja-contrib adds (its filters, joiner, cycler).
FILTERS_NOT_IN_REFERENCE = ("tojson", "urlencode", "pluralize", "filesizeformat", "truncate", "striptags")
GLOBALS_NOT_IN_REFERENCE = ("joiner", "cycler")
# Block statements of the `loop_controls` feature, which the reference build leaves out.
LOOP_CONTROLS = frozenset({"break", "continue"})
# The reference pipeline returns a template without variable or block markers as it is, unparsed
# (a template of comments only included, docs/template-compatibility.md).
PIPELINE_MARKERS = ("${{", "${%")

_TAG_START = re.compile(r"\$\{([{%#])")
_END = {"{": "}}", "%": "%}"}
_OPEN, _CLOSE = "([{", ")]}"
_FIRST_WORD = re.compile(r"[-+]?\s*(\w+)")
_ENDRAW = re.compile(r"\$\{%[-+]?\s*endraw\s*[-+]?%\}")


class ReferenceFailure(Exception):
    """The reference engine refused the template or failed rendering it."""


class ReferenceEngine:
    """Renders as the reference build does (see the module docstring)."""

    def __init__(self) -> None:
        env = minijinja.Environment(
            block_start_string="${%",
            block_end_string="%}",
            variable_start_string="${{",
            variable_end_string="}}",
            comment_start_string="${#",
            comment_end_string="#}",
            # The crate's defaults, written out: lenient undefined, no trim or lstrip blocks, the
            # final newline dropped; no autoescape for a template without a file name.
            undefined_behavior="lenient",
            trim_blocks=False,
            lstrip_blocks=False,
            keep_trailing_newline=False,
            pycompat=False,
        )
        for name in FILTERS_NOT_IN_REFERENCE:
            env.remove_filter(name)
        for name in GLOBALS_NOT_IN_REFERENCE:
            env.remove_global(name)
        self._env = env

    def render(self, template: str, context: Mapping[str, Any] | None = None) -> str:
        """The engine's output for `template` with `context` (JSON-like data); raises
        ReferenceFailure where the reference errors."""
        source = as_reference_source(template)
        scalars: dict[str, Any] = {}
        bindings = []
        for name, value in (context or {}).items():
            if isinstance(value, (list, tuple, Mapping)):
                bindings.append(f"${{% set {name} = {literal(value)} %}}")
            else:
                scalars[name] = _scalar(value)
        try:
            rendered: str = self._env.render_str("".join(bindings) + source, **scalars)
        except minijinja.TemplateError as exc:
            raise ReferenceFailure(str(exc)) from None
        return rendered

    def render_like_pipeline(self, template: str, context: Mapping[str, Any] | None = None) -> str:
        """What the reference pipeline returns: a template without markers verbatim, else rendered."""
        if not any(marker in template for marker in PIPELINE_MARKERS):
            return template
        return self.render(template, context)


def literal(value: Any) -> str:
    """`value` (JSON-like data) as a template expression that builds the same engine value, maps
    with their keys in order, as the reference keeps them."""
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{literal(key)}: {literal(item)}" for key, item in sorted(value.items())) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(literal(item) for item in value) + "]"
    if isinstance(value, str):
        return json.dumps(str(value), ensure_ascii=False)
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float) and value == value and abs(value) != float("inf"):
        return repr(value)
    raise TypeError(f"no template literal for a {type(value).__name__} value")


def _scalar(value: Any) -> Any:
    if isinstance(value, str):
        return str(value)  # a str subclass (an enum member) as plain text
    if value is None or isinstance(value, (bool, int, float)):
        return value
    raise TypeError(f"a context value must be JSON-like data, not a {type(value).__name__}")


def as_reference_source(template: str) -> str:
    """`template` as the reference build reads it: map literals in key order; `break` and
    `continue` refused. Text, comments and raw blocks are left alone."""
    out = []
    index = 0
    while (match := _TAG_START.search(template, index)) is not None:
        start = match.start()
        out.append(template[index:start])
        kind = match.group(1)
        if kind == "#":
            end = template.find("#}", match.end())
            end = len(template) if end < 0 else end + 2
            out.append(template[start:end])
            index = end
            continue
        body_end = _tag_end(template, match.end(), _END[kind])
        body = template[match.end() : body_end]
        out.append(template[start : match.end()] + _sort_maps(body))
        index = body_end
        if kind == "%":
            word = _FIRST_WORD.match(body)
            statement = word.group(1) if word else ""
            if statement in LOOP_CONTROLS:
                raise ReferenceFailure(f"syntax error: unknown statement {statement} (loop controls are not in the reference build)")
            if statement == "raw":
                raw_end = _ENDRAW.search(template, index)
                stop = len(template) if raw_end is None else raw_end.start()
                out.append(template[index:stop])
                index = stop
    out.append(template[index:])
    return "".join(out)


def _tag_end(text: str, index: int, end: str) -> int:
    """Where the tag whose body starts at `index` ends (the index of its `end` delimiter, or of a
    `-` / `+` before it): the first `end` outside strings and brackets, as the lexer finds it."""
    depth = 0
    while index < len(text):
        char = text[index]
        if char in "'\"":
            index = _string_end(text, index)
            continue
        if char in _OPEN:
            depth += 1
        elif char in _CLOSE:
            depth -= 1
        elif depth <= 0:
            if text.startswith(end, index):
                return index
            if char in "-+" and text.startswith(end, index + 1):
                return index
        index += 1
    return len(text)


def _string_end(text: str, index: int) -> int:
    quote = text[index]
    index += 1
    while index < len(text) and text[index] != quote:
        index += 2 if text[index] == "\\" else 1
    return index + 1


def _sort_maps(expression: str) -> str:
    """`expression` with the entries of every map literal in it (nested ones too) in key order,
    when every key of that literal is a string or an integer literal."""
    out = []
    index = 0
    while index < len(expression):
        char = expression[index]
        if char in "'\"":
            end = _string_end(expression, index)
            out.append(expression[index:end])
            index = end
        elif char == "{":
            end = _matching(expression, index)
            out.append("{" + _sorted_entries(expression[index + 1 : end]) + expression[end : end + 1])
            index = end + 1
        else:
            out.append(char)
            index += 1
    return "".join(out)


def _matching(text: str, index: int) -> int:
    depth = 0
    while index < len(text):
        char = text[index]
        if char in "'\"":
            index = _string_end(text, index)
            continue
        if char in _OPEN:
            depth += 1
        elif char in _CLOSE:
            depth -= 1
            if depth == 0:
                return index
        index += 1
    return len(text)


def _split_top(text: str, separator: str, limit: int = -1) -> list[str]:
    """`text` split at `separator` where it stands outside strings and brackets."""
    pieces = []
    depth = 0
    start = index = 0
    while index < len(text):
        char = text[index]
        if char in "'\"":
            index = _string_end(text, index)
            continue
        if char in _OPEN:
            depth += 1
        elif char in _CLOSE:
            depth -= 1
        elif char == separator and depth == 0 and limit != 0:
            pieces.append(text[start:index])
            start = index + 1
            limit -= 1
        index += 1
    pieces.append(text[start:])
    return pieces


def _sorted_entries(inner: str) -> str:
    entries = _split_top(inner, ",")
    trailing = entries.pop() if len(entries) > 1 and not entries[-1].strip() else None
    keyed = []
    for entry in entries:
        parts = _split_top(entry, ":", 1)
        if len(parts) != 2:
            return _sort_maps(inner)  # not a map literal this scanner understands: left as written
        try:
            key = ast.literal_eval(parts[0].strip())
        except (ValueError, SyntaxError):
            return _sort_maps(inner)
        keyed.append((key, f"{_sort_maps(parts[0])}:{_sort_maps(parts[1])}"))
    kinds = {type(key) for key, _ in keyed}
    if not keyed or not (kinds <= {str} or kinds <= {int}):
        return _sort_maps(inner)
    keyed.sort(key=lambda pair: pair[0])
    return ",".join(text for _, text in keyed) + ("," + trailing if trailing is not None else "")
