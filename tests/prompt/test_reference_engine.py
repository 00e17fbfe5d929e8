"""The reference set-up (tests/support/reference_engine.py: the Python binding configured as the
reference build) against the reference build itself: tests/reference/, a Rust program on
MiniJinja 2.18.0 with the reference's features, built with cargo. Every corpus template gives the
same bytes in both, or fails in both.

Serial: it builds the Rust program (about a minute from cold; cargo reuses the build after) into
build/reference/, outside the source tree."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from support.reference_corpus import cases
from support.reference_engine import ReferenceEngine, ReferenceFailure

ROOT = Path(__file__).resolve().parents[2]
CRATE = ROOT / "tests" / "reference"
TARGET = ROOT / "build" / "reference"
BINARY = TARGET / "release" / "promptd-reference-engine"

pytestmark = pytest.mark.serial


@pytest.fixture(scope="module")
def rust_answers():
    if shutil.which("cargo") is None:
        pytest.skip("cargo is not installed")
    subprocess.run(["cargo", "build", "--release", "--locked", "--quiet", "--target-dir", str(TARGET)], cwd=CRATE, check=True)
    corpus = cases()
    lines = "".join(json.dumps({"template": case.template, "context": case.context}) + "\n" for case in corpus)
    done = subprocess.run([str(BINARY)], input=lines, capture_output=True, text=True, check=True)
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(answers) == len(corpus)
    return {case.id: answer for case, answer in zip(corpus, answers)}


def binding_answer(engine: ReferenceEngine, case) -> dict:
    try:
        return {"output": engine.render(case.template, case.context)}
    except ReferenceFailure as exc:
        return {"error": str(exc)}


def test_the_binding_set_up_renders_every_corpus_template_as_the_reference_build(rust_answers):
    engine = ReferenceEngine()
    corpus = cases()
    assert len(corpus) >= 40
    disagreements = []
    for case in corpus:
        ours, theirs = binding_answer(engine, case), rust_answers[case.id]
        if ("output" in ours) != ("output" in theirs) or ours.get("output") != theirs.get("output"):
            disagreements.append((case.id, case.template[:80], ours, theirs))
    assert not disagreements, "\n".join(map(repr, disagreements))


def test_the_rust_build_has_none_of_the_features_the_reference_leaves_out(rust_answers):
    # A check that the build is the reference's, not one that happens to agree: tojson (json),
    # break (loop_controls) and map literals in written order (preserve_order) are all absent.
    by_template = {case.template: rust_answers[case.id] for case in cases()}
    assert "error" in by_template["${{ [1, 2]|tojson }}"]
    assert "error" in by_template["${% for x in [1, 2, 3] %}${% break %}${% endfor %}"]
    assert by_template['${{ {} }}|${{ {"b": 1, "a": 2} }}|${{ {"z": {"y": 1, "x": 2}, "a": [{"d": 1, "c": 2}]} }}']["output"].startswith('{}|{"a": 2, "b": 1}')
