"""The sanitizer's tables built at import are the ones their definitions give."""

from __future__ import annotations

from promptd.reminders.sanitizer import detect
from promptd.reminders.sanitizer.confusables import PROTOTYPES
from promptd.reminders.sanitizer.fold import fold_all


def test_the_brackets_found_by_walking_the_table_back_from_a_bracket_are_every_entry_that_reads_as_one():
    assert detect._table_brackets() == {ch for ch in PROTOTYPES if "<" in fold_all(ch)}


def test_the_known_brackets_of_the_running_unicode_version_are_the_computed_ones():
    import unicodedata

    assert unicodedata.unidata_version in detect.KNOWN_TABLE_BRACKETS  # else every start computes them
    assert detect.table_brackets() == detect._table_brackets()


def test_the_known_judged_characters_of_the_running_unicode_version_are_the_computed_ones():
    import unicodedata

    assert unicodedata.unidata_version in detect.KNOWN_JUDGED  # else every start computes them
    assert detect.KNOWN_JUDGED[unicodedata.unidata_version] == detect._judged()
