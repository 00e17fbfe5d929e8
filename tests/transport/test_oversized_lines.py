"""A line over max_message_bytes: discarded with bounded memory, answered -32600 with the request's
id when its first bytes show it for certain, else id null."""

from __future__ import annotations

import time

import pytest

from promptd.rpc.framing import HEAD_BYTES, LineFramer, Oversize, peek_request_id

INVALID = -32600
LIMIT = 4096


def big_request(ident: str | int, pad: int = 100_000) -> bytes:
    ident_json = f'"{ident}"' if isinstance(ident, str) else str(ident)
    return b'{"jsonrpc":"2.0","id":' + ident_json.encode() + b',"method":"reminder/wrap","params":{"key":"k","body":"' + b"x" * pad + b'"}}\n'


# ---- reading the id from the head -------------------------------------------------------------


@pytest.mark.parametrize(
    "head,expected",
    [
        (b'{"jsonrpc":"2.0","id":7,"method":"m","params":{"body":"xxx', 7),
        (b'{"jsonrpc":"2.0","id":"req-1","method":"m","params":{"body":"xxx', "req-1"),
        (b' {\t"id" : -3 , "method" : "m" , "params" : [1, 2', -3),
        (b'{"id":"a\\u0062\\"c","params":{"x', 'ab"c'),  # escapes decoded as the full parse would
        (b'{"method":"m","id":9223372036854775807,"params":{', 2**63 - 1),
        (b'{"id":18446744073709551616,"method":"m","params":{', 2**64),  # read exactly, as the full parse does
        (b'{"jsonrpc":"2.0","id":1,"method":"m","note":"long string cut by the head', 1),
        (b'{"id":5,"params":{"x":1', 5),  # stopped at params: a request without a method seen yet
    ],
)
def test_the_id_is_read_when_it_is_certain(head, expected):
    assert peek_request_id(head) == expected


@pytest.mark.parametrize(
    "head",
    [
        b"",
        b"xxxxxxxx",
        b'[{"jsonrpc":"2.0","id":1,"method":"m","params":{',  # a batch: several ids
        b'{"jsonrpc":"2.0","method":"m","params":{"id":1,',  # nested id: not the request's
        b'{"jsonrpc":"2.0","params":{"x":1},"id":1,"method":"m"}',  # id after a nested value
        b'{"jsonrpc":"2.0","method":"m","params":{"x":"',  # a notification
        b'{"jsonrpc":"2.0","id":1,"result":{"text":"',  # a reply to a request of ours
        b'{"jsonrpc":"2.0","id":"promptd-3","error":{"code":1',
        b'{"id":1,"id":2,"method":"m","params":{',  # duplicate ids: the last wins in the parse
        b'{"id":1',  # the id may go on past the head
        b'{"id":"abc',
        b'{"id":1.0,"method":"m","params":{',  # not a valid id
        b'{"id":1e3,"method":"m","params":{',
        b'{"id":true,"method":"m","params":{',
        b'{"id":null,"method":"m","params":{',
        b'{"id":{"a":1},"method":"m","params":{',
        b'{"id":01,"method":"m","params":{',  # not JSON
        b'{"id":"\xff","method":"m","params":{',  # invalid UTF-8
        b'{"id":"a\x01","method":"m","params":{',  # raw control character
        b'{"id" 1,"method":"m","params":{',
        b'{"id":1 "method":"m","params":{',
        b'{"id":1}{"id":2,"method":"m","params":{',  # the object ends inside the head
        b'{"id":1,"other":"value cut by the head',  # neither a method nor params seen
        b'{"id":1,"method":"m","x":nope,"params":{',
        b'{"Id":1,"method":"m","params":{',  # keys are case-sensitive
    ],
)
def test_the_id_is_null_when_unsure(head):
    assert peek_request_id(head) is None


