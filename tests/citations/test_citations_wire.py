"""The four citation methods end to end: over the wire and through the same
dispatch in-process, with the same answers."""

from __future__ import annotations

import pytest
from conftest import call_in_process

from promptd.methods.boundary import RpcFailure

OPEN, CLOSE, SEP, OBJ = "\ue200", "\ue201", "\ue202", "\ufffc"
TEXT = f"Per the notes [[cite:n1]] and {OPEN}cite{SEP}w1{SEP}n1{CLOSE}, see {OBJ}cite{OBJ}w1{OBJ}. Then [[cite:t0"
SOURCES = {"n1": {"url": "file:///home/me/My%20Notes.md", "title": None, "favicon": None}, "w1": {"url": "https://www.example.org/a", "title": "Example"}}

CALLS = [
    ("citation/parse", {"text": TEXT}),
    ("citation/parse", {"text": TEXT, "final": True}),
    ("citation/describe", {"url": "file:///C:/Users/kim/%E4%B8%AD%E6%96%87.pdf", "native_open": False}),
    ("citation/describe", {"url": "::not a url::"}),
    ("citation/export", {"text": TEXT, "sources": SOURCES}),
    ("citation/strip", {"text": TEXT}),
]


def test_citation_methods_answer_the_same_over_the_wire_and_in_process(shared_served):
    for method, params in CALLS:
        assert shared_served.call(method, params) == call_in_process(method, params), method


def test_parse_over_the_wire_reports_segments_and_the_pending_marker(shared_served):
    result = shared_served.call("citation/parse", {"text": TEXT})
    assert result["pending"] == "[[cite:t0"
    citations = [(s["form"], s["ids"]) for s in result["segments"] if s["type"] == "citation"]
    assert citations == [("ascii", ["n1"]), ("pua", ["w1", "n1"]), ("object", ["w1"])]
    assert "".join(s["text"] for s in result["segments"]) + result["pending"] == TEXT


def test_a_stream_parsed_over_the_wire_chunk_by_chunk_shows_the_whole(shared_served):
    carried, shown = "", []
    for cut in range(0, len(TEXT), 7):
        chunk = TEXT[cut : cut + 7]
        result = shared_served.call("citation/parse", {"text": carried + chunk})
        shown.extend((s["type"], s["text"]) for s in result["segments"])
        carried = result["pending"] or ""
    whole = shared_served.call("citation/parse", {"text": TEXT})
    assert "".join(t for _, t in shown) == "".join(s["text"] for s in whole["segments"])
    assert [t for kind, t in shown if kind == "citation"] == [s["text"] for s in whole["segments"] if s["type"] == "citation"]
    assert carried == whole["pending"]


def test_describe_over_the_wire(shared_served):
    assert shared_served.call("citation/describe", {"url": "file:///C:/Users/kim/%E4%B8%AD%E6%96%87.pdf", "native_open": False}) == {
        "kind": "file",
        "label": "中文.pdf",
        "icon": "\U0001f4d5",
        "open": "clipboard",
        "path": "C:/Users/kim/中文.pdf",
    }


def test_export_over_the_wire_numbers_sources_and_ignores_extra_source_fields(shared_served):
    result = shared_served.call("citation/export", {"text": TEXT, "sources": SOURCES})
    assert result["text"] == ("Per the notes [1] and [2, 1], see [2]. Then [[cite:t0\n\nSources:\n[1] My Notes.md <file:///home/me/My%20Notes.md>\n[2] Example <https://www.example.org/a>")


def test_strip_over_the_wire(shared_served):
    assert shared_served.call("citation/strip", {"text": "A [[cite:x]]. B"}) == {"text": "A. B", "removed": 1}


@pytest.mark.parametrize(
    ("method", "params"),
    [
        ("citation/parse", {}),
        ("citation/parse", {"text": 5}),
        ("citation/parse", {"text": "x", "stream": True}),
        ("citation/describe", {"url": None}),
        ("citation/describe", {"url": "https://a.org", "native_open": "maybe"}),
        ("citation/export", {"text": "x", "sources": {"a": "https://a.org"}}),
        ("citation/export", {"text": "x", "sources": [1]}),
        ("citation/strip", {"txt": "x"}),
    ],
)
def test_bad_params_are_invalid_params_over_the_wire_and_in_process(shared_served, method, params):
    reply = shared_served.request(method, params)
    assert reply["error"]["code"] == -32602
    assert reply["error"]["data"]["kind"] == "invalid_params"
    with pytest.raises(RpcFailure) as failure:
        call_in_process(method, params)
    assert (failure.value.code, failure.value.data["kind"]) == (-32602, "invalid_params")


def test_a_large_text_is_parsed_over_the_wire_while_the_server_keeps_answering(shared_served):
    big = ("word [[cite:t0_src_1, t0_src_2]] " * 30_000) + "end"
    result = shared_served.call("citation/strip", {"text": big}, timeout=60)
    assert result["removed"] == 30_000
    assert shared_served.call("citation/describe", {"url": "https://a.org"})["label"] == "a.org"
