"""The process's memory while a huge line is discarded."""

from __future__ import annotations

import pytest
from support.processes import rss_kib

LIMIT = 4096  # max_message_bytes of these tests


@pytest.mark.skipif(not __import__("os").path.exists("/proc/self/status"), reason="needs /proc")
def test_memory_stays_bounded_while_a_huge_line_is_discarded(spawn):
    server = spawn(env={"PROMPTD_MAX_MESSAGE_BYTES": str(LIMIT)})
    server.call("reminder/keys")
    before = rss_kib(server.proc.pid, "VmRSS")
    chunk = b"x" * (1 << 20)
    server.send_raw(b'{"jsonrpc":"2.0","id":"huge","method":"reminder/wrap","params":{"body":"')
    for _ in range(64):  # 64 MiB, sixteen thousand times the limit
        server.send_raw(chunk)
    server.send_raw(b'"}}\n')
    reply = server.read(timeout=60)
    assert reply["id"] == "huge" and reply["error"]["data"]["kind"] == "too_large"
    # The peak over the whole run: well under one MiB of growth is expected; 16 MiB is slack.
    assert rss_kib(server.proc.pid, "VmHWM") - before < 16 * 1024
