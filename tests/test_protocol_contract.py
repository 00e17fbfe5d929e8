"""The contract in both directions: event payloads a real server emits validate against their
models (promptd.api.events), and every error kind the source sends is in the one catalogue
(promptd.errors) the document and the clients are generated from."""

from __future__ import annotations

import json
import re
from pathlib import Path

from promptd.api.events import EVENTS

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "src" / "promptd"


def _frames_until(server, ident, events):
    while True:
        frame = server.read()
        if "method" in frame:
            events.append(frame)
        elif frame.get("id") == ident:
            return frame


def test_every_event_a_server_emits_validates_against_its_model(spawn, tmp_path):
    server = spawn(env={"PROMPTD_REMINDERS__SPILL_DIR": str(tmp_path / "spill")})
    server.call(
        "initialize",
        {"config": {"todo_gate": {"enabled": True, "max_fires_per_prompt": 1}}, "capabilities": {"events": True}, "tools": {"by_kind": {"plan": "todo_write"}}},
    )
    events: list[dict] = []
    for ident, (method, params) in enumerate(
        [
            ("providers/register", {"name": "gone", "kind": "file", "key": "gone", "path": str(tmp_path / "none")}),
            ("providers/register", {"name": "huge", "kind": "static", "key": "huge", "text": "h" * 3000}),
            ("reminder/assemble", {"session": "e", "user_message": "x", "budget": 600}),
            ("providers/unregister", {"name": "huge"}),
            ("providers/unregister", {"name": "gone"}),
        ]
        + [
            ("todo/gate", {"session": "s", "prompt_id": "p", "todos": [{"id": "1", "content": "x", "status": "pending"}], "tool_called": False}),
        ]
        * 2
        + [step for _ in range(4) for step in (("reminder/assemble", {"session": "n", "user_message": "go"}), ("turn/complete", {"session": "n"}))]
    ):
        server.send({"jsonrpc": "2.0", "id": ident, "method": method, "params": params})
        assert "error" not in _frames_until(server, ident, events), method

    seen = {frame["method"] for frame in events}
    assert seen == set(EVENTS), f"events not triggered: {set(EVENTS) - seen}"
    for frame in events:
        model = EVENTS[frame["method"]]
        # Exactly the model's fields, no more and no fewer, with the model's types.
        assert model.model_validate(frame["params"]).model_dump(mode="json") == frame["params"]


def test_every_emit_site_names_an_event_the_document_describes():
    names = set()
    for path in SOURCE.rglob("*.py"):
        names |= set(re.findall(r"""emit\(\s*["'](event/[a-z_]+)["']""", path.read_text("utf-8")))
    assert names <= set(EVENTS), f"events without a model in promptd.api.events: {names - set(EVENTS)}"


def test_every_error_kind_the_source_sends_is_in_the_catalogue_and_the_document():
    from promptd.errors import catalogue

    declared = {kind for error in catalogue() for kind, _ in error.kinds}
    sent = set()
    for path in SOURCE.rglob("*.py"):
        sent |= set(re.findall(r"""["']kind["']\s*:\s*["']([a-z_]+)["']""", path.read_text("utf-8")))
    assert sent <= declared, f"kinds sent but not declared in promptd.errors: {sent - declared}"
    document = json.loads((ROOT / "protocol" / "openrpc.json").read_text("utf-8"))
    assert set(document["components"]["schemas"]["ErrorKind"]["enum"]) == declared
    assert {e["code"] for e in document["x-errors"]} == {error.code for error in catalogue()}


def test_the_document_describes_both_directions():
    document = json.loads((ROOT / "protocol" / "openrpc.json").read_text("utf-8"))
    inbound = {m["name"]: m for m in document["x-server-to-client"]}
    assert set(inbound) == {"provider/produce", *EVENTS}
    assert inbound["provider/produce"]["result"]["schema"] == {"$ref": "#/components/schemas/ProduceResult"}
    for name, model in EVENTS.items():
        assert inbound[name]["x-params-schema"] == {"$ref": f"#/components/schemas/{model.__name__}"}
        assert "result" not in inbound[name]
    schemas = document["components"]["schemas"]
    # No Python implementation names leak into the contract.
    assert not [name for name in schemas if name.endswith("Model")]
    assert "ParseResult" not in schemas and {"ReminderParseResult", "CitationParseResult"} <= set(schemas)


def test_the_closed_set_of_event_names_is_exactly_the_events_with_a_model():
    from typing import get_args

    from promptd.api.core import EventName

    assert set(get_args(EventName.__value__)) == set(EVENTS)


def test_only_the_requests_the_clients_send_themselves_are_marked_x_no_wrapper():
    # Both generators read the mark; shutdown is sent by the clients' stop() and Close.
    document = json.loads((ROOT / "protocol" / "openrpc.json").read_text("utf-8"))
    assert [m["name"] for m in document["methods"] if m.get("x-no-wrapper")] == ["shutdown"]


def test_exactly_the_fields_that_come_back_in_the_callers_shape_are_marked_x_caller_type():
    # The generators make these generic: an SDK's own message type in, the same type out.
    document = json.loads((ROOT / "protocol" / "openrpc.json").read_text("utf-8"))
    marked = {(name, field, schema["x-caller-type"]) for name, model in document["components"]["schemas"].items() for field, schema in model.get("properties", {}).items() if "x-caller-type" in schema}
    assert marked == {
        ("HistorySanitizeParams", "messages", "Message"),
        ("HistorySanitizeResult", "messages", "Message"),
        ("SanitizeValueParams", "value", "Value"),
        ("SanitizeValueResult", "value", "Value"),
    }
    params = {m["name"]: {p["name"]: p["schema"] for p in m["params"]} for m in document["methods"]}
    assert params["history/sanitize"]["messages"]["x-caller-type"] == "Message"
    assert params["content/sanitize_value"]["value"]["x-caller-type"] == "Value"


def test_the_lint_kinds_and_severities_of_the_document_are_the_linters_own():
    # The wire models name the closed sets (LintKind, LintSeverity) so that the clients type them;
    # the linter keeps its own constants. The two must be the same sets.
    from promptd.api.authoring import LintKind, LintSeverity
    from promptd.prompt import guards, lint

    linter_kinds = {
        guards.UNGUARDED,
        guards.DYNAMIC,
        guards.ALIASED,
        guards.UNGUARDED_PARAM,
        guards.UNDEFINED,
        lint.UNKNOWN_KIND,
        lint.NOT_PORTABLE,
        lint.CACHE_VOLATILE,
        lint.NO_PRINTED_FORM,
        lint.SYNTAX,
    }
    assert linter_kinds == set(LintKind)
    assert {lint.ERROR, lint.WARNING} == set(LintSeverity)
    schemas = json.loads((ROOT / "protocol" / "openrpc.json").read_text("utf-8"))["components"]["schemas"]
    assert set(schemas["LintKind"]["enum"]) == set(LintKind)
    assert set(schemas["LintSeverity"]["enum"]) == set(LintSeverity)
