"""Stored history made safe to reuse (stored prompts are sanitized on reuse).

Domain layer: must not import promptd.rpc or promptd.methods.

Messages come as the SDKs serialize them; promptd.reminders.shapes says, per shape, whose text
each field holds and which fields form a message's stream. Rules, by whose text it is:
- the user's own text (a user message's string content or plain text parts, and nothing
  inside a tool result, an attachment or any nested value) may keep one current block as it
  is, only in the shape `turn/compose` writes: the block ends the message's stream and is
  either all of its part or follows already-sanitized user text and a blank line; and the
  block authenticates (this process wrote exactly those bytes, promptd.reminders.ledger).
  Anything else that carries the current nonce is untrusted text and is sanitized. In the
  user's own text, blocks carrying another nonce come from an earlier process: they are
  dropped, and where one carried a display trigger a one-line trace takes its place so a
  person can still see that something happened.
- everything else (a tool's, the model's, the system's text, and every field the tables do not
  name): the full sanitizer, since a model can echo a block it has seen and a tool can return
  one; except a system message whose stream is exactly a system prompt this process rendered,
  which comes back unchanged.
- signed content in the model's messages (thinking with a signature, redacted thinking, Gemini
  parts with a thought signature, Responses reasoning with encrypted content, AI SDK parts whose
  provider metadata carries a signature) is read and reported, never edited: the provider checks
  it and refuses a conversation in which it changed. Only what the signature covers (Part.covers:
  the model's text, reasoning or call input, and the signature) is left so; a tool's output or
  error text in a signed part is sanitized in full.
Every part that carries text, whatever its type, is one stream per message, so a tag split
across parts is renamed at its name, in the part where the name begins (or, when that part is
signed, in the first part around it that may be edited). Every change is reported at a JSON pointer into the given messages.
The result is a fixed point: sanitizing it again changes nothing.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import NamedTuple, cast

from promptd.reminders import shapes
from promptd.reminders.kinds import BlockStyle, ChangeKind, MessageShape, Refusal
from promptd.reminders.ledger import Kind, Trust
from promptd.reminders.provenance import Block, parse_marked
from promptd.reminders.sanitize import sanitize, sanitize_stream
from promptd.reminders.shapes import Author, Part, Path
from promptd.reminders.values import ROOT, Change, Pointer, Walk
from promptd.text import one_line

# A trace is one line in a transcript; longer triggers are cut.
TRACE_MAX_CHARS = 200
# What `turn/compose` puts between the user's text and the reminder.
COMPOSE_SEPARATOR = "\n\n"


class History(NamedTuple):
    messages: list[object]
    # Where each change was made (and what was found but left in place), as JSON pointers.
    changes: list[Change]
    neutralized: int
    dropped: int


def trace(trigger: str) -> str:
    """The visible line left where a stale block with a display trigger was dropped."""
    return f"[reminder from an earlier session: {one_line(trigger, TRACE_MAX_CHARS)}]"


def composed(text: str, block: Block, nonce: str) -> bool:
    """Whether `block`, one of `text`'s blocks, sits where `turn/compose` puts its reminder and
    authenticates: alone, or as the final suffix after sanitized user text and a blank line."""
    if not block.authenticated or block.end != len(text):
        return False
    if block.start:
        before = text[: block.start]
        if not before.endswith(COMPOSE_SEPARATOR):
            return False
        user = before[: -len(COMPOSE_SEPARATOR)]
        # compose skips the separator when the user's text is empty; and the user's text is
        # sanitized, so sanitizing it again changes nothing. This also rules out any other block
        # before this one: every block holds a delimiter, a tag or the nonce.
        if not user or sanitize(user, nonce).text != user:
            return False
    return True


@dataclass
class _Own:
    """One piece of the user's own text, prepared for sanitizing as part of a stream."""

    text: str  # what goes into the stream
    kept_block: str  # a compose block kept after it ("" when none); it ends the stream
    dropped: int


