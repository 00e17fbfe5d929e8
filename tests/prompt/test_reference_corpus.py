"""promptd's engine against the reference engine (tests/support/reference_engine.py) over the
differential corpus, tests/reference/corpus/: every template renders the same bytes in both (or
fails in both), unless it is marked with a difference that docs/template-compatibility.md lists
and the portability lint reports. A difference that is new, or a mark that no longer differs,
fails here."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from support.reference_corpus import cases
from support.reference_engine import ReferenceEngine, ReferenceFailure

from promptd.errors import TemplateRender, TemplateSyntax
from promptd.prompt.engine import engine
from promptd.prompt.lint import NOT_PORTABLE, SYNTAX, lint

COMPATIBILITY = Path(__file__).resolve().parents[2] / "docs" / "template-compatibility.md"
# Differences the lint reports as another kind: a filter only the reference has is unknown here.
LINTED_AS_SYNTAX = frozenset({"reference-only-filters"})
# Deliberate differences (docs/template-compatibility.md, "Deliberate differences"), which no lint
# is about, and differences that depend on the data a template gets, which no lint can see.
DELIBERATE = frozenset({"comments-only", "line-ends", "no-printed-form"})
DATA_DEPENDENT = frozenset({"length-of-undefined", "loop-over-none"})
CASES = cases()
REFERENCE = ReferenceEngine()


def documented_differences() -> set[str]:
    """The ids in the first column of the table of known differences."""
    text = COMPATIBILITY.read_text("utf-8")
    section = text.split("## Known differences from the reference engine", 1)[1].split("\n## ", 1)[0]
    return set(re.findall(r"^\| `([a-z0-9-]+)` \|", section, re.MULTILINE))


def outcome_here(case):
    try:
        return "output", engine().render(case.template, case.context, "custom", strict=False)
    except (TemplateSyntax, TemplateRender):
        return "error", None


def outcome_there(case):
    try:
        return "output", REFERENCE.render_like_pipeline(case.template, case.context)
    except ReferenceFailure:
        return "error", None


def test_the_corpus_covers_at_least_150_templates():
    assert len(CASES) >= 150


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_each_corpus_template_renders_as_the_reference_engine_renders_it(case):
    here, there = outcome_here(case), outcome_there(case)
    if case.difference is None:
        assert here == there, f"an undocumented difference from the reference engine: {case.template!r}"
        return
    assert case.difference in documented_differences(), f"{case.difference} is not in docs/template-compatibility.md"
    assert here != there, f"{case.template!r} now renders as the reference does: drop its `diff`"
    if case.difference in DELIBERATE | DATA_DEPENDENT:
        return
    kinds = {finding.kind for finding in lint(case.template, strict=False)}
    assert (SYNTAX if case.difference in LINTED_AS_SYNTAX else NOT_PORTABLE) in kinds


def test_every_documented_difference_has_a_corpus_template():
    marked = {case.difference for case in CASES if case.difference}
    assert documented_differences() <= marked | {"strict-undefined", "python-methods", "error-wording", "debug-global"}
