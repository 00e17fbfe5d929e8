"""The protocol's rules, in memory: rpc/connection.py driven by plain calls (support/wire.Driver),
with the real method table answering through the in-process door. The transport's own guarantees
(pipes, threads, signals, back-pressure, process exit) are in test_server_wire.py."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.wire import WIRE_VECTORS, Driver, chunks, frames, load

from promptd.rpc import connection as rpc
from promptd.rpc.messages import encode

PARSE, INVALID, NOT_FOUND, PARAMS, INTERNAL, SHUT_DOWN, CANCELLED = -32700, -32600, -32601, -32602, -32603, -32002, -32800
WRAP = {"key": "k", "body": "b"}


def req(ident, method, params=None):
    frame = {"jsonrpc": "2.0", "id": ident, "method": method}
    if params is not None:
        frame["params"] = params
    return frame


def note(method, params=None):
    frame = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        frame["params"] = params
    return frame


def one(answers):
    assert len(answers) == 1, answers
    return answers[0]


@pytest.fixture
def peer():
    return Driver()


# ---- decoding and refusals ---------------------------------------------------------------------


def test_invalid_json_is_a_parse_error_with_null_id_and_the_next_line_is_served(peer):
    first, second = peer.feed(b'{"jsonrpc": "2.0", "id": 1,\n' + json.dumps(req(2, "reminder/keys")).encode() + b"\n")
    assert first["id"] is None and first["error"]["code"] == PARSE
    assert second["id"] == 2 and "result" in second


def test_invalid_utf8_is_a_parse_error(peer):
    reply = one(peer.feed(b'{"jsonrpc":"2.0","id":1,"method":"reminder/wrap","params":{"key":"k","body":"\xff\xfe"}}\n'))
    assert reply["id"] is None and reply["error"]["code"] == PARSE


@pytest.mark.parametrize(
    "frame,kind",
    [
        ({"id": 1, "method": "reminder/wrap"}, "bad_version"),
        ({"jsonrpc": "1.0", "id": 1, "method": "reminder/wrap"}, "bad_version"),
        ({"jsonrpc": "2.0", "id": 1}, "invalid_method"),
        ({"jsonrpc": "2.0", "id": 1, "method": 5}, "invalid_method"),
        ({"jsonrpc": "2.0", "id": 1, "method": "reminder/wrap", "params": "text"}, "invalid_params_type"),
    ],
)
def test_malformed_requests_are_invalid_request(peer, frame, kind):
    reply = one(peer.send(frame))
    assert reply["error"]["code"] == INVALID and reply["error"]["data"]["kind"] == kind


def test_a_non_object_message_is_invalid_request(peer):
    reply = one(peer.send(42))
    assert reply == {"jsonrpc": "2.0", "id": None, "error": {"code": INVALID, "message": "Invalid Request", "data": {"kind": "not_an_object"}}}


@pytest.mark.parametrize("ident", ["abc", "", 0, -7, 2**63 - 1, -(2**63)])
def test_string_and_integer_ids_are_echoed_exactly(peer, ident):
    reply = one(peer.send(req(ident, "reminder/wrap", WRAP)))
    assert reply["id"] == ident and "result" in reply


@pytest.mark.parametrize("ident", [None, 1.5, True, False, {"a": 1}, [1]])
def test_null_fractional_boolean_and_structured_ids_are_refused(peer, ident):
    reply = one(peer.send(req(ident, "reminder/wrap", WRAP)))
    assert reply["id"] is None and reply["error"]["code"] == INVALID and reply["error"]["data"]["kind"] == "invalid_id"


def test_an_id_beyond_64_bits_is_echoed_exactly_and_a_big_integer_in_params_is_not_a_crash(peer):
    peer.feed(b'{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"reminder/keys"}\n')
    assert bytes(peer.out).startswith(b'{"jsonrpc":"2.0","id":123456789012345678901234567890,"result":')
    line = b'{"jsonrpc":"2.0","id":2,"method":"reminder/wrap","params":{"key":"k","body":"b","nonce":123456789012345678901234567890}}\n'
    assert one(peer.feed(line))["error"]["code"] == PARAMS


def test_json_nested_ten_thousand_deep_is_refused_without_a_crash(peer):
    reply = one(peer.feed(b"[" * 10_000 + b"]" * 10_000 + b"\n"))
    assert reply["error"]["code"] == INVALID and reply["error"]["data"]["kind"] == "too_deep"
    line = b'{"jsonrpc":"2.0","id":1,"method":"reminder/wrap","params":{"key":"k","body":' + b"[" * 10_000 + b"]" * 10_000 + b"}}\n"
    assert one(peer.feed(line))["error"]["code"] == INVALID


def test_a_line_that_needs_the_fallback_parser_and_is_too_deep_is_answered_and_the_next_one_served(peer):
    deep = b'{"jsonrpc":"2.0","id":1,"method":"reminder/keys","params":{"a":"\\ud800","b":' + b"[" * 1000 + b"]" * 1000 + b"}}\n"
    first, second = peer.feed(deep + json.dumps(req(2, "reminder/keys")).encode() + b"\n")
    assert first["id"] is None and first["error"]["code"] == INVALID
    assert second["id"] == 2


def test_an_escaped_lone_surrogate_is_kept_and_written_back_as_the_same_escape(peer):
    peer.feed(b'{"jsonrpc":"2.0","id":1,"method":"reminder/wrap","params":{"key":"k","body":"a\\ud800b"}}\n')
    assert bytes(peer.out) == b'{"jsonrpc":"2.0","id":1,"result":{"text":"<system-reminder key=\\"k\\">\\na\\ud800b\\n</system-reminder>"}}\n'


def test_duplicate_keys_take_the_last_value(peer):
    reply = one(peer.feed(b'{"jsonrpc":"2.0","id":1,"method":"reminder/wrap","params":{"key":"first","key":"last","body":""}}\n'))
    assert reply["result"]["text"].startswith('<system-reminder key="last">')


def test_a_trailing_carriage_return_blank_lines_and_a_line_split_over_chunks_are_tolerated(peer):
    assert peer.feed(b'\n\r\n{"jsonrpc":"2.0","id":1,') == []
    assert one(peer.feed(b'"method":"reminder/keys"}\r\n'))["id"] == 1


def test_unknown_and_notification_only_methods_are_method_not_found(peer):
    for method in ("no/such", "exit", "$/cancelRequest"):
        reply = one(peer.send(req(1, method)))
        assert reply["error"]["code"] == NOT_FOUND and reply["error"]["data"] == {"kind": "method_not_found", "method": method}


def test_a_long_unknown_method_name_is_echoed_cut(peer):
    reply = one(peer.send(req(1, "m" * 5000)))
    assert reply["error"]["data"]["method"] == "m" * rpc.MAX_ECHOED_METHOD


def test_invalid_params_name_the_fields_without_echoing_input(peer):
    reply = one(peer.send(req(1, "reminder/wrap", {"key": 5, "bodyy": "secret-body-text"})))
    error = reply["error"]
    assert error["code"] == PARAMS and error["data"]["kind"] == "invalid_params"
    assert {"key", "body", "bodyy"} <= {e["field"] for e in error["data"]["errors"]}
    assert "secret-body-text" not in json.dumps(reply)


def test_positional_params_are_invalid_params(peer):
    reply = one(peer.send(req(1, "reminder/wrap", ["k", "b"])))
    assert reply["error"]["code"] == PARAMS and reply["error"]["data"]["kind"] == "positional_params"


def test_an_unexpected_failure_is_internal_error_without_details_and_the_traceback_goes_to_the_log(peer):
    reply = one(peer.send(req(1, "test/explode", {})))
    assert reply["error"] == {"code": INTERNAL, "message": "Internal error", "data": {"kind": "internal"}}
    assert "RuntimeError" in peer.log.getvalue() and "secret internal detail" in peer.log.getvalue()
    assert "result" in one(peer.send(req(2, "reminder/keys")))


def test_a_fault_in_the_read_path_is_answered_internal_error_and_the_next_line_is_served(peer, monkeypatch):
    real = rpc.decode

    def breaks_once(line):
        if b"boom" in line:
            raise RecursionError("deep")
        return real(line)

    monkeypatch.setattr(rpc, "decode", breaks_once)
    first, second = peer.feed(b'{"boom":1}\n' + json.dumps(req(2, "reminder/keys")).encode() + b"\n")
    assert first == {"jsonrpc": "2.0", "id": None, "error": {"code": INTERNAL, "message": "Internal error", "data": {"kind": "internal"}}}
    assert second["id"] == 2
    assert any(isinstance(e, rpc.Diagnostic) and e.event == "internal_error" and "RecursionError" in e.fields["traceback"] for e in peer.events)


# ---- size limit --------------------------------------------------------------------------------


def test_a_line_over_the_limit_is_answered_with_its_id_and_the_next_line_is_served():
    peer = Driver(max_message_bytes=4096)
    big = b'{"jsonrpc":"2.0","id":1,"method":"reminder/wrap","params":{"key":"k","body":"' + b"x" * 100_000 + b'"}}\n'
    assert peer.feed(big[:50_000]) == []
    first, second = peer.feed(big[50_000:] + b'{"jsonrpc":"2.0","id":2,"method":"reminder/keys"}\n')
    assert first["id"] == 1 and first["error"]["code"] == INVALID and first["error"]["data"] == {"kind": "too_large", "limit": 4096}
    assert second["id"] == 2
    assert any(isinstance(e, rpc.Diagnostic) and e.event == "line_too_long" and e.fields["with_id"] for e in peer.events)


def test_an_oversized_line_reusing_an_id_in_flight_is_answered_with_id_null():
    peer = Driver(max_message_bytes=4096)
    assert peer.send(req(7, "test/sleep", {"ms": 1})) == []
    big = b'{"jsonrpc":"2.0","id":7,"method":"reminder/wrap","params":{"key":"k","body":"' + b"x" * 10_000 + b'"}}\n'
    assert one(peer.feed(big))["id"] is None


def test_a_new_limit_applies_from_the_next_bytes_read():
    peer = Driver(max_message_bytes=1 << 20)
    peer.conn.max_message_bytes = 100
    reply = one(peer.send(req(1, "reminder/wrap", {"key": "k", "body": "x" * 200})))
    assert reply["error"]["data"] == {"kind": "too_large", "limit": 100}


# ---- batches -------------------------------------------------------------------------------------


def test_an_empty_batch_is_one_invalid_request(peer):
    reply = one(peer.send([]))
    assert isinstance(reply, dict) and reply["error"]["data"]["kind"] == "empty_batch"


def test_a_batch_of_non_objects_gets_one_error_each(peer):
    reply = one(peer.send([1, 2, 3]))
    assert isinstance(reply, list) and len(reply) == 3
    assert all(r["error"]["code"] == INVALID and r["id"] is None for r in reply)


def test_a_mixed_batch_answers_requests_and_errors_in_member_order_but_not_notifications(peer):
    reply = one(peer.send([req(1, "reminder/wrap", WRAP), note("reminder/keys"), 7, req(2, "no/such")]))
    assert [r["id"] for r in reply] == [1, None, 2]
    assert "result" in reply[0] and reply[1]["error"]["code"] == INVALID and reply[2]["error"]["code"] == NOT_FOUND


def test_an_all_notification_batch_gets_no_reply_at_all(peer):
    assert peer.send([note("reminder/keys"), note("reminder/wrap", WRAP)]) == []


def test_a_batch_with_a_waiting_member_is_answered_whole_once_the_last_member_is(peer):
    assert peer.send([req("b1", "test/sleep", {"ms": 1}), req("b2", "reminder/keys")]) == []
    reply = one(peer.answer("b1", {"tag": "late"}))
    assert {r["id"]: r for r in reply}["b1"]["result"] == {"tag": "late"}
    assert [r["id"] for r in reply] == ["b1", "b2"]


def test_a_batch_member_can_be_cancelled_and_the_batch_is_still_answered_whole(peer):
    peer.send([req("b1", "test/sleep", {"ms": 1}), req("b2", "reminder/keys")])
    reply = one(peer.send(note("$/cancelRequest", {"id": "b1"})))
    by_id = {r["id"]: r for r in reply}
    assert by_id["b1"]["error"]["code"] == CANCELLED and "result" in by_id["b2"]


def test_two_members_of_one_batch_with_the_same_id_the_second_is_refused(peer):
    reply = one(peer.send([req(1, "reminder/wrap", WRAP), req(1, "reminder/keys")]))
    assert "result" in reply[0] and reply[1] == {"jsonrpc": "2.0", "id": None, "error": {"code": INVALID, "message": "Request id is already in flight", "data": {"kind": "duplicate_id", "id": 1}}}


def test_notifications_are_never_answered_even_when_they_fail(peer):
    assert peer.send(note("reminder/wrap", {"key": "bad key", "body": ""}), note("no/such"), note("initialize", {})) == []
    ignored = [e.fields["method"] for e in peer.events if isinstance(e, rpc.Diagnostic) and e.event == "notification_ignored"]
    assert ignored == ["no/such", "initialize"]


# ---- in-flight ids and cancellation ------------------------------------------------------------


def test_a_reused_in_flight_id_is_refused_and_the_original_still_answered(peer):
    assert peer.send(req(5, "test/sleep", {"ms": 1, "tag": "original"})) == []
    duplicate = one(peer.send(req(5, "test/sleep", {"ms": 0, "tag": "copy"})))
    assert duplicate["id"] is None and duplicate["error"]["data"] == {"kind": "duplicate_id", "id": 5}
    assert one(peer.answer(5, {"tag": "original"}))["result"]["tag"] == "original"
    # Once answered, the id may be used again.
    assert peer.send(req(5, "test/sleep", {"ms": 0})) == [] and 5 in peer.held


def test_an_id_answered_inline_is_free_for_the_next_line_of_the_same_chunk(peer):
    replies = peer.send(req(1, "reminder/keys"), req(1, "reminder/keys"))
    assert [("result" in r, r["id"]) for r in replies] == [(True, 1), (True, 1)]


def test_a_cancelled_request_is_answered_request_cancelled(peer):
    peer.send(req(9, "test/sleep", {"ms": 10_000}))
    reply = one(peer.send(note("$/cancelRequest", {"id": 9})))
    assert reply["id"] == 9 and reply["error"] == {"code": CANCELLED, "message": "Request cancelled", "data": {"kind": "cancelled"}}


@pytest.mark.parametrize("params", [{"id": "nope"}, {"id": True}, {"id": None}, {}, [9], None])
def test_cancelling_an_unknown_or_malformed_id_is_ignored(peer, params):
    peer.send(req(9, "test/sleep", {"ms": 1}))
    assert peer.send(note("$/cancelRequest", params)) == []
    assert not any(isinstance(e, rpc.Cancel) for e in peer.events) and 9 in peer.held


def test_answering_an_id_that_is_not_in_flight_is_a_usage_error(peer):
    with pytest.raises(rpc.ProtocolUsageError):
        peer.conn.send_result(1, {})


# ---- lifecycle -------------------------------------------------------------------------------------


def test_initialize_answers_with_its_own_version_when_the_client_asks_for_an_unknown_one(peer):
    result = one(peer.send(req(1, "initialize", {"protocol_version": "1999-01-01", "client_info": {"name": "t"}})))["result"]
    assert result["protocol_version"] != "1999-01-01"
    assert "reminder/wrap" in result["methods"] and result["server_info"]["name"] == "promptd"


def test_initialize_twice_is_an_error(peer):
    peer.send(req(1, "initialize", {}))
    assert one(peer.send(req(2, "initialize", {})))["error"]["data"]["kind"] == "already_initialized"


def test_initialize_with_invalid_config_is_an_error_and_changes_nothing(peer):
    reply = one(peer.send(req(1, "initialize", {"config": {"reminders": {"style": "smoke-signals"}}})))
    assert reply["error"]["data"]["kind"] == "invalid_config"
    assert "result" in one(peer.send(req(2, "initialize", {})))


def test_rpc_discover_returns_the_committed_openrpc_document(peer):
    from conftest import ROOT

    assert one(peer.send(req(1, "rpc.discover")))["result"] == json.loads((ROOT / "protocol" / "openrpc.json").read_text("utf-8"))


def test_after_shutdown_requests_are_refused_and_notifications_ignored_and_exit_is_zero(peer):
    assert "result" in one(peer.send(req("bye", "shutdown")))
    assert peer.conn.state is rpc.State.SHUTTING_DOWN
    reply = one(peer.send(req(2, "reminder/keys")))
    assert reply["id"] == 2 and reply["error"]["code"] == SHUT_DOWN and reply["error"]["data"] == {"kind": "shut_down"}
    assert peer.send(note("reminder/keys")) == []
    assert peer.send(note("exit")) == [] and peer.exit_code == 0 and peer.conn.state is rpc.State.CLOSED


def test_exit_without_shutdown_ends_with_one_and_nothing_after_it_is_read(peer):
    assert peer.send(note("exit"), req(1, "reminder/keys")) == []
    assert peer.exit_code == 1
    assert peer.send(req(2, "reminder/keys")) == [] and peer.feed(b"") == []


def test_exit_cancels_what_is_running_and_every_request_is_answered(peer):
    replies = peer.send(*[req(n, "test/sleep", {"ms": 5000}) for n in range(3)], req("quick", "reminder/keys"), note("exit"))
    by_id = {r["id"]: r for r in replies}
    assert "result" in by_id["quick"] and all(by_id[n]["error"]["code"] == CANCELLED for n in range(3))
    assert [e.code for e in peer.events if isinstance(e, rpc.Exit)] == [1]


def test_batch_members_after_an_exit_member_are_cancelled_in_the_same_answer(peer):
    reply = one(peer.send([req(1, "reminder/keys"), note("exit"), req(2, "reminder/keys")]))
    assert "result" in reply[0] and reply[1]["error"]["code"] == CANCELLED and peer.exit_code == 1


def test_a_shutdown_is_marked_when_read_so_a_second_one_in_the_same_chunk_is_refused():
    peer = Driver(held_methods=frozenset({"shutdown"}))
    (second,) = peer.send(req("s1", "shutdown"), req("s2", "shutdown"))
    assert second["id"] == "s2" and second["error"]["code"] == SHUT_DOWN
    assert "s1" in peer.held
    assert one(peer.answer("s1", {}))["result"] == {}


def test_sigterm_refuses_new_requests_like_shutdown(peer):
    peer.conn.start_shutdown()
    assert one(peer.send(req(1, "reminder/keys")))["error"]["code"] == SHUT_DOWN


def test_end_of_input_serves_an_unterminated_last_line_then_ends_with_zero(peer):
    assert peer.feed(json.dumps(req(1, "reminder/keys")).encode()) == []
    assert one(peer.feed(b""))["id"] == 1
    assert isinstance(peer.events[-1], rpc.EndOfInput) and peer.exit_code == 0
    assert peer.conn.next_event() is None


def test_after_end_of_input_what_is_still_in_flight_is_answered(peer):
    peer.send(req("slow", "test/sleep", {"ms": 1}))
    peer.conn.receive_data(b"")
    assert isinstance(peer.conn.next_event(), rpc.EndOfInput) and peer.conn.state is rpc.State.CLOSED
    assert frames(peer.conn.send_result("slow", {"tag": ""}))[0]["id"] == "slow"


# ---- calls to the client ---------------------------------------------------------------------------


def test_a_call_to_the_client_is_settled_once_by_its_reply(peer):
    call_id, data = peer.conn.start_call("provider/produce", {"provider": "p"})
    assert call_id.startswith("promptd-") and frames(data)[0]["method"] == "provider/produce"
    assert peer.conn.calls_waiting == 1
    assert peer.send({"jsonrpc": "2.0", "id": call_id, "result": {"a": 42}}) == []
    assert peer.events[-1] == rpc.Reply(call_id, {"a": 42}, None)
    peer.send({"jsonrpc": "2.0", "id": call_id, "error": {"code": 1, "message": "no"}})
    assert peer.events[-1] == rpc.Diagnostic("debug", "reply_discarded", {"known": False})
    assert peer.conn.end_call(call_id, answered=True) == b""


def test_a_client_error_reply_reaches_the_caller(peer):
    call_id, _ = peer.conn.start_call("test/question", {})
    peer.send({"jsonrpc": "2.0", "id": call_id, "error": {"code": 1, "message": "no"}})
    assert peer.events[-1] == rpc.Reply(call_id, None, {"code": 1, "message": "no"})


def test_a_call_we_stop_waiting_for_is_cancelled_at_the_client_and_its_late_answer_discarded(peer):
    call_id, _ = peer.conn.start_call("test/question", {})
    assert frames(peer.conn.end_call(call_id, answered=False)) == [{"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": call_id}}]
    assert peer.send({"jsonrpc": "2.0", "id": call_id, "result": "too late"}, {"jsonrpc": "2.0", "id": "never-asked", "result": 1}) == []
    assert not any(isinstance(e, rpc.Reply) for e in peer.events) and peer.conn.calls_waiting == 0


def test_notifications_we_send_are_plain_frames(peer):
    assert peer.conn.send_notification("event/spilled", {"path": "/p"}) == encode({"jsonrpc": "2.0", "method": "event/spilled", "params": {"path": "/p"}})


# ---- independence from how the input is cut ----------------------------------------------------


@settings(max_examples=25, deadline=None)
@given(st.sampled_from(sorted(WIRE_VECTORS.glob("*.json"))), st.lists(st.integers(1, 64), min_size=1, max_size=8))
def test_every_wire_vector_gives_the_same_frames_however_its_bytes_are_cut(path, cuts):
    case = load(path)
    data = b"".join(piece for piece in chunks(case) if isinstance(piece, bytes))
    whole = Driver(max_message_bytes=case.get("max_message_bytes", 16 << 20))
    expected = whole.feed(data) + whole.feed(b"")
    peer = Driver(max_message_bytes=case.get("max_message_bytes", 16 << 20))
    got, at, step = [], 0, 0
    while at < len(data):
        size = cuts[step % len(cuts)]
        got += peer.feed(data[at : at + size])
        at, step = at + size, step + 1
    got += peer.feed(b"")
    assert got == expected and peer.exit_code == whole.exit_code


# ---- what a request weighs ------------------------------------------------------------------------


class _Known:
    notification = False
    lifecycle = False


def test_a_call_carries_the_bytes_of_its_line_and_a_batch_member_its_share():
    conn = rpc.Connection({"m": _Known()}, 1 << 20)
    single = json.dumps(req(1, "m", {"pad": "p" * 1000})).encode()
    batch = json.dumps([req(2, "m"), req(3, "m")]).encode()
    conn.receive_data(single + b"\n" + batch + b"\n")
    calls = [event for event in iter(conn.next_event, None) if isinstance(event, rpc.Call)]
    assert [(call.id, call.size) for call in calls] == [(1, len(single)), (2, len(batch) // 2), (3, len(batch) // 2)]
