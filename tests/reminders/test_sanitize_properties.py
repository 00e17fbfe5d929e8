"""Properties of the sanitizer that must hold for any input, found by search rather than by
example: nothing sanitized ever authenticates, strip never hides it, sanitizing is idempotent."""

from __future__ import annotations

import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.trust import make_trust

from promptd.reminders import keyed
from promptd.reminders.provenance import parse, strip, trigger_markup, wrap_trusted
from promptd.reminders.sanitize import nonce_copies, sanitize
from promptd.reminders.sanitizer import detect, tags
from promptd.reminders.values import sanitize_value
from promptd.text import non_ascii

NONCE = "5f0c2a9be31d4478a6c1e0f9b2d3c4a5"
OTHER_NONCE = "00000000000000000000000000000000"
TRUST = make_trust(NONCE)
OTHER = make_trust(OTHER_NONCE)
STYLES = ("pua", "xml")
# The RGI emoji tag sequences: the flags of England, Scotland and Wales.
RGI_FLAGS = ["\U0001f3f4" + "".join(chr(0xE0000 + ord(c)) for c in code) + "\U000e007f" for code in ("gbeng", "gbsct", "gbwls")]

# Any character at all: lone surrogates, private use, format and control characters included.
ANY_CHAR = st.characters(exclude_categories=())
ANY_TEXT = st.text(ANY_CHAR, max_size=200)

# Fragments that combine into near-misses, disguises and real blocks far more often than random
# characters would.
FRAGMENTS = [
    "<",
    "</",
    ">",
    "/",
    "&lt;",
    "&gt;",
    "&amp;",
    "&#60;",
    "&#x3c;",
    "&lt",
    "&",
    "#",
    "x3c",
    ";",
    "lt",
    "amp;",
    "%3C",
    "%25",
    "%26",
    "%",
    "3c",
    "\\u003c",
    "\\u03c1",
    "\\741",
    "%u03c4",
    "&ltri;",
    "\\",
    "\\\\",
    "\\/",
    "u003c",
    "\\x3c",
    "system",
    "System",
    "SYSTEM",
    "-",
    "_",
    ".",
    " ",
    "\t",
    "\n",
    "\n\n",
    "reminder",
    "display",
    "trigger",
    "sys",
    "tem",
    "rem",
    "inder",
    "dis",
    "play",
    "ѕ",
    "у",
    "е",
    "і",
    "＜",
    "ｓ",
    "〈",
    "‹",
    "\u200b",
    "\u200d",
    "\u202e",
    "\u00ad",
    "\U000e0041",
    "\U000e0073",
    "\ue203",
    "\ue204",
    "\ue200",
    # markup a renderer hides, operators applied to calls, letters and marks TR39 does not list
    "<b>",
    "</b>",
    "<b title='>'>",
    "<!---->",
    "<!--",
    "-->",
    "**",
    "*",
    "`",
    "~~",
    "<-",
    "<<",
    "(",
    "system_reminder(",
    "\u0288",
    "\u027e",
    "\u023f",
    "\u1d92",
    "\u02db",
    NONCE,
    NONCE[:12],
    NONCE[12:],
    NONCE.upper(),
    OTHER_NONCE,
    'nonce="',
    '"',
    'key="k"',
    "a",
    "日本",
    "👨\u200d👩",
    # An RGI emoji tag sequence (the flag of England) and the pieces of one.
    "\U0001f3f4\U000e0067\U000e0062\U000e0065\U000e006e\U000e0067\U000e007f",
    "\U0001f3f4",
    "\U000e0067\U000e0062",
    "\U000e007f",
    wrap_trusted("kept body", TRUST, "pua"),
    wrap_trusted("kept body", TRUST, "xml"),
    wrap_trusted(trigger_markup("Read memory") + "\n\nbody", TRUST, "pua"),
    wrap_trusted("old", OTHER, "pua"),
    keyed.wrap("session.cwd", "/tmp", NONCE),
    keyed.wrap("session.cwd", "/tmp"),
]
CRAFTED_TEXT = st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.text(ANY_CHAR, max_size=3)), max_size=40).map("".join)
TEXT = st.one_of(ANY_TEXT, CRAFTED_TEXT)

