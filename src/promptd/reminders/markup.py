"""The markup of reminders, named once: the two tags, the private-use delimiters, and the blank
line that separates blocks, a display trigger from its body, and a user's text from the reminders
after it. Writers, parsers and the sanitizer all read these names; none spells the markup itself."""

REMINDER_TAG = "system-reminder"
TRIGGER_TAG = "display-trigger"
# The names the sanitizer looks for in any disguise.
TAG_NAMES = (REMINDER_TAG, TRIGGER_TAG)

# An opening reminder tag up to its attributes, and the closing tag.
REMINDER_OPEN = f"<{REMINDER_TAG}"
REMINDER_CLOSE = f"</{REMINDER_TAG}>"
TRIGGER_OPEN = f"<{TRIGGER_TAG}>"
TRIGGER_CLOSE = f"</{TRIGGER_TAG}>"

# The delimiters of a PUA-style block (U+E203 ... U+E204): only the trusted writer puts them in text.
PUA_OPEN = "\ue203"
PUA_CLOSE = "\ue204"

BLANK_LINE = "\n\n"
