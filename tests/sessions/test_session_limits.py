"""Session state is bounded in bytes: the id, each value and each session as a whole
(docs/operations.md, "Session limits"). Over a cap, session/update is refused with -32602
`value_too_large` and the session is left as it was."""

from __future__ import annotations

import pytest
from conftest import call_in_process
from support.processes import MIB

from promptd.config import Config
from promptd.methods.boundary import RpcFailure
from promptd.runtime import Runtime


def runtime(**sessions: int) -> Runtime:
    return Runtime(Config.model_validate({"sessions": sessions}))


def refused(method: str, params: dict[str, object], rt: Runtime) -> dict[str, object]:
    with pytest.raises(RpcFailure) as failure:
        call_in_process(method, params, rt)
    assert failure.value.code == -32602
    data = failure.value.data
    assert data is not None and data["kind"] == "value_too_large"
    return data


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"cwd": "/" + "d" * 20_000}, "cwd"),
        ({"shell": "s" * 20_000}, "shell"),
        ({"env": {"BIG": "v" * 20_000}}, "env.BIG"),
        ({"tools": {"by_kind": {"edit": "e" * 20_000}}}, "tools.by_kind.edit"),
        ({"modified_files": ["ok.txt", "/" + "p" * 20_000]}, "modified_files"),
    ],
)
def test_a_value_over_the_field_cap_is_refused_naming_the_field_and_the_limit(params, field):
    rt = runtime()
    call_in_process("session/update", {"session": "s", "cwd": "/work", "env": {"A": "1"}, "modified_files": ["a.py"]}, rt)
    data = refused("session/update", {"session": "s", **params}, rt)
    assert data["field"] == field and data["limit"] == 16 << 10 and data["size"] > data["limit"]
    session = rt.sessions.get("s")
    # Nothing of the refused update landed, not even its valid parts.
    assert (session.data.cwd, session.data.env, session.modified_files, session.data.tools) == ("/work", {"A": "1"}, ["a.py"], None)


def test_values_that_each_fit_but_together_pass_the_session_cap_are_refused():
    rt = runtime(max_session_bytes=10_000)
    call_in_process("session/update", {"session": "s", "env": {f"V{n}": "x" * 1000 for n in range(9)}}, rt)
    data = refused("session/update", {"session": "s", "modified_files": ["f" * 1500]}, rt)
    assert data["field"] == "session" and data["limit"] == 10_000
    assert rt.sessions.get("s").modified_files == []


def test_a_session_id_over_its_cap_is_refused_by_every_method_that_names_a_session():
    rt = runtime()
    long_id = "i" * 257
    for method, params in [("session/update", {"cwd": "/w"}), ("reminder/assemble", {}), ("turn/complete", {})]:
        data = refused(method, {"session": long_id, **params}, rt)
        assert data["field"] == "session" and data["limit"] == 256
    assert len(rt.sessions) == 0
    call_in_process("session/update", {"session": "i" * 256, "cwd": "/w"}, rt)


def test_caps_count_utf8_bytes_not_characters():
    rt = runtime(max_field_bytes=8)
    call_in_process("session/update", {"session": "s", "cwd": "/ab"}, rt)
    # Three characters of four bytes each: 12 bytes.
    assert refused("session/update", {"session": "s", "cwd": "\U0001f600" * 3}, rt)["size"] == 12


def test_the_caps_are_settings_that_initialize_can_change():
    rt = runtime()
    call_in_process("initialize", {"config": {"sessions": {"max_field_bytes": 4}}}, rt)
    refused("session/update", {"session": "s", "date": "2026-12-01"}, rt)


def test_turn_complete_on_a_session_never_used_is_refused_and_creates_none():
    rt = runtime()
    with pytest.raises(RpcFailure) as failure:
        call_in_process("turn/complete", {"session": "typo"}, rt)
    assert failure.value.code == -32050 and failure.value.data["kind"] == "unknown_session"
    assert "typo" not in rt.sessions
    call_in_process("session/update", {"session": "s", "cwd": "/w"}, rt)
    assert call_in_process("turn/complete", {"session": "s"}, rt) == {}


def test_a_todo_gate_prompt_id_over_the_id_cap_is_refused_and_not_remembered():
    rt = Runtime(Config.model_validate({"todo_gate": {"enabled": True}}))
    gate = {"session": "s", "todos": [{"id": "1", "content": "do it", "status": "pending"}], "last_step_called_tool": False}
    data = refused("todo/gate", {**gate, "prompt_id": "p" * 257}, rt)
    assert data["field"] == "prompt_id" and data["limit"] == 256 and data["size"] == 257
    assert "s" not in rt.sessions
    assert call_in_process("todo/gate", {**gate, "prompt_id": "p" * 256}, rt)["decision"] == "nudge"
    assert list(rt.sessions.get("s").gate_fires) == ["p" * 256]


def test_a_session_keeps_digests_of_what_it_delivered_never_the_text():
    rt = runtime()
    big = "d" * MIB
    call_in_process("reminder/assemble", {"session": "s", "directives": [big], "budget": 2 * MIB}, rt)
    session = rt.sessions.get("s")
    assert set(session.delivered) == {"directive"} and all(len(v) == 16 for v in session.delivered.values())
    call_in_process("turn/complete", {"session": "s"}, rt)
    assert session.delivered == {} and len(session.last_delivered["directive"]) == 16


def test_the_delivery_log_remembers_the_most_recently_delivered_keys_only():
    rt = runtime()
    # A host cycling providers under ever new keys: each registered, delivered, unregistered.
    for n in range(300):
        name = f"p{n}"
        call_in_process("providers/register", {"name": name, "kind": "static", "scope": "global", "key": f"k{n}.{'x' * 120}", "text": "fact"}, rt)
        call_in_process("reminder/assemble", {"session": "s"}, rt)
        call_in_process("turn/complete", {"session": "s"}, rt)
        call_in_process("providers/unregister", {"name": name}, rt)
    kept = rt.sessions.get("s").last_delivered
    assert len(kept) == 256
    assert f"k299.{'x' * 120}" in kept and f"k0.{'x' * 120}" not in kept


def test_a_key_delivered_again_is_remembered_as_recent():
    rt = runtime()
    call_in_process("providers/register", {"name": "steady", "kind": "static", "scope": "global", "key": "steady", "text": "fact"}, rt)
    for n in range(300):
        call_in_process("providers/register", {"name": "other", "kind": "static", "scope": "global", "key": f"other{n}", "text": "fact"}, rt)
        call_in_process("reminder/assemble", {"session": "s"}, rt)
        call_in_process("turn/complete", {"session": "s"}, rt)
        call_in_process("providers/unregister", {"name": "other"}, rt)
    assert "steady" in rt.sessions.get("s").last_delivered
