"""Project memory over a spawned `promptd serve` whose own environment holds a secret: a memory
file linked to /proc/self/environ (the process's environment as it started) is skipped and nothing
of it reaches the result or the log."""

from __future__ import annotations

from support.projects import MEMORY_SECRET as SECRET
from support.projects import assemble, repo_at


def test_over_the_wire_a_symlink_to_proc_self_environ_is_skipped_and_logged_without_content(spawn, tmp_path):
    server = spawn(env={"PROMPTD_TEST_SECRET": SECRET, "PROMPTD_REMINDERS__SESSION_METADATA": "false", "HOME": str(tmp_path / "home")})
    repo = repo_at(tmp_path / "repo")
    (repo / "AGENTS.md").symlink_to("/proc/self/environ")
    server.call("session/update", {"session": "m", "cwd": str(repo)})
    result = assemble(server, "m")
    assert SECRET not in result["body"] and SECRET not in result["text"]
    assert {s["provider"]: s["reason"] for s in result["skipped"]} == {"memory.project_md": "error"}
    logs = server.stderr_text()
    assert '"provider_skipped"' in logs and "AGENTS.md (symlink)" in logs
    assert SECRET not in logs
