"""The transport over real pipes, in a thread of the test's process: threads, cancellation of
running work, end of input, exit status, server-to-client calls, back-pressure and oversized lines.
What is about the process itself (its end whatever a worker does, signals, stdout protection) is in
tests/wire/test_process_exit.py.

The protocol's rules (decoding, refusals, ids, batches, lifecycle states) are tested in memory
against the connection in test_connection.py, and as raw-bytes wire vectors in test_vectors.py."""

from __future__ import annotations

import json
import time

from support.frames import CANCELLED, EXIT, SHUT_DOWN, WRAP, lines, req


def test_a_line_over_the_limit_is_answered_and_the_next_line_is_served(spawn):
    server = spawn(env={"PROMPTD_MAX_MESSAGE_BYTES": "4096"})
    big = b'{"jsonrpc":"2.0","id":1,"method":"reminder/wrap","params":{"key":"k","body":"' + b"x" * 100_000 + b'"}}\n'
    server.send_raw(big[:50_000])
    server.send_raw(big[50_000:] + b'{"jsonrpc":"2.0","id":2,"method":"reminder/keys"}\n')
    first = server.read()
    # The id is read from the line's start, so the client waiting for it is answered.
    assert first["id"] == 1 and first["error"]["data"]["kind"] == "too_large"
    assert server.read()["id"] == 2


# ---- concurrency and cancellation of running work -------------------------------------------


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
    reply = shared_testserver.read(timeout=60)
    assert reply["id"] == 9 and reply["error"]["code"] == CANCELLED


def test_a_request_cancelled_in_the_same_chunk_before_it_ever_ran_is_still_answered(shared_testserver):
    shared_testserver.send_raw(lines(req("early", "test/sleep", {"ms": 5000}), {"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": "early"}}))
    reply = shared_testserver.read(timeout=60)
    assert reply["id"] == "early" and reply["error"]["code"] == CANCELLED


