"""citation/parse in-process: every marker form, malformed input, streaming, properties, speed."""

from __future__ import annotations

import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from promptd.citations.markers import MAX_MARKER_CHARS, MarkerForm, SegmentType, parse

OPEN, CLOSE, SEP, OBJ = "\ue200", "\ue201", "\ue202", "\ufffc"
REMINDER_OPEN, REMINDER_CLOSE = "\ue203", "\ue204"


def pua(marker_type: str, payload: str) -> str:
    return f"{OPEN}{marker_type}{SEP}{payload}{CLOSE}"


def obj(marker_type: str, payload: str) -> str:
    return f"{OBJ}{marker_type}{OBJ}{payload}{OBJ}"


def only_marker(text: str):
    parsed = parse(text, final=True)
    assert len(parsed.segments) == 1, parsed
    return parsed.segments[0]


def shown(segments) -> list[tuple]:
    """What a host shows: adjacent text merged, offsets left out (they are per chunk)."""
    out: list[tuple] = []
    for s in segments:
        if s.type is SegmentType.TEXT and out and out[-1][0] is SegmentType.TEXT:
            out[-1] = (SegmentType.TEXT, out[-1][1] + s.text)
        elif s.type is SegmentType.TEXT:
            out.append((SegmentType.TEXT, s.text))
        else:
            out.append((s.type, s.text, s.ids, s.form, s.marker_type))
    return out


def parse_in_chunks(chunks: list[str], final_last: bool) -> tuple[list[tuple], str | None]:
    segments = []
    carried = ""
    pending = None
    for index, chunk in enumerate(chunks):
        parsed = parse(carried + chunk, final=final_last and index == len(chunks) - 1)
        segments.extend(parsed.segments)
        pending = parsed.pending
        carried = pending or ""
    return shown(segments), pending


# -- the three forms ----------------------------------------------------------------------------


def test_the_pua_form_is_a_citation_with_its_exact_span():
    text = "Read it " + pua("cite", "t0_src_1") + " today."
    parsed = parse(text)
    assert parsed.pending is None
    kinds = [s.type for s in parsed.segments]
    assert kinds == [SegmentType.TEXT, SegmentType.CITATION, SegmentType.TEXT]
    cite = parsed.segments[1]
    assert cite.ids == ("t0_src_1",)
    assert cite.form is MarkerForm.PUA
    assert cite.marker_type == "cite"
    assert text[cite.start : cite.end] == cite.text == pua("cite", "t0_src_1")


def test_the_ascii_form_is_a_citation():
    cite = only_marker("[[cite:t0_src_1]]")
    assert (cite.type, cite.ids, cite.form) == (SegmentType.CITATION, ("t0_src_1",), MarkerForm.ASCII)


def test_the_ascii_form_tolerates_spaces_around_type_and_ids():
    cite = only_marker("[[ cite : t0_src_1 , t0_src_2 ]]")
    assert cite.type is SegmentType.CITATION
    assert cite.ids == ("t0_src_1", "t0_src_2")


def test_the_object_form_is_a_citation():
    cite = only_marker(obj("cite", "t0_src_1"))
    assert (cite.type, cite.ids, cite.form) == (SegmentType.CITATION, ("t0_src_1",), MarkerForm.OBJECT)


def test_the_type_keyword_is_case_insensitive():
    assert only_marker("[[CITE:a]]").type is SegmentType.CITATION
    assert only_marker(pua("Cite", "a")).marker_type == "cite"


@pytest.mark.parametrize(
    "text",
    [
        "[[cite:a,b;c d]]",
        "[[cite:a, b;  c\td]]",
        pua("cite", "a,b;c d"),
        pua("cite", f"a{SEP}b{SEP}c{SEP}d"),
        obj("cite", "a,b;c,d"),
        obj("cite", f"a{OBJ}b, c{OBJ}d"),
    ],
)
def test_several_ids_are_split_on_every_accepted_separator(text):
    assert only_marker(text).ids == ("a", "b", "c", "d")


def test_a_repeated_id_is_reported_once_in_order_of_first_appearance():
    assert only_marker("[[cite:b,a,b,a]]").ids == ("b", "a")


@pytest.mark.parametrize("text", ["[[image:pic_1]]", pua("filecite", "f1"), obj("note", "n1")])
def test_other_types_are_marker_segments_not_citations(text):
    segment = only_marker(text)
    assert segment.type is SegmentType.MARKER
    assert segment.marker_type != "cite"
    assert segment.text == text


