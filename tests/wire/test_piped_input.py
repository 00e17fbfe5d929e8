"""What a newcomer pipes into `promptd serve` in one write: every request is answered, parse
errors say why and where, and stderr holds JSON lines only, whatever is cancelled."""

from __future__ import annotations

import json
import subprocess

import pytest
from conftest import PROMPTD


def req(ident, method, params=None):
    frame = {"jsonrpc": "2.0", "id": ident, "method": method}
    if params is not None:
        frame["params"] = params
    return frame


EXIT = {"jsonrpc": "2.0", "method": "exit"}
COMPOSE = req(1, "turn/compose", {"session": "s", "user_message": "hi"})
CANCEL_1 = {"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": 1}}


def piped(*frames: object, raw: bytes = b"") -> tuple[dict[object, dict], list[dict], int]:
    """(answers by id, or by position for id null; stderr's lines as JSON; exit status)."""
    data = b"".join(json.dumps(f).encode() + b"\n" for f in frames) + raw
    done = subprocess.run([*PROMPTD, "serve"], input=data, capture_output=True, timeout=120)
    answers: dict[object, dict] = {}
    for n, line in enumerate(done.stdout.splitlines()):
        frame = json.loads(line)
        answers[frame["id"] if frame["id"] is not None else f"null{n}"] = frame
    # Every stderr line must be JSON: json.loads raises on a Python warning or a traceback.
    logs = [json.loads(line) for line in done.stderr.splitlines()]
    return answers, logs, done.returncode


@pytest.mark.parametrize(
    "frames",
    [
        pytest.param((COMPOSE, CANCEL_1), id="cancelled-before-it-ran"),
        pytest.param((COMPOSE, EXIT), id="exit-in-the-same-write"),
        pytest.param((req(1, "prompt/render", {"context": {}}), req(2, "content/sanitize", {"text": "x"}), EXIT), id="exit-behind-offloaded-work"),
        pytest.param((req(1, "shutdown"), EXIT), id="idle-shutdown-and-exit"),
    ],
)
def test_stderr_holds_json_lines_only_whatever_is_cancelled(frames):
    answers, logs, _ = piped(*frames)
    assert all("event" in entry for entry in logs)
    assert not [entry for entry in logs if entry["event"] == "python_warning"]
    # Exactly one answer per request.
    assert sorted(answers) == sorted(f["id"] for f in frames if "id" in f)


def test_initialize_requests_shutdown_and_exit_in_one_write_are_all_answered_and_exit_zero():
    answers, _, status = piped(req(1, "initialize", {}), req(2, "turn/compose", {"session": "s", "user_message": "hi"}), req(3, "reminder/keys"), req(4, "shutdown"), EXIT)
    assert all("result" in answers[n] for n in (1, 2, 3, 4))
    assert status == 0


def test_exit_without_shutdown_still_cancels_what_runs_and_exits_one():
    answers, _, status = piped(COMPOSE, EXIT)
    assert answers[1]["error"]["code"] == -32800 and status == 1


@pytest.mark.parametrize(
    ("raw", "reason", "offset"),
    [
        (b"nope\n", "invalid_json", 0),
        (b'{"a":NaN}\n', "invalid_json", 5),
        (b'{"x":"\xc3\xa9", oops}\n', "invalid_json", 11),  # bytes, not characters
        (b'{"jsonrpc":"2.0",\xff}\n', "invalid_utf8", 17),
        (b'{"a":1,\n', "invalid_json", 7),
    ],
)
def test_a_parse_error_says_why_and_at_which_byte(raw, reason, offset):
    answers, _, _ = piped(raw=raw)
    (answer,) = answers.values()
    assert answer["id"] is None and answer["error"]["code"] == -32700
    data = answer["error"]["data"]
    assert (data["kind"], data["reason"], data["offset"]) == ("parse_error", reason, offset)
    assert isinstance(data["detail"], str) and data["detail"]


def test_a_parse_error_never_echoes_the_line():
    answers, logs, _ = piped(raw=b'{"secret-token-123": oops}\n')
    assert "secret-token-123" not in json.dumps(answers) + json.dumps(logs)