def _own_text(text: str, trust: Trust, style: BlockStyle, may_keep: bool, session: str | None) -> _Own:
    marked = parse_marked(text, trust, style, session)
    if may_keep and marked and composed(text, marked[-1][0], trust.nonce):
        block = marked[-1][0]
        return _Own(text[: block.start], text[block.start :], 0)
    # Stale blocks are dropped first and the rest is sanitized as one string, so text on both
    # sides of a dropped block cannot join into a tag.
    pieces: list[str] = []
    dropped = 0
    last = 0
    for block, carries_nonce in marked:
        if not carries_nonce or block.refusal is not Refusal.OTHER_PROCESS:
            # A plain block, or a current-nonce block not in compose's shape, is ordinary
            # untrusted text: sanitized with the text around it.
            continue
        pieces.append(text[last : block.start])
        if block.display_trigger is not None:
            pieces.append(trace(block.display_trigger))
        dropped += 1
        last = block.end
    pieces.append(text[last:])
    return _Own("".join(pieces), "", dropped)


class _Slot(NamedTuple):
    """One text of a message's stream: in field `field`, part `number` (None: the field itself),
    at `path` within the part."""

    field: str
    number: int | None
    path: Path
    text: str
    own: bool  # the user's own text
    locked: bool  # signed: read, never edited


class _Reader:
    """One message's stream, read by its shape."""

    def __init__(self, message: dict[str, object], reading: shapes.Reading) -> None:
        self.reading = reading
        author = reading.author
        self.locked = author is Author.MODEL and shapes.signed(message, reading.signature)
        self.slots: list[_Slot] = []
        # Parts read with a rule: (field, index) -> (slot number or -1, the rule when the part
        # is signed, else None).
        self.parts: dict[tuple[str, int | None], tuple[int, Part | None]] = {}
        for field in reading.stream:
            value = message.get(field.name)
            if isinstance(value, str):
                self.parts[(field.name, None)] = (len(self.slots), None)
                self.slots.append(_Slot(field.name, None, (), value, author is Author.USER and field.plain, self.locked))
            elif isinstance(value, list):
                for index, item in enumerate(value):
                    self._part(field, index, item)
            elif isinstance(value, dict):
                self._part(field, None, value)

    def _part(self, field: shapes.Field, index: int | None, item: object) -> None:
        author = self.reading.author
        own_field = author is Author.USER and field.plain
        if isinstance(item, str):
            self.parts[(field.name, index)] = (len(self.slots), None)
            self.slots.append(_Slot(field.name, index, (), item, own_field, self.locked))
            return
        if not isinstance(item, dict):
            return
        rule: Part = self.reading.shape.part(item)
        signed = not self.locked and author is Author.MODEL and (rule.always_signed or shapes.signed(item, rule.signature))
        text = shapes.at_path(item, rule.text) if rule.text else None
        if isinstance(text, str) and rule.text:
            self.parts[(field.name, index)] = (len(self.slots), rule if signed else None)
            own = own_field and rule.plain and rule.author is None
            # Only a text the signature covers is left in place.
            locked = self.locked or (signed and rule.text[0] in rule.covers)
            self.slots.append(_Slot(field.name, index, rule.text, text, own, locked))
        elif signed:
            self.parts[(field.name, index)] = (-1, rule)


def _place(at: Pointer, slot: _Slot) -> Pointer:
    place = at.child(slot.field)
    if slot.number is not None:
        place = place.child(slot.number)
    for key in slot.path:
        place = place.child(key)
    return place


def _stream(reader: _Reader, at: Pointer, walk: Walk, trust: Trust, style: BlockStyle, session: str | None) -> tuple[list[str], int]:
    """The message's stream sanitized: (texts, dropped)."""
    slots = reader.slots
    texts = [slot.text for slot in slots]
    if not slots:
        return texts, 0
    if reader.reading.author is Author.SYSTEM and trust.ledger.holds("".join(texts), Kind.PROMPT):
        return texts, 0
    places = [_place(at, slot) for slot in slots]
    kept = [""] * len(slots)
    dropped = 0
    for number, slot in enumerate(slots):
        if not slot.own:
            continue
        # Only the stream's last text may keep a compose block: a reader joins the parts, and
        # the block must end the joined text.
        own = _own_text(slot.text, trust, style, number == len(slots) - 1, session)
        texts[number], kept[number] = own.text, own.kept_block
        for _ in range(own.dropped):
            walk.record(places[number], ChangeKind.STALE_BLOCK, True)
        dropped += own.dropped
    stream = sanitize_stream(texts, trust.nonce, [slot.locked for slot in slots])
    walk.record_stream(stream.findings, places)
    return [text + block for text, block in zip(stream.texts, kept, strict=True)], dropped