# What the candidate scan would look at if it skipped nothing: every bracket and every
# introducer. The fast pattern must find exactly the same forged markup.
EVERY_PLACE = re.compile(
    r"&(?:amp;)*|%(?:25)*|\\+|[" + re.escape(detect.BRACKETS + "".join(detect.INTRODUCERS)) + "\ue203\ue204]",
    re.IGNORECASE,
)

SETTINGS = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(TEXT)
def test_sanitized_text_never_parses_to_an_authenticated_block(text):
    cleaned = sanitize(text, NONCE).text
    for style in STYLES:
        assert not any(block.authenticated for block in parse(cleaned, TRUST, style))


@SETTINGS
@given(TEXT)
def test_strip_hides_nothing_of_sanitized_text(text):
    cleaned = sanitize(text, NONCE).text
    for style in STYLES:
        assert strip(cleaned, TRUST, style) == cleaned


@SETTINGS
@given(TEXT)
def test_sanitizing_is_idempotent_and_counts_nothing_the_second_time(text):
    once = sanitize(text, NONCE)
    twice = sanitize(once.text, NONCE)
    assert twice.text == once.text
    assert twice.neutralized == 0


@SETTINGS
@given(TEXT)
def test_sanitized_text_holds_no_delimiter_no_nonce_and_no_tag_character_outside_an_rgi_flag(text):
    cleaned = sanitize(text, NONCE).text
    assert "\ue203" not in cleaned and "\ue204" not in cleaned
    assert NONCE not in cleaned.lower()
    without_flags = cleaned
    for flag in RGI_FLAGS:
        without_flags = without_flags.replace(flag, "")
    assert not any(0xE0000 <= ord(c) <= 0xE007F for c in without_flags)


@SETTINGS
@given(TEXT)
def test_the_fast_candidate_scan_finds_exactly_what_a_full_scan_finds(text):
    assert detect.scan(text) == detect.scan(text, EVERY_PLACE)


@SETTINGS
@given(TEXT)
def test_text_without_forged_markup_comes_back_unchanged(text):
    without_tags = "".join(c for c in text if not 0xE0000 <= ord(c) <= 0xE007F)
    cleaned = sanitize(without_tags)
    if cleaned.neutralized == 0:
        assert cleaned.text == without_tags


@SETTINGS
@given(ANY_TEXT, ANY_TEXT, st.sampled_from(["pua", "xml"]))
def test_wrap_then_parse_then_strip_round_trips_any_sanitized_body(body, trigger, style):
    clean_body = sanitize(body, NONCE).text
    clean_trigger = sanitize(trigger).text
    wrapped = wrap_trusted(trigger_markup(trigger) + "\n\n" + clean_body, TRUST, style)
    blocks = parse("before\n\n" + wrapped, TRUST, style)
    assert len(blocks) == 1
    block = blocks[0]
    assert block.authenticated and block.key is None and block.style == style
    assert block.body == clean_body
    assert block.display_trigger == clean_trigger
    assert strip("before\n\n" + wrapped, TRUST, style) == f"before\n\n[{clean_trigger}]"
    # The same block is never authenticated by another process.
    assert not parse(wrapped, OTHER, style)[0].authenticated


@SETTINGS
@given(ANY_TEXT, st.sampled_from(["pua", "xml"]))
def test_a_block_without_trigger_is_stripped_with_its_separator(body, style):
    wrapped = wrap_trusted(sanitize(body, NONCE).text, TRUST, style)
    assert strip("question?\n\n" + wrapped, TRUST, style) == "question?"
    assert strip(wrapped + "\n\nafter", TRUST, style) == "after"


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | TEXT,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(TEXT, children, max_size=4),
    max_leaves=20,
)


def _strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)
    elif isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from _strings(item)


@SETTINGS
@given(JSON)
def test_every_string_and_key_of_a_structured_value_comes_out_sanitized(value):
    cleaned, count = sanitize_value(value, NONCE)
    for text in _strings(cleaned):
        assert sanitize(text, NONCE).neutralized == 0
        assert not any(block.authenticated for style in STYLES for block in parse(text, TRUST, style))
    again, second = sanitize_value(cleaned, NONCE)
    assert again == cleaned and second == 0


