"""Runtime provenance: the trusted wrapper, display-trigger markup, and parsing / stripping blocks.

Domain layer: must not import promptd.rpc or promptd.methods.

`wrap_trusted` and `wrap_keyed` are the trusted path: the only functions that write the process's
nonce into text, each inside a TOKEN that signs the exact block it writes for one session
(promptd.reminders.signing: nonce, session tag, MAC). The keyless layouts `wrap_trusted` writes,
byte for byte:

    pua:  U+E203 TOKEN "\\n" BODY "\\n" TOKEN U+E204
    xml:  <system-reminder nonce="TOKEN"> "\\n" BODY "\\n" </system-reminder>

BODY may begin with display-trigger markup (`<display-trigger>TEXT</display-trigger>`, TEXT
sanitized and escaped), followed by "\\n\\n" and the rest of the body. `wrap_keyed` writes the
keyed convention's block with a `nonce` attribute (`reminder/wrap` with `nonce: true`).

`parse` reads the configured style's keyless blocks and the keyed blocks, each only in the exact
shape its writer produces. A block authenticates only when its token verifies: this key (or an
older one of the host's) signed exactly these bytes, and, when a session is given, for that
session. The nonce is not a secret from the model (it can read and repeat it), so a copied nonce
on an altered or invented body is refused, with the reason; verification keeps no state.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import NamedTuple

from promptd.errors import NestedMarker
from promptd.reminders import keyed, markup
from promptd.reminders.keyed import escape_body
from promptd.reminders.kinds import BlockStyle, Refusal
from promptd.reminders.ledger import Trust
from promptd.reminders.sanitize import remembering, sanitize
from promptd.text import separate_halves

PUA_OPEN = markup.PUA_OPEN
PUA_CLOSE = markup.PUA_CLOSE
STYLES = tuple(BlockStyle)
TRIGGER_OPEN = markup.TRIGGER_OPEN
TRIGGER_CLOSE = markup.TRIGGER_CLOSE
TRIGGER_SEPARATOR = markup.BLANK_LINE
XML_CLOSE = markup.REMINDER_CLOSE
# What a nonce may look like: the runtime's is 32 hex digits; other writers' tokens are read too,
# so blocks from another process can be recognised (and not trusted).
NONCE_PATTERN = re.compile(r"[0-9A-Za-z_-]{1,128}")

# A PUA block: delimiter, token, newline. The body is found by the matching closing token.
_PUA_OPEN = re.compile(PUA_OPEN + r"([0-9A-Za-z_-]{1,128})\n")
# An XML open tag exactly as the writers produce it: `key` then `nonce`, one space before each.
# The key run is possessive, so a long unterminated key is read once.
_XML_OPEN = re.compile(re.escape(markup.REMINDER_OPEN) + r'(?: key="([A-Za-z0-9._-]++)")?(?: nonce="([0-9A-Za-z_-]{1,128})")?>')


class Block(NamedTuple):
    authenticated: bool
    key: str | None
    body: str
    display_trigger: str | None
    start: int
    end: int
    style: BlockStyle
    # Set when the block carries a nonce and is not authenticated; None otherwise.
    refusal: Refusal | None = None


def _unescape(text: str) -> str:
    # The inverse of keyed.escape_body: `&amp;` last, so `&amp;lt;` stays `&lt;`.
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


def trigger_markup(trigger: str) -> str:
    """The markup that carries a display trigger at the start of a reminder body."""
    return TRIGGER_OPEN + escape_body(sanitize(trigger).text) + TRIGGER_CLOSE


def repair(body: str, nonce: str) -> str:
    """`body` made safe to wrap. The trigger markup is promptd's own and is checked; the rest is
    content promptd sanitized piece by piece and joined, and joining can form what no piece held
    (`a <` + blank line + `/system-reminder>`), so it is sanitized again as joined text: repaired,
    never failed. Sanitizing is idempotent, so clean content comes through unchanged."""
    trigger = ""
    rest = body
    if body.startswith(TRIGGER_OPEN):
        close = body.find(TRIGGER_CLOSE)
        if close < 0:
            raise NestedMarker("display-trigger markup is not closed", where="trusted_wrapper")
        inner = body[len(TRIGGER_OPEN) : close]
        if "<" in inner or ">" in inner or sanitize(inner, nonce).neutralized:
            raise NestedMarker("display-trigger text is not sanitized and escaped", where="trusted_wrapper")
        trigger = body[: close + len(TRIGGER_CLOSE)]
        rest = body[len(trigger) :]
        if rest and not rest.startswith(TRIGGER_SEPARATOR):
            raise NestedMarker("display-trigger markup must be followed by a blank line", where="trusted_wrapper")
    return trigger + _sanitized_body(rest, nonce)


# An assembled body comes back turn after turn (the same static fragments, joined the same way):
# sanitized as joined text once per process. Bodies of a default budget's size only (6,000
# characters; 16 Ki leaves room), and a few of them, so the cache stays small.
CACHED_BODY_CHARS = 16 * 1024
_sanitized_body = remembering(CACHED_BODY_CHARS, 16)


def wrap_triggered(trigger: str, body: str, trust: Trust, style: BlockStyle = BlockStyle.PUA, session: str | None = None) -> str:
    """A trusted block whose body opens with a display trigger: the trigger's markup, a blank
    line, then `body` (the layout parse and strip read back)."""
    return wrap_trusted(trigger_markup(trigger) + TRIGGER_SEPARATOR + body, trust, style, session)


def wrap_trusted(body: str, trust: Trust, style: BlockStyle = BlockStyle.PUA, session: str | None = None) -> str:
    """Wraps content (plus optional trigger markup) in a keyless runtime block signed for
    `session` (None: a block of no session).

    The content is repaired as joined text first (see `repair`), so nothing a caller joined can
    close the block early or open a forged one inside it.
    """
    return seal(body, trust, style, session)[0]


def seal(body: str, trust: Trust, style: BlockStyle = BlockStyle.PUA, session: str | None = None) -> tuple[str, str]:
    """`wrap_trusted`, returning the block and the repaired body it wraps."""
    nonce = trust.nonce
    if not NONCE_PATTERN.fullmatch(nonce):
        raise ValueError("nonce must match [0-9A-Za-z_-]{1,128}")
    if style not in STYLES:
        raise ValueError(f"unknown reminder style {style!r}; expected one of {STYLES}")
    body = repair(body, nonce)

    def layout(token: str) -> str:
        if style == BlockStyle.PUA:
            return f"{PUA_OPEN}{token}\n{body}\n{token}{PUA_CLOSE}"
        return f'{markup.REMINDER_OPEN} nonce="{token}">\n{body}\n{XML_CLOSE}'

    return _signed(layout, trust, session), body


def _signed(layout: Callable[[str], str], trust: Trust, session: str | None) -> str:
    """The block `layout` writes around a token that signs it: laid out first with the unsigned
    prefix in the token's place, which is what the MAC covers and what verification rebuilds."""
    prefix = trust.signer.prefix(trust.nonce, session)
    return layout(trust.signer.token(layout(prefix), prefix))


