"""The transport over a real spawned process: framing, errors, batches, concurrency,
cancellation, lifecycle and stdout protection."""

from __future__ import annotations

import json
import signal
import time

import pytest

PARSE, INVALID, NOT_FOUND, PARAMS, INTERNAL, SHUT_DOWN, CANCELLED = -32700, -32600, -32601, -32602, -32603, -32002, -32800


def req(ident, method, params=None):
    frame = {"jsonrpc": "2.0", "id": ident, "method": method}
    if params is not None:
        frame["params"] = params
    return frame


WRAP = {"key": "k", "body": "b"}


def test_invalid_json_is_a_parse_error_with_null_id_and_the_next_line_is_served(shared_served):
    shared_served.send_raw(b'{"jsonrpc": "2.0", "id": 1,\n')
    reply = shared_served.read()
    assert reply["id"] is None and reply["error"]["code"] == PARSE
    assert "result" in shared_served.request("reminder/wrap", WRAP)


def test_invalid_utf8_is_a_parse_error(shared_served):
    shared_served.send_raw(b'{"jsonrpc":"2.0","id":1,"method":"reminder/wrap","params":{"key":"k","body":"\xff\xfe"}}\n')
    reply = shared_served.read()
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
def test_malformed_requests_are_invalid_request(shared_served, frame, kind):
    shared_served.send(frame)
    reply = shared_served.read()
    assert reply["error"]["code"] == INVALID
    assert reply["error"]["data"]["kind"] == kind


def test_a_non_object_message_is_invalid_request(shared_served):
    shared_served.send(42)
    reply = shared_served.read()
    assert reply == {"jsonrpc": "2.0", "id": None, "error": {"code": INVALID, "message": "Invalid Request", "data": {"kind": "not_an_object"}}}


@pytest.mark.parametrize("ident", ["abc", "", 0, -7, 2**63 - 1, -(2**63)])
def test_string_and_integer_ids_are_echoed_exactly(shared_served, ident):
    shared_served.send(req(ident, "reminder/wrap", WRAP))
    reply = shared_served.read()
    assert reply["id"] == ident and "result" in reply


@pytest.mark.parametrize("ident", [None, 1.5, True, False, {"a": 1}, [1]])
def test_null_fractional_boolean_and_structured_ids_are_refused(shared_served, ident):
    shared_served.send(req(ident, "reminder/wrap", WRAP))
    reply = shared_served.read()
    assert reply["id"] is None
    assert reply["error"]["code"] == INVALID and reply["error"]["data"]["kind"] == "invalid_id"


def test_an_id_beyond_64_bits_is_refused_and_a_big_integer_in_params_is_not_a_crash(shared_served):
    shared_served.send_raw(b'{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"reminder/keys"}\n')
    assert shared_served.read()["error"]["code"] == INVALID
    shared_served.send_raw(b'{"jsonrpc":"2.0","id":2,"method":"reminder/wrap","params":{"key":"k","body":"b","nonce":123456789012345678901234567890}}\n')
    assert shared_served.read()["error"]["code"] == PARAMS
    assert "result" in shared_served.request("reminder/keys")


def test_json_nested_ten_thousand_deep_is_refused_without_a_crash(shared_served):
    shared_served.send_raw(b"[" * 10_000 + b"]" * 10_000 + b"\n")
    reply = shared_served.read()
    assert reply["error"]["code"] == INVALID and reply["error"]["data"]["kind"] == "too_deep"
    shared_served.send_raw(b'{"jsonrpc":"2.0","id":1,"method":"reminder/wrap","params":{"key":"k","body":' + b"[" * 10_000 + b"]" * 10_000 + b"}}\n")
    assert shared_served.read()["error"]["code"] == INVALID
    assert "result" in shared_served.request("reminder/keys")


def test_an_escaped_lone_surrogate_becomes_a_replacement_character(shared_served):
    shared_served.send_raw(b'{"jsonrpc":"2.0","id":1,"method":"reminder/wrap","params":{"key":"k","body":"a\\ud800b"}}\n')
    assert shared_served.read()["result"]["text"] == '<system-reminder key="k">\na\ufffdb\n</system-reminder>'


