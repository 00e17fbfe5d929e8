"""Runtime provenance: the trusted wrapper, display-trigger markup, and parsing / stripping blocks.

Domain layer: must not import promptd.rpc or promptd.methods.

`wrap_trusted` is the only function that writes the process's nonce into text (seed 003). Its two
layouts, byte for byte:

    pua:  U+E203 NONCE "\\n" BODY "\\n" NONCE U+E204
    xml:  <system-reminder nonce="NONCE"> "\\n" BODY "\\n" </system-reminder>

The block carries no key. BODY may begin with display-trigger markup
(`<display-trigger>TEXT</display-trigger>`, TEXT sanitized and escaped), followed by "\\n\\n" and
the rest of the body. `parse` reads these blocks and the keyed seed-000 blocks `reminder/wrap`
writes (with or without a `nonce` attribute); a block is authenticated only when it carries the
current nonce. The nonce is not a secret from the model (it can read it); trust comes from the
call path, which is why the sanitizer removes copies of it and every delimiter from untrusted text.
"""

from __future__ import annotations

import hmac
import re
from dataclasses import dataclass

from promptd.errors import NestedMarker
from promptd.reminders.format import escape_body
from promptd.reminders.sanitize import sanitize

PUA_OPEN = "\ue203"
PUA_CLOSE = "\ue204"
STYLES = ("pua", "xml")
TRIGGER_OPEN = "<display-trigger>"
TRIGGER_CLOSE = "</display-trigger>"
TRIGGER_SEPARATOR = "\n\n"
XML_CLOSE = "</system-reminder>"
# What a nonce may look like: the runtime's is 32 hex digits; other writers' tokens are read too,
# so blocks from another process can be recognised (and not trusted).
NONCE_PATTERN = re.compile(r"[0-9A-Za-z_-]{1,128}")

# A PUA block: delimiter, token, newline. The body is found by the matching closing token.
_PUA_OPEN = re.compile(PUA_OPEN + r"([0-9A-Za-z_-]{1,128})\n")
# An XML open tag as the writers produce it. Attribute values are bounded so a long run of
# unterminated openings cannot make the scan quadratic.
_XML_OPEN = re.compile(r'<system-reminder((?:[ \t]+[A-Za-z_][A-Za-z0-9_-]{0,31}="[^"<>\n]{0,256}")*)[ \t]*>')
_XML_ATTRIBUTE = re.compile(r'([A-Za-z_][A-Za-z0-9_-]{0,31})="([^"]*)"')


@dataclass(frozen=True)
class Block:
    authenticated: bool
    key: str | None
    body: str
    display_trigger: str | None
    start: int
    end: int
    style: str


def _unescape(text: str) -> str:
    # The inverse of format.escape_body: `&amp;` last, so `&amp;lt;` stays `&lt;`.
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


def trigger_markup(trigger: str) -> str:
    """The markup that carries a display trigger at the start of a reminder body."""
    return TRIGGER_OPEN + escape_body(sanitize(trigger).text) + TRIGGER_CLOSE


def _check_body(body: str, nonce: str) -> None:
    """Refuses a body that could break out of the block: the rest after the trigger markup must
    already be sanitized (sanitizing it again changes nothing)."""
    rest = body
    if body.startswith(TRIGGER_OPEN):
        close = body.find(TRIGGER_CLOSE)
        if close < 0:
            raise NestedMarker("display-trigger markup is not closed", where="trusted_wrapper")
        inner = body[len(TRIGGER_OPEN) : close]
        if "<" in inner or ">" in inner or sanitize(inner, nonce).neutralized:
            raise NestedMarker("display-trigger text is not sanitized and escaped", where="trusted_wrapper")
        rest = body[close + len(TRIGGER_CLOSE) :]
        if rest and not rest.startswith(TRIGGER_SEPARATOR):
            raise NestedMarker("display-trigger markup must be followed by a blank line", where="trusted_wrapper")
    if sanitize(rest, nonce).neutralized:
        raise NestedMarker("trusted reminder body contains unsanitized reminder markup", where="trusted_wrapper")


def wrap_trusted(body: str, nonce: str, style: str = "pua") -> str:
    """Wraps already-sanitized content (plus optional trigger markup) in a keyless runtime block.

    The one writer of the nonce. Raises NestedMarker when `body` still holds reminder markup,
    delimiters or the nonce, so a caller that forgot to sanitize fails loudly instead of emitting a
    block that a forged fragment could close early.
    """
    if not NONCE_PATTERN.fullmatch(nonce):
        raise ValueError("nonce must match [0-9A-Za-z_-]{1,128}")
    _check_body(body, nonce)
    if style == "pua":
        return f"{PUA_OPEN}{nonce}\n{body}\n{nonce}{PUA_CLOSE}"
    if style == "xml":
        return f'<system-reminder nonce="{nonce}">\n{body}\n{XML_CLOSE}'
    raise ValueError(f"unknown reminder style {style!r}; expected one of {STYLES}")