def wrap_keyed(key: str, body: str, trust: Trust, session: str | None = None) -> str:
    """`reminder/wrap` with `nonce: true`: the keyed block with a nonce attribute, through the
    trusted path. The keyed convention's own rule refuses a body holding `<system-reminder` or
    `</system-reminder>` (nested_marker); what else the body holds is sanitized before it is
    wrapped, and the block is signed."""
    keyed.check_key(key)
    keyed.check_body(body)
    clean = sanitize(body, trust.nonce).text
    return _signed(lambda token: keyed.wrap(key, clean, token), trust, session)


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


def _verdict(token: str | None, text: str, trust: Trust, session: str | None) -> tuple[bool, Refusal | None]:
    """(authenticated, refusal) for a block carrying `token` whose exact text is `text`, checked
    in `session` (None: in no particular session)."""
    if token is None:
        return False, None
    refusal = trust.signer.verify(trust.nonce, token, text, session)
    return refusal is None, refusal


def _pua_blocks(text: str, trust: Trust, session: str | None) -> list[tuple[Block, bool]]:
    blocks: list[tuple[Block, bool]] = []
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
            authenticated, refusal = _verdict(token, text[m.start() : close + 1], trust, session)
            blocks.append((Block(authenticated, None, body, trigger, m.start(), close + 1, BlockStyle.PUA, refusal), True))
        pos = close + 1


def _xml_blocks(text: str, trust: Trust, keyless: bool, session: str | None) -> list[tuple[Block, bool]]:
    """Keyed blocks, and with `keyless` the keyless runtime blocks of the xml style."""
    opens = [m for m in _XML_OPEN.finditer(text) if m.group(1) is not None or (keyless and m.group(2) is not None)]
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
        key, token = m.group(1), m.group(2)
        raw = text[m.end() : close]
        # Both writers put the body on lines of its own.
        if len(raw) < 2 or raw[0] != "\n" or raw[-1] != "\n":
            continue
        raw = raw[1:-1]
        if key is not None:
            trigger, body = None, _unescape(raw)  # keyed bodies are escaped by their writer
        else:
            trigger, body = _split_trigger(raw)
        end = close + len(XML_CLOSE)
        authenticated, refusal = _verdict(token, text[m.start() : end], trust, session)
        blocks.append((Block(authenticated, key, body, trigger, m.start(), end, BlockStyle.XML, refusal), token is not None))
    return blocks


def parse_marked(text: str, trust: Trust, style: BlockStyle, session: str | None = None) -> list[tuple[Block, bool]]:
    """`parse`, with each block paired with whether it carries some process's nonce (every PUA
    block; XML blocks with a `nonce` attribute) as opposed to being a plain keyed block."""
    found = _xml_blocks(text, trust, style == BlockStyle.XML, session)
    if style == BlockStyle.PUA:
        found = sorted(_pua_blocks(text, trust, session) + found, key=lambda pair: pair[0].start)
    blocks: list[tuple[Block, bool]] = []
    for pair in found:
        if blocks and pair[0].start < blocks[-1][0].end:
            continue
        blocks.append(pair)
    return blocks


def parse(text: str, trust: Trust, style: BlockStyle, session: str | None = None) -> list[Block]:
    """Every reminder block in `text` that the configured `style` writes (plus keyed blocks), in
    order, each checked in `session` (None: a block of any session authenticates). Blocks never
    overlap: where two would, the one that starts first is kept."""
    return [block for block, _ in parse_marked(text, trust, style, session)]


def trigger_line(trigger: str) -> str:
    """How a display trigger is shown to a person in place of the hidden block."""
    return f"[{trigger}]"


def strip(text: str, trust: Trust, style: BlockStyle, session: str | None = None) -> str:
    """What a person is shown: `text` without the authenticated runtime blocks.

    Only authenticated blocks are hidden: blocks this process wrote, byte for byte. A
    block with a display trigger is replaced by the trigger in brackets; one without is removed
    together with the line breaks (at most two) that separate it from the text before it, or,
    when it starts the text, from the text after it.
    """
    pieces: list[str] = []
    last = 0
    trim_next = False
    for block in parse(text, trust, style, session):
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
    # Cutting blocks out must not bring two halves of a character together.
    return separate_halves("".join(pieces))


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
