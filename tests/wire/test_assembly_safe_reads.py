"""File providers under the safe-read rule, over a spawned `promptd serve`: a path that breaks the
rule is skipped `unsafe` and nothing of it reaches a result, an event or the log; a provider can
never block promptd's own input; a regular file is still delivered."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from conftest import Served

MARKER = "sk-promptd-environ-marker-6d1f0c2a"
# A spawned test never waits on a short wall-clock timeout (docs/STYLE: CI machines are loaded).
WAIT = 60.0
QUIET = {
    "PROMPTD_REMINDERS__SESSION_METADATA": "false",
    "PROMPTD_REMINDERS__PROJECT_MEMORY": "false",
    "PROMPTD_REMINDERS__FILE_MODIFIED": "false",
    "PROMPTD_TODO_NUDGE__ENABLED": "false",
}


@pytest.fixture
def repo(tmp_path) -> Path:
    folder = tmp_path / "repo"
    (folder / ".git").mkdir(parents=True)
    (folder / "docs").mkdir()
    return folder


@pytest.fixture
def server(spawn, tmp_path) -> Served:
    """A server with the marker in its own environment, subscribed to every event."""
    served = spawn(env={**QUIET, "PROMPTD_TEST_MARKER": MARKER, "PROMPTD_REMINDERS__SPILL_DIR": str(tmp_path / "spill")})
    served.call("initialize", {"capabilities": {"events": True}}, timeout=WAIT)
    return served


def exchange(server: Served, method: str, params: dict[str, Any]) -> tuple[dict[str, Any], list[bytes]]:
    """Sends one request; its reply and every raw line that came before it (events)."""
    ident = f"x-{method}-{os.urandom(4).hex()}"
    server.send({"jsonrpc": "2.0", "id": ident, "method": method, "params": params})
    lines = []
    while True:
        line = server.read_line(WAIT)
        lines.append(line)
        frame = json.loads(line)
        if frame.get("id") == ident and "method" not in frame:
            return frame, lines


def compose(server: Served, session: str, repo: Path) -> tuple[dict[str, Any], list[bytes]]:
    server.call("session/update", {"session": session, "cwd": str(repo)}, timeout=WAIT)
    return exchange(server, "turn/compose", {"session": session, "user_message": "hi"})


def skipped(reply: dict[str, Any]) -> dict[str, str]:
    return {s["provider"]: s["reason"] for s in reply["result"]["reminder"]["skipped"]}


def register(server: Served, name: str, path: str, **fields: Any) -> None:
    server.call("providers/register", {"name": name, "kind": "file", "key": "memory.notes", "path": path, "scope": "global", **fields}, timeout=WAIT)


def test_a_repository_file_linked_to_proc_self_environ_is_skipped_unsafe_and_the_environment_never_leaves(server, repo):
    (repo / "docs" / "SPRINT.md").symlink_to("/proc/self/environ")
    register(server, "sprint", "docs/SPRINT.md")
    reply, lines = compose(server, "s1", repo)
    assert skipped(reply) == {"sprint": "unsafe"}
    assert all(MARKER.encode() not in line for line in lines)
    events = [json.loads(line) for line in lines if b'"method"' in line]
    assert [e["params"]["reason"] for e in events if e["method"] == "event/provider_skipped"] == ["unsafe"]
    logs = server.stderr_text()
    assert '"provider_skipped"' in logs and '"unsafe"' in logs and MARKER not in logs


def test_proc_environ_by_absolute_path_is_skipped_unsafe(server, repo):
    register(server, "environ", f"/proc/{server.proc.pid}/environ")
    register(server, "self", "/proc/self/environ")
    reply, lines = compose(server, "s2", repo)
    assert skipped(reply) == {"environ": "unsafe", "self": "unsafe"}
    assert all(MARKER.encode() not in line for line in lines) and MARKER not in server.stderr_text()


@pytest.mark.parametrize("kind", ["stdin link", "stdin by path", "fifo"])
def test_a_provider_on_promptds_own_stdin_or_a_fifo_is_refused_and_the_next_requests_are_all_answered(server, repo, kind):
    if kind == "stdin link":
        (repo / "docs" / "NOTES.md").symlink_to("/proc/self/fd/0")
        path = "docs/NOTES.md"
    elif kind == "stdin by path":
        path = "/proc/self/fd/0"
    else:
        os.mkfifo(repo / "docs" / "NOTES.md")
        path = "docs/NOTES.md"
    register(server, "notes", path, timeout_ms=200)
    reply, _ = compose(server, "s3", repo)
    assert skipped(reply) == {"notes": "unsafe"}
    # A reader left blocked on promptd's stdin would swallow one of these.
    idents = [f"after-{n}" for n in range(5)]
    for ident in idents:
        server.send({"jsonrpc": "2.0", "id": ident, "method": "reminder/wrap", "params": {"key": "k", "body": ident}})
    answered = set()
    while len(answered) < len(idents):
        frame = server.read(WAIT)
        if frame.get("id") in idents:
            assert "result" in frame, frame
            answered.add(frame["id"])
    assert answered == set(idents)


def test_a_regular_file_in_the_repository_is_still_delivered(server, repo):
    (repo / "docs" / "SPRINT.md").write_text("Sprint goal: ship safe reads.")
    register(server, "sprint", "docs/SPRINT.md")
    reply, _ = compose(server, "s4", repo)
    assert skipped(reply) == {}
    assert "Sprint goal: ship safe reads." in reply["result"]["content"]


def test_missing_and_oversize_files_keep_their_own_reasons(server, repo):
    (repo / "docs" / "BIG.md").write_text("y" * 5000)
    register(server, "absent", "docs/ABSENT.md")
    register(server, "big", "docs/BIG.md", max_bytes=4096)
    register(server, "folder", "docs")
    reply, _ = compose(server, "s5", repo)
    assert skipped(reply) == {"absent": "missing", "big": "too_large", "folder": "missing"}