def test_duplicate_keys_take_the_last_value(shared_served):
    shared_served.send_raw(b'{"jsonrpc":"2.0","id":1,"method":"reminder/wrap","params":{"key":"first","key":"last","body":""}}\n')
    assert shared_served.read()["result"]["text"].startswith('<system-reminder key="last">')


def test_a_trailing_carriage_return_and_blank_lines_are_tolerated(shared_served):
    shared_served.send_raw(b'\n\r\n{"jsonrpc":"2.0","id":1,"method":"reminder/keys"}\r\n')
    assert shared_served.read()["id"] == 1


def test_unknown_method_is_method_not_found(shared_served):
    reply = shared_served.request("no/such")
    assert reply["error"]["code"] == NOT_FOUND and reply["error"]["data"]["kind"] == "method_not_found"


def test_invalid_params_name_the_fields_without_echoing_input(shared_served):
    reply = shared_served.request("reminder/wrap", {"key": 5, "bodyy": "secret-body-text"})
    error = reply["error"]
    assert error["code"] == PARAMS and error["data"]["kind"] == "invalid_params"
    fields = {e["field"] for e in error["data"]["errors"]}
    assert {"key", "body", "bodyy"} <= fields
    assert "secret-body-text" not in json.dumps(reply)


def test_positional_params_are_invalid_params(shared_served):
    reply = shared_served.request("reminder/wrap", ["k", "b"])
    assert reply["error"]["code"] == PARAMS and reply["error"]["data"]["kind"] == "positional_params"


def test_an_unexpected_failure_is_internal_error_without_details_and_the_traceback_goes_to_stderr(testserver):
    reply = testserver.request("test/explode", {})
    assert reply["error"] == {"code": INTERNAL, "message": "Internal error", "data": {"kind": "internal"}}
    assert "result" in testserver.request("reminder/keys")
    testserver.close()
    stderr = testserver.stderr_text()
    assert "RuntimeError" in stderr and "secret internal detail" in stderr


# ---- batches -----------------------------------------------------------------------------


def test_an_empty_batch_is_one_invalid_request(shared_served):
    shared_served.send([])
    reply = shared_served.read()
    assert isinstance(reply, dict) and reply["error"]["code"] == INVALID


def test_a_batch_of_non_objects_gets_one_error_each(shared_served):
    shared_served.send([1, 2, 3])
    reply = shared_served.read()
    assert isinstance(reply, list) and len(reply) == 3
    assert all(r["error"]["code"] == INVALID and r["id"] is None for r in reply)


def test_a_mixed_batch_answers_requests_and_errors_but_not_notifications(shared_served):
    shared_served.send([req(1, "reminder/wrap", WRAP), {"jsonrpc": "2.0", "method": "reminder/keys"}, 7, req(2, "no/such")])
    reply = shared_served.read()
    assert isinstance(reply, list)
    by_id = {r["id"]: r for r in reply if r["id"] is not None}
    assert "result" in by_id[1] and by_id[2]["error"]["code"] == NOT_FOUND
    assert sum(1 for r in reply if r["id"] is None) == 1
    assert len(reply) == 3


def test_an_all_notification_batch_gets_no_reply_at_all(shared_served):
    shared_served.send([{"jsonrpc": "2.0", "method": "reminder/keys"}, {"jsonrpc": "2.0", "method": "reminder/wrap", "params": WRAP}])
    shared_served.send(req("after", "reminder/keys"))
    assert shared_served.read()["id"] == "after"


def test_notifications_are_never_answered_even_when_they_fail(shared_served):
    shared_served.send({"jsonrpc": "2.0", "method": "reminder/wrap", "params": {"key": "bad key", "body": ""}})
    shared_served.send({"jsonrpc": "2.0", "method": "no/such"})
    shared_served.send(req("after", "reminder/keys"))
    assert shared_served.read()["id"] == "after"


# ---- size limit ---------------------------------------------------------------------------


