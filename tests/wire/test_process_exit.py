"""The process around the transport: it ends at its deadline whatever a worker is doing (exit, end
of input, SIGTERM, each with an endless render left running), and nothing a handler or a child
prints reaches the protocol stream. The transport's own behaviour is tested in-thread in
tests/transport/test_server_wire.py."""

from __future__ import annotations

import signal
import time

from support.frames import CANCELLED, ENDLESS, EXIT, WRAP, lines, req


def test_exit_cancels_and_answers_every_running_request_and_ends_while_a_thread_renders(testserver):
    testserver.call("reminder/keys")
    testserver.send(ENDLESS)
    time.sleep(0.2)  # the render is running in its worker thread
    testserver.send_raw(lines(*[req(n, "test/sleep", {"ms": 5000}) for n in range(3)], req("quick", "reminder/keys"), EXIT))
    answers = {}
    for _ in range(5):
        frame = testserver.read(timeout=60)
        answers[frame["id"]] = frame
    assert "result" in answers["quick"]
    assert all(answers[n]["error"]["code"] == CANCELLED for n in (0, 1, 2, "render"))
    assert testserver.wait(60) == 1


def test_shutdown_then_exit_ends_with_zero_while_a_thread_renders(spawn):
    # `exit` lets a draining shutdown finish, but only up to the shutdown deadline.
    served = spawn(env={"PROMPTD_SHUTDOWN_DEADLINE_MS": "300"})
    served.send(ENDLESS)
    time.sleep(0.2)
    served.send(req("bye", "shutdown"))  # waits for the render, which never ends by itself
    assert served.nothing_within(0.3)
    served.send(EXIT)
    answers = {f["id"]: f for f in (served.read(timeout=60), served.read(timeout=60))}
    assert answers["render"]["error"]["code"] == CANCELLED and answers["bye"]["error"]["code"] == CANCELLED
    assert served.wait(60) == 0


def test_end_of_input_answers_what_finishes_in_time_cancels_the_rest_and_exits_zero(spawn):
    server = spawn(env={"PROMPTD_SHUTDOWN_DEADLINE_MS": "600"}, test_methods=True)
    server.call("reminder/keys")
    server.send(ENDLESS)
    for n in range(5):
        server.send(req(n, "test/sleep", {"ms": 100 + 20 * n}))
    time.sleep(0.2)
    server.close_input()
    answers = {}
    for _ in range(6):
        frame = server.read(timeout=60)
        answers[frame["id"]] = frame
    assert all("result" in answers[n] for n in range(5))
    assert answers["render"]["error"]["code"] == CANCELLED
    assert server.wait(60) == 0


def test_sigterm_lets_a_request_finish_cancels_what_outlives_the_deadline_and_exits_zero(spawn):
    server = spawn(env={"PROMPTD_SHUTDOWN_DEADLINE_MS": "600"}, test_methods=True)
    server.call("reminder/keys")  # up and serving: the signal handler is installed
    server.send(ENDLESS)
    server.send(req("mid", "test/sleep", {"ms": 300}))
    time.sleep(0.2)
    server.proc.send_signal(signal.SIGTERM)
    assert server.read()["id"] == "mid"
    reply = server.read(timeout=60)
    assert reply["id"] == "render" and reply["error"]["code"] == CANCELLED
    assert server.wait(60) == 0


def test_a_handler_printing_to_stdout_and_a_child_doing_so_do_not_corrupt_the_stream(testserver):
    reply = testserver.request("test/noisy", {"text": "NOT A FRAME"})
    assert reply["result"] == {}
    assert testserver.call("reminder/wrap", WRAP)["text"].startswith("<system-reminder")
    testserver.close()
    assert testserver.stderr_text().count("NOT A FRAME") == 2
