"""Where things are in a template's source: token offsets, 1-based lines and columns, the opening
tag of an unclosed block, and the position of a syntax error.

Domain layer: must not import promptd.rpc or promptd.methods; imported lazily (it uses jinja2).

Jinja's syntax tree and its errors carry lines but no columns, so columns come from the token
stream: each token is found in the source from where the previous one ended (the lexer's values
are source text, except that `-` markers strip whitespace, which `find` skips over). Lines are
counted from a table of line starts, so positions of a 10,000-line template cost a bisection each,
not a scan of the text before them.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator
from typing import Any, NamedTuple

from jinja2 import TemplateSyntaxError
from jinja2.lexer import TokenStream
from jinja2.parser import Parser

# Tags that open a block closed by `end<tag>` (Jinja's own statements; `set` only in its block
# form, which has no `=`).
BLOCK_TAGS = frozenset({"if", "for", "macro", "call", "filter", "with", "block", "autoescape", "raw", "set", "trans"})
TAG_STARTS = ("variable_begin", "block_begin")
TAG_ENDS = ("variable_end", "block_end")
_UNKNOWN_NAME = re.compile(r"^No (?:filter|test) named '([^']+)'")


class Token(NamedTuple):
    line: int
    column: int
    offset: int
    type: str
    value: str


class Lines:
    """1-based (line, column) of an offset, by bisection over the line starts."""

    def __init__(self, source: str) -> None:
        self.starts = [0]
        index = source.find("\n")
        while index >= 0:
            self.starts.append(index + 1)
            index = source.find("\n", index + 1)

    def at(self, offset: int) -> tuple[int, int]:
        line = bisect.bisect_right(self.starts, offset)
        return line, offset - self.starts[line - 1] + 1

    def start(self, line: int) -> int:
        return self.starts[min(max(line, 1), len(self.starts)) - 1]


# The tokens of the last source lexed: one lint asks for positions of several kinds of names in
# the same text, and lexing a 10,000-line template takes about a second. Kept by identity (one
# entry, replaced as a whole, so concurrent callers at worst lex again).
_last: tuple[str, Any, list[Token]] | None = None


def tokens(environment: Any, source: str) -> list[Token]:
    """Every raw token with its position, up to a lexing error (the tokens before it are kept)."""
    global _last
    last = _last
    if last is not None and last[0] is source and last[1] is environment:
        return last[2]
    found: list[Token] = []
    try:
        for token in _located(environment, source, Lines(source)):
            found.append(token)
    except TemplateSyntaxError:
        pass
    _last = (source, environment, found)
    return found


def _located(environment: Any, source: str, lines: Lines, tracker: list[int] | None = None) -> Iterator[Token]:
    cursor = 0
    for _lineno, token_type, value in environment.lexer.tokeniter(source, None):
        offset = source.find(value, cursor) if value else cursor
        if offset < 0:
            offset = cursor
        cursor = offset + len(value)
        line, column = lines.at(offset)
        if tracker is not None and token_type != "whitespace":
            tracker[0] = offset
        yield Token(line, column, offset, token_type, value)


def name_positions(environment: Any, source: str, names: frozenset[str], attributes: bool = False) -> dict[tuple[int, str], list[int]]:
    """Columns of each name token in `names` inside tags, by (line, name), in source order; an
    attribute (`x.tools`) counts only with `attributes`."""
    out: dict[tuple[int, str], list[int]] = {}
    inside = False
    previous: tuple[str, str] | None = None
    for token in tokens(environment, source):
        if token.type in TAG_STARTS:
            inside = True
        elif token.type in TAG_ENDS:
            inside = False
        elif inside and token.type != "whitespace":
            if token.type == "name" and token.value in names and (attributes or previous != ("operator", ".")):
                out.setdefault((token.line, token.value), []).append(token.column)
            previous = (token.type, token.value)
    return out


def column_of_name(environment: Any, source: str, line: int | None, name: str, attribute: bool | None = None) -> int | None:
    """The column of the first name token `name` on `line` inside a tag; with `attribute` True
    only after a `.`, with False only not after one (None: either)."""
    if not line:
        return None
    inside = False
    previous: tuple[str, str] | None = None
    for token in tokens(environment, source):
        if token.line > line:
            break
        if token.type in TAG_STARTS:
            inside = True
        elif token.type in TAG_ENDS:
            inside = False
        elif inside and token.type != "whitespace":
            is_attribute = previous == ("operator", ".")
            if token.line == line and token.type in ("name", "string") and token.value.strip("'\"") == name:
                if attribute is None or attribute == is_attribute:
                    return token.column
            previous = (token.type, token.value)
    return None


def first_tag_column(source: str, line: int, lines: Lines | None = None) -> int:
    """The column of the first `${` on `line` (1 when there is none): where an error on that
    line is most likely to be."""
    lines = lines or Lines(source)
    start = lines.start(line)
    end = source.find("\n", start)
    text = source[start : end if end >= 0 else len(source)]
    found = text.find("${")
    return found + 1 if found >= 0 else 1


class Opened(NamedTuple):
    tag: str
    line: int
    column: int


def open_blocks(environment: Any, source: str, until: int | None = None) -> list[Opened]:
    """The blocks still open at offset `until` (the end when None), outermost first."""
    stack: list[Opened] = []
    pending: Token | None = None  # the block_begin whose tag name comes next
    opened_set: Opened | None = None  # a `set` that is a block unless an `=` follows
    for token in tokens(environment, source):
        if until is not None and token.offset >= until:
            break
        if token.type == "block_begin":
            pending = token
            continue
        if token.type == "whitespace":
            continue
        if pending is not None and token.type == "name":
            word = token.value
            if word == "set":
                opened_set = Opened("set", pending.line, pending.column)
            elif word in BLOCK_TAGS:
                stack.append(Opened(word, pending.line, pending.column))
            elif word.startswith("end"):
                closing = word[3:]
                for index in range(len(stack) - 1, -1, -1):
                    if stack[index].tag == closing:
                        del stack[index:]
                        break
            pending = None
            continue
        pending = None
        if opened_set is not None:
            if token.type == "operator" and token.value == "=":
                opened_set = None
            elif token.type == "block_end":
                stack.append(opened_set)
                opened_set = None
    return stack


def syntax_position(environment: Any, source: str, exc: TemplateSyntaxError) -> tuple[int, int, str]:
    """(line, column, cause) of a syntax error: an unclosed block at its opening tag, an unknown
    filter or test at its name, otherwise the token where parsing stopped."""
    cause = exc.message or "syntax error"
    line = exc.lineno or 1
    if cause.startswith("Unexpected end of template"):
        still_open = open_blocks(environment, source)
        if still_open:
            innermost = still_open[-1]
            return innermost.line, innermost.column, f"`{innermost.tag}` is never closed (no `end{innermost.tag}`)"
    match = _UNKNOWN_NAME.match(cause)
    if match:
        column = column_of_name(environment, source, line, match.group(1), attribute=False)
        return line, column or first_tag_column(source, line), cause
    offset = _failing_offset(environment, source)
    if offset is not None:
        found_line, column = Lines(source).at(offset)
        if found_line == line:
            if "nesting mistake" in cause:
                still_open = open_blocks(environment, source, until=offset)
                if still_open:
                    innermost = still_open[-1]
                    cause += f" (the `{innermost.tag}` at line {innermost.line}, column {innermost.column} is still open)"
            return line, column, cause
    return line, first_tag_column(source, line), cause


def _failing_offset(environment: Any, source: str) -> int | None:
    """The offset of the last token the parser read before it failed (the one it stopped at)."""
    tracker = [-1]
    try:
        parser = Parser(environment, source)
        raw = ((t.line, t.type, t.value) for t in _located(environment, source, Lines(source), tracker))
        parser.stream = TokenStream(environment.lexer.wrap(raw), None, None)
        parser.parse()
    except TemplateSyntaxError as exc:
        exc.source = None
        return tracker[0] if tracker[0] >= 0 else None
    return None