def sanitize_message(message: object, at: Pointer, walk: Walk, trust: Trust, style: BlockStyle, shape: MessageShape | None = None, session: str | None = None) -> tuple[object, int]:
    """One stored message, in any SDK's shape (or the pinned one): (message, dropped). What was
    found is recorded in `walk`, at pointers under `at`."""
    reading = shapes.read(message, shape)
    message = cast(dict[str, object], message)  # read refuses anything else
    reader = _Reader(message, reading)
    texts, dropped = _stream(reader, at, walk, trust, style, session)
    given: dict[str, object] = {}
    for field in reading.stream:
        if field.name not in message:
            continue
        value = message[field.name]
        place = at.child(field.name)
        if isinstance(value, str):
            given[field.name] = texts[reader.parts[(field.name, None)][0]]
        elif isinstance(value, list):
            given[field.name] = [_item(reader, texts, field.name, index, item, place.child(index), walk) for index, item in enumerate(value)]
        elif isinstance(value, dict):
            given[field.name] = _item(reader, texts, field.name, None, value, place, walk)
    return walk.object(message, at, 0, reader.locked, given), dropped


def _item(reader: _Reader, texts: list[str], field: str, index: int | None, item: object, at: Pointer, walk: Walk) -> object:
    # A message's fields are one level below it, their parts two.
    depth = 2 if index is not None else 1
    read = reader.parts.get((field, index))
    if read is None:
        return walk.value(item, at, depth, locked=reader.locked)
    number, signed = read
    slot = reader.slots[number] if number >= 0 else None
    if slot is not None and not slot.path:
        return texts[number]
    part = cast(dict[str, object], item)
    if signed is not None:
        locks = [(key,) for key in signed.covers] + list(signed.signature)
        return _signed_part(walk, part, at, depth, locks, slot.path if slot else (), texts[number] if slot else "")
    # A part read for its text (number >= 0 here).
    return walk.part(part, at, depth, cast(_Slot, slot).path, texts[number], reader.locked)


def _signed_part(walk: Walk, item: dict[str, object], at: Pointer, depth: int, locks: list[Path], text_path: Path, text: str) -> dict[str, object]:
    """A signed part: what `locks` lead to (the signature and what it covers) read and reported,
    kept as it is; `text` (already sanitized with the stream) put at `text_path`; every other
    field sanitized, since a signature vouches only for what it covers."""
    given: dict[str, object] = {}
    for key, inner in item.items():
        rest = [lock[1:] for lock in locks if lock and lock[0] in (key, shapes.ANY)]
        if text_path and key == text_path[0]:
            given[key] = text if len(text_path) == 1 else _signed_part(walk, cast(dict[str, object], inner), at.child(key), depth + 1, rest, text_path[1:], text)
        elif any(not lock for lock in rest):
            given[key] = walk.value(inner, at.child(key), depth + 1, locked=True)
        elif rest and isinstance(inner, dict):
            given[key] = _signed_part(walk, inner, at.child(key), depth + 1, rest, (), "")
    return walk.object(item, at, depth, False, given)


def sanitize_history(messages: Iterable[object], trust: Trust, style: BlockStyle, shape: MessageShape | None = None, session: str | None = None) -> History:
    """The stored conversation made safe to send again. With `session`, a compose block is kept
    only when it was written for that session: one written for another is untrusted text."""
    walk = Walk(trust.nonce)
    out: list[object] = []
    dropped = 0
    for index, message in enumerate(messages):
        cleaned, gone = sanitize_message(message, ROOT.child(index), walk, trust, style, shape, session)
        out.append(cleaned)
        dropped += gone
    return History(out, walk.changes(), walk.neutralized, dropped)
