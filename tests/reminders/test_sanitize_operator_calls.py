"""Code that applies an operator beginning with "<" to a call is not a tag and comes through
unchanged; a name that is no plain call after such an operator is still a tag."""

from __future__ import annotations

import pytest

from promptd.reminders.kinds import SpanKind
from promptd.reminders.sanitize import inspect, sanitize

OPERATOR_CALLS = {
    "r_assignment": "a <- system_reminder(x)",
    "r_assignment_without_a_space": "a <-system_reminder(x)",
    "r_superassignment": "a <<- display_trigger(y)",
    "r_dotted_name": "a <- system.reminder(x)",
    "longer_name": "r <- system_reminders_for(session)",
    "scala_for": "for { r <- system.reminder.load(x) } yield r",
    "go_channel_send": "ch <- system_reminder(x)",
    "tilde_operator": "a <~ display_trigger(y)",
    "shift_assignment": "x <<= f(y)",
    "shift_of_a_call": "out << system_reminder(x) << '\\n';",
    "r_in_html": "<pre>a &lt;- system_reminder(x)</pre>",
    "r_in_json": '{"code": "a \\u003c- system_reminder(x)"}',
    "upper_case_name": "A <- SYSTEM_REMINDER(x)",
}


@pytest.mark.parametrize("code", list(OPERATOR_CALLS.values()), ids=list(OPERATOR_CALLS))
def test_an_operator_applied_to_a_call_is_code_and_comes_through_unchanged(code):
    assert sanitize(code) == (code, 0)
    assert inspect(code) == []


STILL_TAGS = {
    "operator_without_a_call": "a <- system_reminder",
    "hyphenated_name": "a <- system-reminder(x)",
    "look_alike_letter": "a <- s\u0443stem_reminder(x)",
    "look_alike_bracket": "a \u2039- system_reminder(x)",
    "invisible_in_the_name": "a <- system\u200b_reminder(x)",
    "space_before_the_parenthesis": "a <- system_reminder (x)",
    "a_bracket_alone_before_a_call": "<system_reminder(x)>",
    "slash_after_the_operator": "a <-/system_reminder(x)",
}


@pytest.mark.parametrize("text", list(STILL_TAGS.values()), ids=list(STILL_TAGS))
def test_a_name_that_is_no_plain_call_after_an_operator_is_still_a_tag(text):
    assert sanitize(text).neutralized == 1
    assert [span.kind for span in inspect(text)] == [SpanKind.TAG]