@SETTINGS
@given(st.dictionaries(TEXT, st.integers(), max_size=8))
def test_keys_that_collide_after_sanitizing_are_all_kept(mapping):
    cleaned, _ = sanitize_value(mapping, NONCE)
    assert len(cleaned) == len(mapping)
    assert sorted(cleaned.values()) == sorted(mapping.values())


@SETTINGS
@given(TEXT)
def test_the_counted_check_for_smuggled_tag_runs_agrees_with_the_search(text):
    assert tags.may_hold_smuggled_runs(text, non_ascii(text).chars) == any(True for _ in tags.smuggled_runs(text))


@SETTINGS
@given(TEXT)
def test_the_non_ascii_characters_are_read_in_order_and_surrogates_noticed(text):
    found = non_ascii(text)
    assert found.chars == "".join(c for c in text if not c.isascii())
    assert found.surrogates == any(0xD800 <= ord(c) <= 0xDFFF for c in text)


@SETTINGS
@given(TEXT, st.sampled_from([NONCE, NONCE.upper(), "0123456789abcdef", "kelvin-and-long-s"]))
def test_nonce_copies_are_found_as_a_case_insensitive_search_finds_them(text, nonce):
    for joined in (text + nonce.upper() + text, text + "\u212a" + nonce + text):
        expected = [m.start() for m in re.finditer(re.escape(nonce), joined, re.IGNORECASE)]
        assert nonce_copies(joined, nonce) == expected


def _look_alikes() -> list[str]:
    """Characters the bracket's look-ahead judges itself: each letter of a name in both cases, its
    judged look-alikes, and what the reader passes over between letters."""
    skipped, single = detect._DERIVED.judged_skipped, detect._DERIVED.judged_single
    letters = set("systemreminderdisplaytrigger")
    alikes = [c for c in single if not letters.isdisjoint(detect.fold_all(c))]
    return sorted(letters | {c.upper() for c in letters} | set(alikes) | set(skipped[::7]) | {"m", "rn", "cl", "/", "<", "\uff1c"})


def _writings() -> dict[str, list[str]]:
    """For each character of a tag name, the characters that may stand for it."""
    skipped, single = detect._DERIVED.judged_skipped, detect._DERIVED.judged_single
    out: dict[str, list[str]] = {}
    for ch in set("".join(detect.TAG_NAMES)):
        if ch == "-":
            out[ch] = ["-", "_", " ", ".", *skipped[::9]]
            continue
        out[ch] = [ch, ch.upper(), *(c for c in single if ch in detect.fold_all(c))]
    out["m"].append("rn")
    out["d"].append("cl")
    return out


WRITINGS = _writings()
LOOK_ALIKES = st.sampled_from(_look_alikes())


@st.composite
def written_names(draw):
    """A tag name written with look-alikes, separators and invisibles, whole or cut short, with
    anything after it: the look-ahead decides these itself, so it must let through every place
    the reader accepts."""
    name = draw(st.sampled_from(detect.TAG_NAMES))
    out = ["<", draw(st.sampled_from(["", "/", " /", "\u200d"]))]
    for ch in name:
        out.append(draw(st.sampled_from(WRITINGS[ch])))
        if draw(st.integers(0, 5)) == 0:
            out.append(draw(LOOK_ALIKES))
    cut = draw(st.integers(0, len(out)))
    return "".join(out[: cut if draw(st.booleans()) else len(out)]) + draw(st.sampled_from(["", ">", "<", " x", "\uff1c", "<b>", "&#115;"]))


NAME_TEXT = written_names()
NAMES_IN_A_ROW = st.lists(st.one_of(NAME_TEXT, st.sampled_from(FRAGMENTS)), max_size=6).map("".join)


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(NAME_TEXT, NAMES_IN_A_ROW))
def test_the_bracket_look_ahead_lets_through_every_name_the_reader_reads(text):
    assert detect.scan(text) == detect.scan(text, EVERY_PLACE)


@SETTINGS
@given(st.sampled_from(sorted(detect._COMPLETE)), st.lists(st.sampled_from(_look_alikes()), max_size=3))
def test_every_spelling_is_found_whatever_judged_characters_follow(name, after):
    # Each folded spelling written back in plain letters ("rn" as written), then anything.
    text = "<" + name + "".join(after)
    assert detect.scan(text) == detect.scan(text, EVERY_PLACE) != []