def test_a_line_over_the_limit_is_answered_and_the_next_line_is_served(spawn):
    server = spawn(env={"PROMPTD_MAX_MESSAGE_BYTES": "4096"})
    big = b'{"jsonrpc":"2.0","id":1,"method":"reminder/wrap","params":{"key":"k","body":"' + b"x" * 100_000 + b'"}}\n'
    server.send_raw(big[:50_000])
    server.send_raw(big[50_000:] + b'{"jsonrpc":"2.0","id":2,"method":"reminder/keys"}\n')
    first = server.read()
    # The id is read from the line's start, so the client waiting for it is answered.
    assert first["id"] == 1 and first["error"]["code"] == INVALID and first["error"]["data"]["kind"] == "too_large"
    assert server.read()["id"] == 2


# ---- concurrency, cancellation, ids ----------------------------------------------------


def test_requests_run_concurrently_and_answers_come_out_of_order(shared_testserver):
    # Run one after the other, the slow request (sent first) would be answered first; the order
    # alone shows concurrency, with no wall-clock bound to flake on a loaded machine.
    shared_testserver.send(req("slow", "test/sleep", {"ms": 600}))
    shared_testserver.send(req("fast", "test/sleep", {"ms": 10}))
    first, second = shared_testserver.read(), shared_testserver.read()
    assert (first["id"], second["id"]) == ("fast", "slow")


