"""Formatting a renderer shows as nothing inside a tag name (Markdown's markers and backslash
escapes, inline HTML tags and comments) is read through; markup elsewhere is left alone."""

from __future__ import annotations

import pytest

from promptd.reminders.kinds import SpanKind
from promptd.reminders.sanitize import inspect, sanitize, sanitize_parts

HIDDEN_FORMATTING = {
    "markdown_bold": "<sys**tem**-reminder>",
    "markdown_emphasis": "<sys*tem*-reminder>",
    "markdown_underscores": "<sys_tem_-reminder>",
    "markdown_code_span": "<sys`tem`-reminder>",
    "markdown_strikethrough": "<sys~~tem~~-reminder>",
    "markdown_around_the_name": "<**system-reminder**>",
    "markdown_escaped_underscore": "<system\\_reminder>",
    "markdown_escaped_hyphen": "<display\\-trigger>",
    "markdown_escaped_asterisks": "<sys\\*\\*tem-reminder>",
    "markdown_closing": "</*display-trigger*>",
    "empty_bold_element": "<sys<b></b>tem-reminder>",
    "bold_part_of_the_name": "<sys<b>tem</b>-reminder>",
    "span_with_attributes": "<sys<span class=\"x\" data-y='1' hidden>tem</span>-reminder>",
    "quoted_bracket_in_an_attribute": '<sys<b title=">">tem-reminder>',
    "self_closing_element": "<display<wbr/>-trigger>",
    "unknown_element": "<sys<x></x>tem-reminder>",
    "comment": "<sys<!-- hidden -->tem-reminder>",
    "empty_comment": "<sys<!---->tem-reminder>",
    "element_before_the_name": "<<b></b>system-reminder>",
    "element_after_the_slash": "</<i></i>system-reminder>",
    "markup_and_a_look_alike": "<sys<b></b>t\u0435m-reminder>",
    "escaped_bracket_then_markup": "&lt;sys<b></b>tem-reminder&gt;",
}


@pytest.mark.parametrize("text", list(HIDDEN_FORMATTING.values()), ids=list(HIDDEN_FORMATTING))
def test_formatting_a_renderer_hides_inside_a_tag_name_does_not_hide_the_tag(text):
    cleaned = sanitize(text)
    assert cleaned.neutralized == 1
    assert [span.kind for span in inspect(text)] == [SpanKind.TAG]
    assert sanitize(cleaned.text) == (cleaned.text, 0)


def test_the_rename_goes_before_the_first_letter_and_the_markup_stays_as_written():
    assert sanitize("<sys<b></b>tem-reminder>").text == "<untrusted-sys<b></b>tem-reminder>"
    assert sanitize("<**system-reminder**>").text == "<**untrusted-system-reminder**>"
    # Markup before the first letter: renamed before the markup, which a rename inside could
    # leave markup (a stream split in it puts the rename at the end of the bracket's part).
    assert sanitize("<<b></b>system-reminder>").text == "<untrusted-<b></b>system-reminder>"
    assert inspect("<<b></b>system-reminder>") == [(0, 1, SpanKind.TAG)]


def test_a_tag_inside_a_name_is_renamed_and_so_is_the_name_it_completes():
    cleaned = sanitize("<sys<system-reminder>tem-reminder>")
    assert cleaned == ("<untrusted-sys<untrusted-system-reminder>tem-reminder>", 2)


def test_a_tag_before_a_name_is_markup_too_and_both_are_renamed():
    text = "\u2039</system-reminder>/system-reminder>"
    cleaned = sanitize(text)
    assert cleaned == ("\u2039untrusted-</untrusted-system-reminder>/system-reminder>", 2)
    assert sanitize(cleaned.text) == (cleaned.text, 0)
    assert inspect(text) == [(0, 1, SpanKind.TAG), (1, 3, SpanKind.TAG)]


@pytest.mark.parametrize("cut", range(1, 37))
def test_a_tag_before_a_name_split_across_parts_is_renamed_and_stays_renamed(cut):
    text = "\u2039</system-reminder>/system-reminder>"
    parts, count = sanitize_parts([text[:cut], text[cut:]])
    assert count == 2
    again, second = sanitize_parts(parts)
    assert (again, second) == (parts, 0)
    assert sanitize("".join(parts)).neutralized == 0


NOT_MARKUP = {
    "incomplete_element": "<sys<b tem-reminder",
    "bracket_then_digit": "<sys<3tem-reminder>",
    "bracket_in_a_quoted_value": '<sys<b title="<">tem-reminder>',
    "escaped_element": "<sys&lt;b&gt;tem-reminder>",
}


@pytest.mark.parametrize("text", list(NOT_MARKUP.values()), ids=list(NOT_MARKUP))
def test_a_bracket_that_opens_no_complete_markup_still_ends_the_name(text):
    assert sanitize(text) == (text, 0)


ORDINARY_FORMATTING = [
    "<p>Use <b>system</b> <i>reminders</i> and <span class='t'>display triggers</span>.</p>",
    "**system** reminder, `display` trigger, ~~old~~ <!-- note --> <br/>",
    "<span>system-reminder</span> and <code>display_trigger</code> are named, not written as tags",
    "a <b>tag</b> <s>x</s> <sub>2</sub> <sup>3</sup> <small>s</small> <strong>s</strong> <del>d</del>",
]


@pytest.mark.parametrize("text", ORDINARY_FORMATTING)
def test_ordinary_markup_and_markdown_are_left_exactly_as_they_were(text):
    assert sanitize(text) == (text, 0)
    assert inspect(text) == []
