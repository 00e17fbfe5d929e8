"""Long fault cases (`make faults`): the short suite's faults repeated until a leak would show.

Skipped unless PROMPTD_FAULTS_LONG is set (`make faults` sets it), so `make test` stays short.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/wire: test_faults

from test_faults import SPIN, custom, gone_within, grandchild_script, linux_only, quiet_env, register, wait_for_file, workers_of  # noqa: E402

pytestmark = pytest.mark.skipif(not os.environ.get("PROMPTD_FAULTS_LONG"), reason="long fault cases: run with `make faults`")


def descriptors(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


@linux_only
def test_twenty_sigkills_of_promptd_mid_command_leave_no_provider_process_behind(spawn, tmp_path):
    for round_ in range(20):
        pids = tmp_path / f"pids{round_}"
        server = spawn(env=quiet_env(tmp_path))
        register(server, "lingers", kind="command", argv=grandchild_script(pids), timeout_ms=60_000)
        server.send({"jsonrpc": "2.0", "id": 1, "method": "reminder/assemble", "params": {"session": "s", "user_message": "hi"}})
        shell, grandchild = (int(p) for p in wait_for_file(pids).split())
        server.proc.send_signal(signal.SIGKILL)
        server.proc.wait(60)
        assert gone_within([shell, grandchild], 60), f"round {round_}: a provider process outlived promptd"


@linux_only
def test_two_hundred_cancelled_commands_with_grandchildren_leave_no_process_and_no_descriptor(spawn, tmp_path):
    server = spawn(env=quiet_env(tmp_path))
    register(server, "lingers", kind="command", argv=grandchild_script(tmp_path / "pids"), timeout_ms=60_000)
    server.call("reminder/keys")
    before = descriptors(server.proc.pid)
    seen: list[int] = []
    for n in range(200):
        (tmp_path / "pids").unlink(missing_ok=True)
        server.send({"jsonrpc": "2.0", "id": n, "method": "reminder/assemble", "params": {"session": "s", "user_message": "hi"}})
        seen += [int(p) for p in wait_for_file(tmp_path / "pids").split()]
        server.send({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": n}})
        assert server.read(timeout=60)["error"]["code"] == -32800
    assert gone_within(seen, 60), "a cancelled command's process outlived its request"
    # The warden's pipe is the one descriptor the first command may add.
    assert descriptors(server.proc.pid) <= before + 2


@linux_only
def test_a_hundred_render_timeouts_leave_a_bounded_number_of_workers_and_descriptors(spawn):
    server = spawn(env={"PROMPTD_PROMPT__RENDER_TIMEOUT_MS": "100"})
    assert server.call("prompt/render", custom("warm ${{ 1 }}"))["text"] == "warm 1"
    before = descriptors(server.proc.pid)
    for _ in range(100):
        reply = server.request("prompt/render", custom(SPIN), timeout=60)
        assert reply["error"]["data"]["kind"] == "render_timeout"
    assert server.call("prompt/render", custom("still ${{ 2 }}"))["text"] == "still 2"
    time.sleep(1)
    assert len(workers_of(server.proc.pid)) <= 3
    assert descriptors(server.proc.pid) <= before + 4


def test_a_host_that_never_answers_for_five_hundred_turns_is_skipped_every_time_and_promptd_stays_responsive(spawn, tmp_path):
    server = spawn(env=quiet_env(tmp_path))
    server.call("initialize", {"capabilities": {"host_providers": True}})
    register(server, "silent", kind="host", timeout_ms=20)
    for n in range(500):
        server.send({"jsonrpc": "2.0", "id": n, "method": "reminder/assemble", "params": {"session": f"s{n % 50}", "user_message": "hi"}})
        while True:
            frame = server.read(timeout=60)
            if frame.get("id") == n and "method" not in frame:
                break
        assert frame["result"]["skipped"][0]["reason"] == "timeout"
    assert server.call("reminder/keys")
