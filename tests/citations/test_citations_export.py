"""citation/export and citation/strip in-process."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from promptd.citations.export import Source, export, strip

OPEN, CLOSE, SEP, OBJ = "\ue200", "\ue201", "\ue202", "\ufffc"
REMINDER_OPEN, REMINDER_CLOSE = "\ue203", "\ue204"
CITATION_CHARS = re.compile("[\ue200-\ue202\ufffc]")

SOURCES = {
    "a": Source(url="https://www.example.com/a", title="Alpha"),
    "b": Source(url="file:///D:/work/My%20Notes.md"),
    "c": Source(title="Gamma, untitled link"),
}


def test_citations_are_numbered_by_first_appearance_and_repeats_keep_their_number():
    text = f"One [[cite:b]]. Two {OPEN}cite{SEP}a{CLOSE}. Three [[cite:b, a]]. Four {OBJ}cite{OBJ}b{OBJ}."
    result = export(text, SOURCES)
    assert result.text == ("One [1]. Two [2]. Three [1, 2]. Four [1].\n\nSources:\n[1] My Notes.md <file:///D:/work/My%20Notes.md>\n[2] Alpha <https://www.example.com/a>")
    assert [(r.number, r.ids) for r in result.references] == [(1, ("b",)), (2, ("a",))]


def test_ids_that_point_at_the_same_url_share_a_number():
    sources = {"x": Source(url="https://a.org/p", title="Page"), "y": Source(url="https://a.org/p", title="Same page")}
    result = export("[[cite:x]] and [[cite:y]]", sources)
    assert result.text.startswith("[1] and [1]\n\nSources:\n[1] Page <https://a.org/p>")
    assert result.references[0].ids == ("x", "y")


def test_an_unknown_id_is_numbered_and_listed_by_its_id():
    result = export("See [[cite:zz]].", {})
    assert result.text == "See [1].\n\nSources:\n[1] zz"


def test_a_source_without_url_is_listed_by_title_alone():
    assert export("[[cite:c]]", SOURCES).text.endswith("[1] Gamma, untitled link")


def test_titles_are_kept_on_one_line():
    result = export("[[cite:t]]", {"t": Source(url="https://a.org", title="Line one\nline two\u2028")})
    assert result.text.endswith("[1] Line one line two <https://a.org>")


def test_export_removes_every_citation_private_use_character_and_keeps_reminder_delimiters():
    text = f"x{CLOSE} {OPEN}img{SEP}p{CLOSE} {OBJ} {REMINDER_OPEN}r{REMINDER_CLOSE} [[cite:a]] [[cite:"
    result = export(text, SOURCES)
    assert not CITATION_CHARS.search(result.text)
    assert REMINDER_OPEN in result.text and REMINDER_CLOSE in result.text
    assert "[[cite:" in result.text  # an unfinished marker at the end is text in a complete message


def test_a_text_without_citations_gets_no_sources_list():
    assert export("Nothing cited [[note:x]] here.", SOURCES).text == "Nothing cited [[note:x]] here."


def test_a_text_of_citations_only_is_the_references_and_the_list():
    assert export("[[cite:a]]", SOURCES).text == "[1]\n\nSources:\n[1] Alpha <https://www.example.com/a>"


def test_strip_removes_markers_and_the_blank_left_before_punctuation():
    text = f"See the docs [[cite:a]]. And this {OPEN}cite{SEP}b{CLOSE} too{OBJ}cite{OBJ}c{OBJ}, fine [[cite:d]] [[cite:e]]!"
    result = strip(text)
    assert result.text == "See the docs. And this too, fine!"
    assert result.removed == 5


def test_strip_keeps_visible_ascii_markers_of_other_types_and_drops_invisible_ones():
    text = f"Link [[Category:Docs]] and {OPEN}image{SEP}p1{CLOSE} here"
    result = strip(text)
    assert result.text == "Link [[Category:Docs]] and here"
    assert result.removed == 1


def test_strip_keeps_reminder_delimiters_and_removes_stray_citation_characters():
    text = f"{REMINDER_OPEN}r{REMINDER_CLOSE} a{CLOSE}b{SEP}c{OBJ}d{OPEN}"
    assert strip(text).text == f"{REMINDER_OPEN}r{REMINDER_CLOSE} abcd"


def test_strip_leaves_a_text_without_markers_unchanged():
    assert strip("plain [text](link) ] [ done").text == "plain [text](link) ] [ done"


TEXTS = st.lists(
    st.sampled_from(["[[cite:a]]", "[[cite:b,c]]", OPEN + "cite" + SEP + "a" + CLOSE, OBJ + "cite" + OBJ + "b" + OBJ, "[[", "]]", " ", ".", "word", OPEN, CLOSE, SEP, OBJ, REMINDER_OPEN, "\n"]),
    max_size=30,
).map("".join)


@settings(max_examples=300, deadline=None)
@given(st.one_of(TEXTS, st.text(max_size=60)))
def test_export_and_strip_never_raise_and_leave_no_citation_characters(text):
    exported = export(text, SOURCES)
    stripped = strip(text)
    assert not CITATION_CHARS.search(exported.text)
    assert not CITATION_CHARS.search(stripped.text)
    assert text.count(REMINDER_OPEN) == stripped.text.count(REMINDER_OPEN) == exported.text.count(REMINDER_OPEN)
    numbers = [r.number for r in exported.references]
    assert numbers == list(range(1, len(numbers) + 1))
