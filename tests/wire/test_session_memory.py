"""The resident memory of a spawned `promptd serve` while many sessions send huge values."""

from __future__ import annotations

from support.processes import MIB, rss_kib


def test_many_sessions_with_huge_values_do_not_grow_the_process(spawn):
    served = spawn()
    before = rss_kib(served.proc.pid)
    big = "v" * (8 * MIB)
    for n in range(12):
        answer = served.request("session/update", {"session": f"s{n}", "env": {"K": big}}, timeout=60)
        assert answer["error"]["code"] == -32602 and answer["error"]["data"]["kind"] == "value_too_large"
        answer = served.request("session/update", {"session": f"s{n}", "modified_files": [big]}, timeout=60)
        assert answer["error"]["data"]["field"] == "modified_files"
    # A value that fits is still taken, and the server answers as before.
    assert served.call("session/update", {"session": "s0", "cwd": "/w"}, timeout=60) == {}
    # 12 refused 8 MiB values in each of two fields: kept, they would be 192 MiB.
    assert rss_kib(served.proc.pid) - before < 64 * 1024
    assert served.close(timeout=60) == 0


def test_many_sessions_delivering_huge_directives_do_not_grow_the_process(spawn, tmp_path):
    served = spawn(env={"PROMPTD_REMINDERS__SPILL_DIR": str(tmp_path / "spill")})
    served.call("initialize", {"config": {"reminders": {"session_metadata": False, "project_memory": False}}}, timeout=60)
    before = rss_kib(served.proc.pid)
    for n in range(8):
        directive = chr(ord("a") + n) * (4 * MIB)
        served.call("reminder/assemble", {"session": f"s{n}", "directives": [directive]}, timeout=60)
        served.call("turn/complete", {"session": f"s{n}"}, timeout=60)
        served.call("reminder/assemble", {"session": f"s{n}", "directives": [directive + "x"]}, timeout=60)
    # Kept as text, the 8 sessions' two 4 MiB directives would be 64 MiB.
    assert rss_kib(served.proc.pid) - before < 40 * 1024
    assert served.close(timeout=60) == 0