def test_a_cancelled_request_is_answered_request_cancelled(shared_testserver):
    shared_testserver.send(req(9, "test/sleep", {"ms": 10_000}))
    time.sleep(0.1)
    shared_testserver.send({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": 9}})
    reply = shared_testserver.read(timeout=3)
    assert reply["id"] == 9 and reply["error"]["code"] == CANCELLED


def test_cancelling_an_unknown_id_is_ignored(shared_testserver):
    shared_testserver.send({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": "nope"}})
    assert shared_testserver.call("reminder/keys")


def test_a_reused_in_flight_id_is_refused_and_the_original_still_answered(shared_testserver):
    shared_testserver.send(req(5, "test/sleep", {"ms": 400, "tag": "original"}))
    time.sleep(0.05)
    shared_testserver.send(req(5, "test/sleep", {"ms": 0, "tag": "copy"}))
    duplicate = shared_testserver.read()
    assert duplicate["id"] is None and duplicate["error"]["data"] == {"kind": "duplicate_id", "id": 5}
    assert shared_testserver.read()["result"]["tag"] == "original"
    # Once answered, the id may be used again.
    shared_testserver.send(req(5, "test/sleep", {"ms": 0, "tag": "again"}))
    assert shared_testserver.read()["result"]["tag"] == "again"


# ---- lifecycle --------------------------------------------------------------------------


def test_initialize_answers_with_its_own_version_when_the_client_asks_for_an_unknown_one(served):
    result = served.call("initialize", {"protocol_version": "1999-01-01", "client_info": {"name": "t"}})
    assert result["protocol_version"] != "1999-01-01"
    assert "reminder/wrap" in result["methods"] and result["server_info"]["name"] == "promptd"


def test_initialize_twice_is_an_error(served):
    served.call("initialize", {})
    assert served.request("initialize", {})["error"]["data"]["kind"] == "already_initialized"


def test_initialize_with_invalid_config_is_an_error_and_changes_nothing(served):
    reply = served.request("initialize", {"config": {"reminders": {"style": "smoke-signals"}}})
    assert reply["error"]["data"]["kind"] == "invalid_config"
    assert served.call("initialize", {})


def test_rpc_discover_returns_the_committed_openrpc_document(shared_served):
    from conftest import ROOT

    assert shared_served.call("rpc.discover") == json.loads((ROOT / "protocol" / "openrpc.json").read_text("utf-8"))


def test_shutdown_drains_then_refuses_and_exit_ends_with_zero(testserver):
    testserver.send(req("work", "test/sleep", {"ms": 300}))
    testserver.send(req("bye", "shutdown"))
    first, second = testserver.read(), testserver.read()
    assert (first["id"], second["id"]) == ("work", "bye")
    reply = testserver.request("reminder/keys")
    assert reply["error"]["code"] == SHUT_DOWN
    testserver.send({"jsonrpc": "2.0", "method": "exit"})
    assert testserver.proc.wait(5) == 0


def test_exit_without_shutdown_ends_with_one(served):
    served.send({"jsonrpc": "2.0", "method": "exit"})
    assert served.proc.wait(5) == 1


def test_end_of_input_answers_every_request_in_flight_then_exits_zero(testserver):
    for n in range(5):
        testserver.send(req(n, "test/sleep", {"ms": 200 + 50 * n}))
    testserver.proc.stdin.close()
    answered = {testserver.read()["id"] for _ in range(5)}
    assert answered == set(range(5))
    assert testserver.proc.wait(5) == 0


def test_sigterm_mid_request_lets_the_request_finish_and_exits_zero(testserver):
    testserver.call("reminder/keys")  # up and serving: the signal handler is installed
    testserver.send(req("mid", "test/sleep", {"ms": 300}))
    time.sleep(0.1)
    testserver.proc.send_signal(signal.SIGTERM)
    assert testserver.read()["result"]["tag"] == ""
    assert testserver.proc.wait(5) == 0


def test_sigterm_cancels_what_outlives_the_deadline_and_still_answers_it(spawn):
    server = spawn(env={"PROMPTD_SHUTDOWN_DEADLINE_MS": "200"}, test_methods=True)
    server.call("reminder/keys")
    server.send(req("long", "test/sleep", {"ms": 30_000}))
    time.sleep(0.2)
    server.proc.send_signal(signal.SIGTERM)
    reply = server.read(timeout=5)
    assert reply["id"] == "long" and reply["error"]["code"] == CANCELLED
    assert server.proc.wait(5) == 0


# ---- stdout protection, server-to-client calls --------------------------------------------


def test_a_handler_printing_to_stdout_and_a_child_doing_so_do_not_corrupt_the_stream(testserver):
    reply = testserver.request("test/noisy", {"text": "NOT A FRAME"})
    assert reply["result"] == {}
    assert testserver.call("reminder/wrap", WRAP)["text"].startswith("<system-reminder")
    testserver.close()
    assert testserver.stderr_text().count("NOT A FRAME") == 2


def test_the_server_can_call_the_client_and_await_its_answer(shared_testserver):
    shared_testserver.send(req(1, "test/ask_client", {"timeout_ms": 3000}))
    question = shared_testserver.read()
    assert question["method"] == "test/question" and question["id"].startswith("promptd-")
    shared_testserver.send({"jsonrpc": "2.0", "id": question["id"], "result": {"a": 42}})
    assert shared_testserver.read()["result"] == {"answer": {"a": 42}, "failure": None}


def test_a_client_error_reply_reaches_the_handler(shared_testserver):
    shared_testserver.send(req(1, "test/ask_client", {"timeout_ms": 3000}))
    question = shared_testserver.read()
    shared_testserver.send({"jsonrpc": "2.0", "id": question["id"], "error": {"code": 1, "message": "no"}})
    assert shared_testserver.read()["result"]["failure"] == "ClientError"


def test_a_late_client_answer_is_discarded_and_the_server_cancels_what_it_stopped_waiting_for(shared_testserver):
    shared_testserver.send(req(1, "test/ask_client", {"timeout_ms": 100}))
    question = shared_testserver.read()
    cancel = shared_testserver.read()
    assert cancel == {"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": question["id"]}}
    assert shared_testserver.read()["result"]["failure"] == "timeout"
    shared_testserver.send({"jsonrpc": "2.0", "id": question["id"], "result": "too late"})
    shared_testserver.send({"jsonrpc": "2.0", "id": "never-asked", "result": 1})
    assert shared_testserver.call("reminder/keys")


def test_a_client_that_reads_slowly_gets_every_frame_whole_and_in_order(shared_served):
    # Enough pipelined answers to fill the pipe, so the writer thread's backlog path and direct
    # writes from the loop take turns.
    count = 3000
    body = "y" * 500
    shared_served.send_raw(b"".join(json.dumps(req(n, "reminder/wrap", {"key": "k", "body": body})).encode() + b"\n" for n in range(count)))
    time.sleep(0.5)
    seen = []
    for _ in range(count):
        frame = shared_served.read()
        assert frame["result"]["text"] == f'<system-reminder key="k">\n{body}\n</system-reminder>'
        seen.append(frame["id"])
    assert sorted(seen) == list(range(count))


def test_a_request_cancelled_in_the_same_chunk_before_it_ever_ran_is_still_answered(testserver):
    testserver.call("reminder/keys")
    frames = [req("early", "test/sleep", {"ms": 5000}), {"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": "early"}}]
    testserver.send_raw(b"".join(json.dumps(f).encode() + b"\n" for f in frames))
    reply = testserver.read(timeout=3)
    assert reply["id"] == "early" and reply["error"]["code"] == CANCELLED


def test_exit_in_the_same_chunk_as_requests_still_answers_every_one(testserver):
    testserver.call("reminder/keys")
    frames = [req(n, "test/sleep", {"ms": 5000}) for n in range(3)] + [req("quick", "reminder/keys"), {"jsonrpc": "2.0", "method": "exit"}]
    testserver.send_raw(b"".join(json.dumps(f).encode() + b"\n" for f in frames))
    answers = {}
    for _ in range(4):
        frame = testserver.read(timeout=5)
        answers[frame["id"]] = frame
    assert "result" in answers["quick"]
    assert all(answers[n]["error"]["code"] == CANCELLED for n in range(3))
    assert testserver.proc.wait(5) == 1


def test_a_batch_with_a_waiting_member_is_answered_whole_and_can_be_cancelled(testserver):
    testserver.call("reminder/keys")
    testserver.send([req("b1", "test/sleep", {"ms": 5000}), req("b2", "reminder/keys")])
    time.sleep(0.2)
    testserver.send({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": "b1"}})
    reply = testserver.read(timeout=3)
    by_id = {r["id"]: r for r in reply}
    assert by_id["b1"]["error"]["code"] == CANCELLED and "result" in by_id["b2"]


def test_two_shutdowns_in_one_chunk_do_not_wait_for_each_other(served):
    served.send_raw(json.dumps(req("s1", "shutdown")).encode() + b"\n" + json.dumps(req("s2", "shutdown")).encode() + b"\n")
    answers = {f["id"]: f for f in (served.read(timeout=5), served.read(timeout=5))}
    assert answers["s1"]["result"] == {} and answers["s2"]["error"]["code"] == SHUT_DOWN
    served.proc.stdin.close()
    assert served.proc.wait(5) == 0


def test_a_line_that_breaks_the_read_path_is_answered_and_the_next_one_served(shared_served):
    # Deep enough to exhaust the stdlib parser's stack, and with a lone surrogate so that parser runs.
    deep = b'{"jsonrpc":"2.0","id":1,"method":"reminder/keys","params":{"a":"\\ud800","b":' + b"[" * 1000 + b"]" * 1000 + b"}}\n"
    shared_served.send_raw(deep + json.dumps(req(2, "reminder/keys")).encode() + b"\n")
    first = shared_served.read()
    assert first["id"] is None and first["error"]["code"] == INVALID
    assert shared_served.read()["id"] == 2


def test_the_writer_reports_congestion_and_room_again(monkeypatch):
    import os as _os
    import threading as _threading

    from promptd import writer as server_module

    monkeypatch.setattr(server_module, "BACKLOG_HIGH", 256 << 10)
    monkeypatch.setattr(server_module, "BACKLOG_LOW", 64 << 10)
    read_end, write_end = _os.pipe()
    room = _threading.Event()
    writer = server_module.FrameWriter(write_end, on_room=room.set)
    from promptd.rpc.messages import encode

    frame = {"jsonrpc": "2.0", "id": 1, "result": {"text": "z" * 4000}}
    for _ in range(200):  # ~800 KiB, far more than a pipe holds
        writer.write(encode(frame))
    assert writer.congested()
    import select as _select

    received = 0
    deadline = time.monotonic() + 20
    while not room.is_set():
        assert time.monotonic() < deadline, "the writer never reported room"
        if _select.select([read_end], [], [], 0.1)[0]:
            received += len(_os.read(read_end, 1 << 16))
    assert not writer.congested() and received > 0
    _os.set_blocking(read_end, False)
    writer.close(timeout=0.1)
    _os.close(read_end)
