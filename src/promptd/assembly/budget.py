"""Deduplication and the character budget (docs/reminders.md, assembly rules 4 and 5): pure
functions over sanitized fragments.

The budget counts the whole assembled body: display-trigger markup, fragments and the separators
between them; the outer wrapper is not counted. Fragments are taken greedily in order: one that does
not fit is dropped and later ones that still fit are kept. Only when nothing has been delivered yet
and the first fragment alone is over the budget is it truncated (the caller spills its full text).
A fragment the caller could not truncate (not even its marker fits) is planned again as dropped,
so that it frees the room it was given for the fragments after it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from promptd.assembly.kinds import FragmentStatus
from promptd.assembly.model import Fragment
from promptd.reminders import markup

SEPARATOR = markup.BLANK_LINE


class Placed(NamedTuple):
    fragment: Fragment
    status: FragmentStatus


class Plan(NamedTuple):
    placed: list[Placed]
    trigger: str | None  # the trigger markup kept, if any
    # Characters available to the fragment to truncate (marker included), if there is one.
    truncate_room: int | None


DELIVERED, TRUNCATED, DROPPED, DUPLICATE = FragmentStatus.DELIVERED, FragmentStatus.TRUNCATED, FragmentStatus.DROPPED, FragmentStatus.DUPLICATE


def plan(fragments: list[Fragment], trigger_markup: str | None, budget: int, unfit: frozenset[int] = frozenset()) -> Plan:
    """`unfit`: indexes of fragments that could not be truncated; they are dropped and cost nothing.
    An exact repeat of an earlier fragment's text is a duplicate and costs nothing either."""
    used = 0
    trigger = None
    if trigger_markup and len(trigger_markup) < budget:
        trigger = trigger_markup
        used = len(trigger_markup)
    separator = len(SEPARATOR)
    seen: set[str] = set()
    out: list[Placed] = []
    delivered_any = False
    truncate_room = None
    for index, fragment in enumerate(fragments):
        text = fragment.text
        if text in seen:
            out.append(Placed(fragment, DUPLICATE))
            continue
        seen.add(text)
        if index in unfit:
            out.append(Placed(fragment, DROPPED))
            continue
        cost = len(text) + (separator if used else 0)
        if used + cost <= budget:
            used += cost
            delivered_any = True
            out.append(Placed(fragment, DELIVERED))
        elif not delivered_any and truncate_room is None:
            truncate_room = budget - used - (separator if used else 0)
            used = budget
            out.append(Placed(fragment, TRUNCATED))
        else:
            out.append(Placed(fragment, DROPPED))
    if not delivered_any and truncate_room is None:
        trigger = None  # nothing to explain: no block at all
    return Plan(out, trigger, truncate_room)


def truncate(text: str, room: int, marker_for: Callable[[int, int], str], clean: Callable[[str], str] = lambda t: t) -> str | None:
    """The longest prefix of `text` that fits in `room` together with its marker, or None when not
    even the marker fits. `clean` re-sanitizes the cut head: a cut can end mid-escape and turn it
    into something new (`&#xE2030;` cut to `&#xE203`), and cleaning may lengthen the head, so the
    cut is shortened until head and marker fit."""
    total = len(text)
    shown = room - len(marker_for(total, total))
    while shown > 0:
        head = clean(text[:shown])
        over = len(head) + len(marker_for(shown, total)) - room
        if over <= 0:
            return head + marker_for(shown, total)
        shown -= over
    return None


def join_body(trigger: str | None, texts: list[str]) -> str:
    parts = ([trigger] if trigger else []) + texts
    return SEPARATOR.join(parts)