def test_reading_the_head_is_linear():
    # Many short members, the worst shape for a member-by-member reader.
    head = (b'{"method":"m"' + b',"a":1' * 1000)[:HEAD_BYTES]
    started = time.process_time()
    for _ in range(100):
        peek_request_id(head)
    assert time.process_time() - started < 2.0


# ---- the framer keeps only the head --------------------------------------------------------


def test_the_framer_keeps_at_most_the_head_of_a_discarded_line():
    framer = LineFramer(1024)
    line = big_request("r", pad=1 << 20)
    out = []
    for start in range(0, len(line), 1000):
        out += framer.feed(line[start : start + 1000])
        assert len(framer._buffer) <= 1024 and len(framer._head) <= HEAD_BYTES
    assert out == [Oversize(len(line) - 1)]
    assert out[0].head == line[:HEAD_BYTES]
    assert peek_request_id(out[0].head) == "r"


def test_the_head_is_cut_at_the_line_and_the_next_line_gets_its_own():
    framer = LineFramer(1024)
    out = framer.feed(b'{"id":1,"method":"m","params":"' + b"x" * 2000 + b'"}\n' + b'{"id":2}\n')
    assert len(out) == 2 and isinstance(out[0], Oversize) and out[1] == b'{"id":2}'
    assert out[0].head.endswith(b'"}') and b"\n" not in out[0].head
    out = framer.feed(b'{"id":3,' + b"y" * 5000 + b"\n")
    assert out[0].head.startswith(b'{"id":3,') and len(framer._head) == 0


def test_an_unterminated_oversize_line_at_end_of_input_keeps_its_head():
    framer = LineFramer(1024)
    framer.feed(b'{"jsonrpc":"2.0","id":4,"method":"m","params":{"b":"' + b"x" * 5000)
    (last,) = framer.close()
    assert isinstance(last, Oversize) and peek_request_id(last.head) == 4


# ---- over the wire -------------------------------------------------------------------------


def sent_in_pieces(server, data: bytes, piece: int = 50_000) -> None:
    for start in range(0, len(data), piece):
        server.send_raw(data[start : start + piece])


@pytest.mark.parametrize("ident", ["big-1", 42])
def test_an_oversize_request_is_answered_with_its_id_and_the_next_line_is_served(spawn, ident):
    server = spawn(env={"PROMPTD_MAX_MESSAGE_BYTES": str(LIMIT)})
    sent_in_pieces(server, big_request(ident) + b'{"jsonrpc":"2.0","id":"next","method":"reminder/keys"}\n')
    first = server.read()
    assert first["id"] == ident
    assert first["error"]["code"] == INVALID and first["error"]["data"] == {"kind": "too_large", "limit": LIMIT}
    assert server.read()["id"] == "next"
    assert server.close() == 0
    assert '"with_id":true' in server.stderr_text()


def test_an_oversize_line_whose_id_is_not_certain_is_answered_with_id_null(spawn):
    server = spawn(env={"PROMPTD_MAX_MESSAGE_BYTES": str(LIMIT)})
    sent_in_pieces(server, b'{"jsonrpc":"2.0","params":{"body":"' + b"x" * 100_000 + b'"},"id":1,"method":"reminder/wrap"}\n')
    first = server.read()
    assert first["id"] is None and first["error"]["data"]["kind"] == "too_large"
    assert "result" in server.request("reminder/keys")


def test_an_oversize_line_reusing_an_id_in_flight_is_answered_with_id_null(spawn):
    server = spawn(env={"PROMPTD_MAX_MESSAGE_BYTES": str(LIMIT)}, test_methods=True)
    server.send({"jsonrpc": "2.0", "id": "dup", "method": "test/sleep", "params": {"ms": 500}})
    sent_in_pieces(server, big_request("dup"))
    first = server.read()
    assert first["id"] is None and first["error"]["data"]["kind"] == "too_large"
    second = server.read()
    assert second["id"] == "dup" and "result" in second