def test_every_form_mixed_in_one_text_keeps_its_order_and_form():
    text = f"A {pua('cite', 'p1')} B [[cite:a1, a2]] C {obj('cite', 'o1')} D [[image:i1]] E"
    parsed = parse(text, final=True)
    markers = [(s.type, s.form, s.ids) for s in parsed.segments if s.type is not SegmentType.TEXT]
    assert markers == [
        (SegmentType.CITATION, MarkerForm.PUA, ("p1",)),
        (SegmentType.CITATION, MarkerForm.ASCII, ("a1", "a2")),
        (SegmentType.CITATION, MarkerForm.OBJECT, ("o1",)),
        (SegmentType.MARKER, MarkerForm.ASCII, ("i1",)),
    ]
    assert "".join(s.text for s in parsed.segments) == text


def test_adjacent_object_markers_stay_two_markers():
    parsed = parse(obj("cite", "a") + obj("cite", "b") + ".", final=True)
    assert [s.ids for s in parsed.segments if s.type is SegmentType.CITATION] == [("a",), ("b",)]


def test_prose_between_object_markers_is_not_swallowed_as_ids():
    parsed = parse(obj("cite", "a") + " and " + obj("cite", "b"), final=True)
    assert [s.ids for s in parsed.segments if s.type is SegmentType.CITATION] == [("a",), ("b",)]
    assert parsed.segments[1].text == " and "


# -- malformed input degrades to text -----------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "[[cite:]]",
        "[[cite: , ; ]]",
        "[[:a]]",
        "[[1cite:a]]",
        "[cite:a]",
        "[[cite a]]",
        "[[cite:a]",
        "[[cite:a\nb]]",
        "[[cite:a]b]]",
        OPEN + "cite" + CLOSE,
        OPEN + "cite" + SEP + CLOSE,
        OPEN + "cite" + SEP + "a\nb" + CLOSE,
        OBJ + "cite" + OBJ + OBJ,
        OBJ + " cite" + OBJ + "a" + OBJ,
        OBJ + "cite" + OBJ + "a b" + OBJ,
        CLOSE + "cite" + SEP + "a" + OPEN,
        "[[" + "c" * 40 + ":a]]",
    ],
)
def test_a_malformed_marker_is_plain_text(text):
    parsed = parse(text, final=True)
    assert [s.type for s in parsed.segments] == [SegmentType.TEXT]
    assert parsed.segments[0].text == text


def test_a_marker_over_the_length_cap_is_plain_text():
    ids = ",".join(f"id{n}" for n in range(MAX_MARKER_CHARS))
    text = f"[[cite:{ids}]]"
    assert [s.type for s in parse(text).segments] == [SegmentType.TEXT]
    assert parse(text).pending is None


def test_interleaved_markers_of_two_forms_degrade_to_text():
    text = OPEN + "cite" + SEP + "a [[cite:b" + CLOSE + "]]"
    parsed = parse(text, final=True)
    assert all(s.type is SegmentType.TEXT for s in parsed.segments)


def test_a_marker_nested_in_a_broken_one_is_still_found():
    text = "[[cite:a [[cite:b]]"
    parsed = parse(text, final=True)
    assert [s.ids for s in parsed.segments if s.type is SegmentType.CITATION] == [("b",)]


def test_reminder_delimiters_pass_through_as_text():
    text = f"{REMINDER_OPEN}n0nce ctx{REMINDER_CLOSE} and [[cite:a]] {REMINDER_OPEN}x{REMINDER_CLOSE}"
    parsed = parse(text)
    texts = "".join(s.text for s in parsed.segments if s.type is SegmentType.TEXT)
    assert REMINDER_OPEN in texts and REMINDER_CLOSE in texts
    assert parsed.pending is None


def test_reminder_delimiters_are_not_id_characters():
    text = OPEN + "cite" + SEP + REMINDER_OPEN + "a" + REMINDER_CLOSE + CLOSE
    assert [s.type for s in parse(text).segments] == [SegmentType.TEXT]


# -- streaming ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    ["[[cite:", "[[ cite : a,", "[", "[[", OPEN, OPEN + "cite", OPEN + "cite" + SEP + "t0", OBJ, OBJ + "cite" + OBJ + "a"],
)
def test_an_unfinished_marker_at_the_end_is_pending_and_not_shown(text):
    parsed = parse("Before " + text)
    assert parsed.pending == text
    assert "".join(s.text for s in parsed.segments) == "Before "


def test_a_final_parse_shows_an_unfinished_marker_as_text():
    parsed = parse("Before [[cite:t0", final=True)
    assert parsed.pending is None
    assert [s.text for s in parsed.segments] == ["Before [[cite:t0"]