def test_a_batch_with_a_waiting_member_is_answered_whole_and_can_be_cancelled(shared_testserver):
    shared_testserver.send([req("b1", "test/sleep", {"ms": 5000}), req("b2", "reminder/keys")])
    time.sleep(0.2)
    shared_testserver.send({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": "b1"}})
    reply = shared_testserver.read(timeout=60)
    by_id = {r["id"]: r for r in reply}
    assert by_id["b1"]["error"]["code"] == CANCELLED and "result" in by_id["b2"]


# ---- lifecycle and process exit -------------------------------------------------------------


def test_shutdown_drains_then_refuses_and_exit_ends_with_zero(testserver):
    testserver.send(req("work", "test/sleep", {"ms": 300}))
    testserver.send(req("bye", "shutdown"))
    first, second = testserver.read(), testserver.read()
    assert (first["id"], second["id"]) == ("work", "bye")
    assert testserver.request("reminder/keys")["error"]["code"] == SHUT_DOWN
    testserver.send(EXIT)
    assert testserver.wait(60) == 0


# The process must end at its deadline whatever a worker thread is doing: each test below leaves an
# endless render running in one. Before, the process logged "stopped" and then waited for that
# thread (proc.wait would time out here).


# ---- stdout protection, server-to-client calls, back-pressure ----------------------------------


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
    shared_served.send_raw(lines(*(req(n, "reminder/wrap", {"key": "k", "body": body}) for n in range(count))))
    time.sleep(0.5)
    seen = []
    for _ in range(count):
        frame = shared_served.read()
        assert frame["result"]["text"] == f'<system-reminder key="k">\n{body}\n</system-reminder>'
        seen.append(frame["id"])
    assert sorted(seen) == list(range(count))


def test_the_writer_reports_congestion_and_room_again(monkeypatch):
    import os
    import select
    import threading

    from promptd.rpc.messages import encode
    from promptd.transport import writer as writer_module

    monkeypatch.setattr(writer_module, "BACKLOG_HIGH", 256 << 10)
    monkeypatch.setattr(writer_module, "BACKLOG_LOW", 64 << 10)
    read_end, write_end = os.pipe()
    room = threading.Event()
    writer = writer_module.FrameWriter(write_end, on_room=room.set)
    frame = encode({"jsonrpc": "2.0", "id": 1, "result": {"text": "z" * 4000}})
    for _ in range(200):  # ~800 KiB, far more than a pipe holds
        writer.write(frame)
    assert writer.congested()
    received = 0
    deadline = time.monotonic() + 60
    while not room.is_set():
        assert time.monotonic() < deadline, "the writer never reported room"
        if select.select([read_end], [], [], 0.1)[0]:
            received += len(os.read(read_end, 1 << 16))
    assert not writer.congested() and received > 0
    os.set_blocking(read_end, False)
    writer.close(timeout=0.1)
    os.close(read_end)


def test_a_handler_that_ignores_its_cancellation_still_has_its_request_answered_once_at_exit(monkeypatch):
    # The real transport over pipes, in a thread of this process: the handler is defined here.
    import asyncio
    import os
    import threading

    from promptd.api.base import Empty
    from promptd.config import Config
    from promptd.logs import Logger
    from promptd.methods import TABLE
    from promptd.methods.base import Method
    from promptd.runtime import Runtime
    from promptd.transport import server as server_module
    from promptd.transport.server import Server

    monkeypatch.setattr(server_module, "STOP_GRACE_S", 0.1)

    async def stubborn(params, ctx):
        while True:
            try:
                await asyncio.sleep(60)
            except asyncio.CancelledError:
                continue

    table = {**TABLE, "test/stubborn": Method("test/stubborn", Empty, Empty, stubborn, "ignores cancellation")}
    in_r, in_w = os.pipe()
    out_r, out_w = os.pipe()
    server = Server(Runtime(Config(), Logger("warning")), in_r, out_w, table=table)
    status = []
    thread = threading.Thread(target=lambda: status.append(server.run()), daemon=True)
    thread.start()
    os.write(in_w, lines(req("s", "test/stubborn", {})))
    time.sleep(0.1)
    os.write(in_w, lines(EXIT))
    thread.join(60)
    assert status == [1]
    os.close(out_w)
    out = b""
    while chunk := os.read(out_r, 1 << 16):
        out += chunk
    assert [json.loads(line) for line in out.splitlines()] == [{"jsonrpc": "2.0", "id": "s", "error": {"code": CANCELLED, "message": "Request cancelled", "data": {"kind": "cancelled"}}}]
    for fd in (in_r, in_w, out_r):
        os.close(fd)


def test_a_stopped_server_leaves_no_descriptor_open_and_no_task_pending():
    import asyncio
    import os
    import threading

    from promptd.config import Config
    from promptd.logs import Logger
    from promptd.runtime import Runtime
    from promptd.transport.server import Server

    in_r, in_w = os.pipe()
    out_r, out_w = os.pipe()
    before = set(os.listdir("/proc/self/fd"))
    server = Server(Runtime(Config(), Logger("warning")), in_r, out_w)
    status = []
    thread = threading.Thread(target=lambda: status.append(server.run()), daemon=True)
    thread.start()
    os.write(in_w, lines(req(1, "reminder/wrap", WRAP), EXIT))
    thread.join(60)
    assert status == [1]
    # While the server object lives on: the pipe transport's duplicate of stdin is closed, not
    # left to the garbage collector, and no task of its loop (the spill sweeper) is left pending.
    assert set(os.listdir("/proc/self/fd")) <= before
    assert asyncio.all_tasks(server._loop) == set()
    for fd in (in_r, in_w, out_r, out_w):
        os.close(fd)


def test_input_from_a_regular_file_is_read_by_a_thread_and_served_to_its_end(tmp_path):
    # A file cannot be read by the event loop (nor made non-blocking): the reader thread's path.
    import os

    from promptd.config import Config
    from promptd.logs import Logger
    from promptd.runtime import Runtime
    from promptd.transport.server import Server

    source = tmp_path / "requests.jsonl"
    source.write_bytes(lines(req(1, "reminder/wrap", WRAP), req(2, "shutdown")) + json.dumps(req(3, "reminder/keys")).encode())
    out_r, out_w = os.pipe()
    with source.open("rb") as stdin:
        status = Server(Runtime(Config(), Logger("warning")), stdin.fileno(), out_w).run()
    os.close(out_w)
    out = b""
    while chunk := os.read(out_r, 1 << 16):
        out += chunk
    os.close(out_r)
    answers = {f["id"]: f for f in map(json.loads, out.splitlines())}
    assert status == 0 and "result" in answers[1] and answers[2]["result"] == {}
    assert answers[3]["error"]["code"] == SHUT_DOWN


def test_reading_pauses_while_the_lines_of_the_requests_in_flight_pass_max_in_flight_bytes(spawn):
    # A bound of 1 MiB: four sleeping requests of 300 KiB each pass it, so the line after them is
    # not read (and not answered), though it would be answered at once, until reading resumes at
    # half the bound: once at least three of them have finished.
    server = spawn(env={"PROMPTD_MAX_IN_FLIGHT_BYTES": str(1 << 20)}, test_methods=True)
    assert server.settled(timeout=60)
    heavy = b"".join(json.dumps({"jsonrpc": "2.0", "id": f"a{n}", "method": "test/sleep", "params": {"ms": 2000, "tag": "t" * (300 << 10)}}).encode() + b"\n" for n in range(4))
    # Leading blanks make the light line end in a later chunk than the heavy ones: it is read
    # only after the reader has looked at what is in flight.
    light = b" " * (512 << 10) + json.dumps({"jsonrpc": "2.0", "id": "light", "method": "reminder/keys"}).encode() + b"\n"
    server.send_raw(heavy + light)
    order = [server.read(timeout=60)["id"] for _ in range(5)]
    assert order.index("light") >= 3 and sorted(set(order) - {"light"}) == ["a0", "a1", "a2", "a3"]


def test_under_the_default_bound_the_same_flood_does_not_hold_up_a_light_request(shared_testserver):
    heavy = b"".join(json.dumps({"jsonrpc": "2.0", "id": f"d{n}", "method": "test/sleep", "params": {"ms": 2000, "tag": "t" * (300 << 10)}}).encode() + b"\n" for n in range(4))
    light = b" " * (512 << 10) + json.dumps({"jsonrpc": "2.0", "id": "light", "method": "reminder/keys"}).encode() + b"\n"
    shared_testserver.send_raw(heavy + light)
    order = [shared_testserver.read(timeout=60)["id"] for _ in range(5)]
    assert order[0] == "light"
