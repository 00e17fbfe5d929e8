"""`initialize` reports the server's effective limits (after its own `config` is applied), so a
client can follow them without being told by hand."""

from __future__ import annotations

from conftest import call_in_process

from promptd.config import Config
from promptd.runtime import Runtime


def test_defaults_in_process():
    result = call_in_process("initialize", {}, Runtime(Config()))
    assert result["limits"] == {"max_message_bytes": 16 << 20, "provider_timeout_ms": 2000}
    assert result["offset_unit"] == "code_points"


def test_initialize_config_is_applied_before_the_limits_are_reported():
    config = {"max_message_bytes": 65536, "reminders": {"provider_timeout_ms": 750}}
    result = call_in_process("initialize", {"config": config}, Runtime(Config()))
    assert result["limits"] == {"max_message_bytes": 65536, "provider_timeout_ms": 750}


def test_limits_from_the_environment_over_the_wire(spawn):
    server = spawn(env={"PROMPTD_MAX_MESSAGE_BYTES": "200000", "PROMPTD_REMINDERS__PROVIDER_TIMEOUT_MS": "1500"})
    limits = server.call("initialize", {"client_info": {"name": "t"}})["limits"]
    assert limits == {"max_message_bytes": 200000, "provider_timeout_ms": 1500}


def test_the_reported_message_limit_is_the_one_enforced(spawn):
    server = spawn()
    limit = server.call("initialize", {"config": {"max_message_bytes": 4096}})["limits"]["max_message_bytes"]
    assert limit == 4096

    # A request line of exactly the limit is read; one byte more is refused as too large.
    def line_of(size: int) -> bytes:
        head = b'{"jsonrpc":"2.0","id":7,"method":"citation/strip","params":{"text":"'
        tail = b'"}}'
        return head + b"x" * (size - len(head) - len(tail)) + tail

    server.send_raw(line_of(limit) + b"\n")
    assert server.read()["id"] == 7
    server.send_raw(line_of(limit + 1) + b"\n")
    reply = server.read()
    assert reply["error"]["data"]["kind"] == "too_large" and reply["error"]["data"]["limit"] == limit