def _split_trigger(raw: str) -> tuple[str | None, str]:
    if not raw.startswith(TRIGGER_OPEN):
        return None, raw
    close = raw.find(TRIGGER_CLOSE)
    if close < 0:
        return None, raw
    trigger = _unescape(raw[len(TRIGGER_OPEN) : close])
    rest = raw[close + len(TRIGGER_CLOSE) :]
    if rest.startswith(TRIGGER_SEPARATOR):
        rest = rest[len(TRIGGER_SEPARATOR) :]
    elif rest:
        return None, raw  # markup must be followed by the separator or end the body
    return trigger, rest


def _same(token: str | None, nonce: str) -> bool:
    return token is not None and hmac.compare_digest(token.encode("utf-8", "surrogatepass"), nonce.encode("utf-8", "surrogatepass"))


def _pua_blocks(text: str, nonce: str) -> list[tuple[Block, bool]]:
    blocks = []
    pos = 0
    close = -1
    while True:
        m = _PUA_OPEN.search(text, pos)
        if m is None:
            return blocks
        # The next closing delimiter is looked up again only once the scan has passed it, so a
        # long run of unclosed openings before one closing delimiter costs one look, not one each.
        if close < m.end():
            close = text.find(PUA_CLOSE, m.end())
            if close < 0:
                return blocks
        following_open = text.find(PUA_OPEN, m.end(), close)
        if following_open >= 0:
            pos = following_open  # this opening is never closed; try the next one
            continue
        token = m.group(1)
        tail = "\n" + token
        body_end = close - len(tail)
        # body_end == m.end() - 1 is the empty body written without its own line.
        if body_end >= m.end() - 1 and text.startswith(tail, body_end):
            raw = text[m.end() : body_end] if body_end >= m.end() else ""
            trigger, body = _split_trigger(raw)
            blocks.append((Block(_same(token, nonce), None, body, trigger, m.start(), close + 1, "pua"), True))
        pos = close + 1


def _xml_blocks(text: str, nonce: str) -> list[tuple[Block, bool]]:
    opens = list(_XML_OPEN.finditer(text))
    closes = [m.start() for m in re.finditer(re.escape(XML_CLOSE), text)]
    blocks: list[tuple[Block, bool]] = []
    ci = 0
    for index, m in enumerate(opens):
        if blocks and m.start() < blocks[-1][0].end:
            continue
        while ci < len(closes) and closes[ci] < m.end():
            ci += 1
        if ci == len(closes):
            break
        close = closes[ci]
        if index + 1 < len(opens) and opens[index + 1].start() < close:
            continue  # a later opening comes first: this one is unclosed
        attributes = dict(_XML_ATTRIBUTE.findall(m.group(1)))
        raw = text[m.end() : close]
        if raw.startswith("\n"):
            raw = raw[1:]
        if raw.endswith("\n"):
            raw = raw[:-1]
        key = attributes.get("key")
        if key is not None:
            trigger, body = None, _unescape(raw)  # seed-000 bodies are escaped by their writer
        else:
            trigger, body = _split_trigger(raw)
        token = attributes.get("nonce")
        block = Block(_same(token, nonce), key, body, trigger, m.start(), close + len(XML_CLOSE), "xml")
        blocks.append((block, token is not None))
    return blocks


def parse_marked(text: str, nonce: str) -> list[tuple[Block, bool]]:
    """`parse`, with each block paired with whether it carries some process's nonce (every PUA
    block; XML blocks with a `nonce` attribute) as opposed to being a plain seed-000 block."""
    found = sorted(_pua_blocks(text, nonce) + _xml_blocks(text, nonce), key=lambda pair: pair[0].start)
    blocks: list[tuple[Block, bool]] = []
    for pair in found:
        if blocks and pair[0].start < blocks[-1][0].end:
            continue
        blocks.append(pair)
    return blocks


def parse(text: str, nonce: str) -> list[Block]:
    """Every reminder block in `text`, in order. Blocks never overlap: where a block of one style
    would overlap one of the other, the one that starts first is kept."""
    return [block for block, _ in parse_marked(text, nonce)]


def trigger_line(trigger: str) -> str:
    """How a display trigger is shown to a person in place of the hidden block."""
    return f"[{trigger}]"


def strip(text: str, nonce: str) -> str:
    """What a person is shown: `text` without the authenticated runtime blocks.

    Only authenticated blocks are hidden, so nothing that passed through the sanitizer can be. A
    block with a display trigger is replaced by the trigger in brackets; one without is removed
    together with the line breaks (at most two) that separate it from the text before it, or,
    when it starts the text, from the text after it.
    """
    pieces: list[str] = []
    last = 0
    trim_next = False
    for block in parse(text, nonce):
        if not block.authenticated:
            continue
        before = text[last : block.start]
        if trim_next:
            before = _trim_leading(before)
        trim_next = False
        if block.display_trigger is not None:
            pieces.append(before)
            pieces.append(trigger_line(block.display_trigger))
        else:
            if before or pieces:
                pieces.append(_trim_trailing(before))
            else:
                trim_next = True
        last = block.end
    rest = text[last:]
    pieces.append(_trim_leading(rest) if trim_next else rest)
    return "".join(pieces)


def _trim_trailing(text: str) -> str:
    for separator in ("\n\n", "\n"):
        if text.endswith(separator):
            return text[: -len(separator)]
    return text


def _trim_leading(text: str) -> str:
    for separator in ("\n\n", "\n"):
        if text.startswith(separator):
            return text[len(separator) :]
    return text
