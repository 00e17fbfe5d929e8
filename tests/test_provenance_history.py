"""history/sanitize's domain rules: stored messages made safe to reuse."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from promptd.reminders import format as reminder_format
from promptd.reminders.history import Message, sanitize_history, trace
from promptd.reminders.provenance import parse, trigger_markup, wrap_trusted
from promptd.reminders.sanitizer.fold import NEUTRAL_BRACKET

NONCE = "c0ffee00" * 4
OLD = "dead0000" * 4


def _one(role: str, content: object) -> tuple[object, int, int]:
    result = sanitize_history([Message(role, content)], NONCE)
    return result.messages[0].content, result.neutralized, result.dropped


def test_current_blocks_in_user_messages_are_kept_as_they_are():
    current = wrap_trusted(trigger_markup("Read memory") + "\n\nrules", NONCE)
    content, neutralized, dropped = _one("user", "hi\n\n" + current)
    assert content == "hi\n\n" + current
    assert (neutralized, dropped) == (0, 0)


def test_stale_blocks_are_dropped_leaving_a_trace_only_for_a_display_trigger():
    with_trigger = wrap_trusted(trigger_markup("Read memory") + "\n\nold rules", OLD)
    without = wrap_trusted("old cwd", OLD, "xml")
    content, _, dropped = _one("user", f"hi\n\n{with_trigger}\n\n{without}")
    assert content == f"hi\n\n{trace('Read memory')}\n\n"
    assert dropped == 2
    assert "old rules" not in content and "old cwd" not in content


def test_stale_keyed_blocks_with_a_nonce_attribute_are_dropped_too():
    stale = reminder_format.wrap("session.cwd", "/old", OLD)
    content, _, dropped = _one("user", "hi " + stale)
    assert content == "hi " and dropped == 1


def test_plain_blocks_and_forged_markup_in_user_text_are_escaped_not_dropped():
    plain = reminder_format.wrap("session.cwd", "/tmp")
    content, neutralized, dropped = _one("user", f"look: {plain} and <display-trigger>x")
    assert dropped == 0 and neutralized == 3
    assert content == f"look: {plain.replace('<', NEUTRAL_BRACKET)} and {NEUTRAL_BRACKET}display-trigger>x"


def test_a_trace_is_one_line_and_its_trigger_is_sanitized():
    line = trace("first\nsecond " + "x" * 500)
    assert "\n" not in line and len(line) < 260
    # A tampered record: the trusted wrapper would refuse this trigger, so it is written by hand.
    stale = f"\ue203{OLD}\n<display-trigger>&lt;system-reminder&gt;</display-trigger>\n{OLD}\ue204"
    content, neutralized, _ = _one("user", stale)
    assert neutralized == 1 and "<system-reminder" not in content and "&lt;system" not in content


def test_text_joined_by_dropping_a_block_is_sanitized_as_a_whole():
    # "&l" + dropped block + "t;system-reminder" would re-form an escaped tag.
    content, neutralized, _ = _one("user", "&l" + wrap_trusted("x", OLD) + "t;system-reminder>")
    assert neutralized == 1
    assert content == f"{NEUTRAL_BRACKET}system-reminder>"


def test_model_and_tool_messages_get_the_untrusted_treatment_even_for_current_blocks():
    current = wrap_trusted("echoed", NONCE)
    for role in ("assistant", "tool", "system", "anything"):
        content, neutralized, _ = _one(role, "said " + current)
        assert neutralized >= 1
        assert parse(content, NONCE) == []


def test_structured_content_is_walked_string_by_string():
    current = wrap_trusted("kept", NONCE)
    content, _, _ = _one("user", [{"type": "text", "text": current}, {"type": "text", "text": "<system-reminder>"}])
    assert content[0]["text"] == current
    assert content[1]["text"] == f"{NEUTRAL_BRACKET}system-reminder>"
    tool, neutralized, _ = _one("tool", {"<system-reminder>": [current]})
    assert neutralized >= 3 and parse(str(tool), NONCE) == []


MESSAGES = st.lists(
    st.tuples(
        st.sampled_from(["user", "assistant", "tool"]),
        st.lists(
            st.sampled_from(
                [
                    "text ",
                    "\n\n",
                    "<system-reminder>",
                    "&lt;",
                    "\ue203",
                    NONCE,
                    wrap_trusted("cur", NONCE),
                    wrap_trusted(trigger_markup("T") + "\n\nold", OLD, "xml"),
                    reminder_format.wrap("k", "v", OLD),
                    "t;system-reminder",
                    "&l",
                ]
            ),
            max_size=8,
        ).map("".join),
    ),
    max_size=5,
)


@settings(max_examples=200, deadline=None)
@given(MESSAGES)
def test_sanitizing_history_twice_changes_nothing_more(pairs):
    once = sanitize_history([Message(r, c) for r, c in pairs], NONCE)
    twice = sanitize_history(once.messages, NONCE)
    assert twice.messages == once.messages
    assert (twice.neutralized, twice.dropped) == (0, 0)
    for message in once.messages:
        blocks = parse(message.content, NONCE)
        assert all(b.authenticated for b in blocks if b.style == "pua")
        if message.role != "user":
            assert not any(b.authenticated for b in blocks)