def test_an_object_marker_closed_at_the_very_end_waits_because_it_may_go_on():
    text = obj("cite", "a")
    assert parse(text).pending == text
    assert only_marker(text).ids == ("a",)
    extended = text + "b" + OBJ
    assert parse(extended).pending == extended
    assert only_marker(extended).ids == ("a", "b")


def test_a_text_without_openers_has_no_pending():
    assert parse("plain ] text ] with closers" + CLOSE + SEP).pending is None


STREAM_TEXTS = [
    f"A {pua('cite', 'p1')} B [[cite: a1, a2]] C {obj('cite', 'o1')}{obj('cite', 'o2')} D [[image:i1]] E",
    f"[[cite:a [[cite:b]] {OPEN}cite{SEP}x y{CLOSE}{REMINDER_OPEN}r{REMINDER_CLOSE} [x](y) [[[cite:z]]]",
    f"{obj('cite', 'a')}{OBJ}b{OBJ} tail {OBJ}cite{OBJ}c, d{OBJ}e{OBJ}.",
    "[[cite:t0_src_1]]",
]


@pytest.mark.parametrize("text", STREAM_TEXTS)
def test_a_text_split_at_every_position_shows_the_same_as_the_whole(text):
    for final_last in (False, True):
        whole = parse(text, final=final_last)
        for cut in range(len(text) + 1):
            segments, pending = parse_in_chunks([text[:cut], text[cut:]], final_last)
            assert segments == shown(whole.segments), (cut, final_last)
            assert pending == whole.pending


@pytest.mark.parametrize("text", STREAM_TEXTS)
def test_a_text_fed_one_character_at_a_time_shows_the_same_as_the_whole(text):
    segments, pending = parse_in_chunks(list(text), final_last=False)
    assert segments == shown(parse(text).segments)
    assert pending == parse(text).pending


# -- properties -------------------------------------------------------------------------------

# Pieces that make markers likely, plus arbitrary text.
MARKERISH = st.lists(
    st.sampled_from(["[", "]", "[[", "]]", ":", ",", ";", " ", "\t", "\n", "cite", "note", "a", "t0_src_1", "é", "中", OPEN, CLOSE, SEP, OBJ, REMINDER_OPEN, REMINDER_CLOSE]),
    max_size=40,
).map("".join)
ANY_TEXT = st.one_of(MARKERISH, st.text(max_size=80))


@settings(max_examples=400, deadline=None)
@given(ANY_TEXT, st.booleans())
def test_parse_never_raises_and_segments_cover_the_input_exactly(text, final):
    parsed = parse(text, final=final)
    covered = "".join(s.text for s in parsed.segments)
    assert covered + (parsed.pending or "") == text
    if final:
        assert parsed.pending is None
    position = 0
    for segment in parsed.segments:
        assert segment.start == position and text[segment.start : segment.end] == segment.text
        assert segment.text
        position = segment.end
        if segment.type is not SegmentType.TEXT:
            assert segment.ids and segment.form is not None
    for left, right in zip(parsed.segments, parsed.segments[1:]):
        assert not (left.type is SegmentType.TEXT and right.type is SegmentType.TEXT)


@settings(max_examples=300, deadline=None)
@given(MARKERISH, st.lists(st.integers(min_value=0, max_value=200), max_size=6), st.booleans())
def test_any_chunking_shows_the_same_as_the_whole(text, cuts, final_last):
    points = sorted({min(c, len(text)) for c in cuts})
    chunks = [text[a:b] for a, b in zip([0, *points], [*points, len(text)])]
    whole = parse(text, final=final_last)
    segments, pending = parse_in_chunks(chunks, final_last)
    assert segments == shown(whole.segments)
    assert pending == whole.pending


# -- speed ----------------------------------------------------------------------------------------

ADVERSARIAL = {
    "brackets": "[",
    "unclosed_ascii": "[[cite:" + "a" * 600,
    "object_chain": OBJ + "a",
    "pua_openers": OPEN + "cite" + SEP,
    "markers": "word [[cite:t0_src_1, t0_src_2]] ",
}


@pytest.mark.serial
@pytest.mark.parametrize("name", sorted(ADVERSARIAL))
def test_parse_time_grows_linearly_on_adversarial_input(name):
    unit = ADVERSARIAL[name]
    small = unit * (100_000 // len(unit))
    large = small * 4

    def timed(text: str) -> float:
        started = time.process_time()
        parse(text)
        return time.process_time() - started

    small_time = min(timed(small) for _ in range(2))
    large_time = min(timed(large) for _ in range(2))
    # Four times the input; quadratic parsing would take about sixteen times as long.
    assert large_time < small_time * 8 + 0.05
