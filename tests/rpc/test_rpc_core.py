"""The sans-IO protocol core, in memory: framing, decoding, frames, outgoing call bookkeeping."""

from __future__ import annotations

import ast
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from promptd.rpc import codes
from promptd.rpc.framing import LineFramer, Oversize
from promptd.rpc.messages import Invalid, Notification, Request, Response, decode, encode
from promptd.rpc.outgoing import OutgoingCalls

RPC_DIR = Path(__file__).resolve().parents[2] / "src" / "promptd" / "rpc"


def test_lines_split_across_chunks_are_joined():
    framer = LineFramer(100)
    assert framer.feed(b'{"a"') == []
    assert framer.feed(b":1}\n{") == [b'{"a":1}']
    assert framer.feed(b"}\r\n") == [b"{}"]


def test_an_oversize_line_is_dropped_without_being_held_and_the_next_line_survives():
    framer = LineFramer(10)
    assert framer.feed(b"x" * 8) == []
    assert framer.feed(b"x" * 8) == []
    assert len(framer._buffer) == 0  # nothing of the long line is kept
    assert framer.feed(b"x" * 1000) == []
    assert framer.feed(b"xx\nok\n") == [Oversize(1018), b"ok"]


def test_a_final_unterminated_line_counts_at_close():
    framer = LineFramer(100)
    framer.feed(b'{"x":1}')
    assert framer.close() == [b'{"x":1}']


@given(st.lists(st.binary(max_size=40).filter(lambda b: b"\n" not in b), max_size=10), st.integers(1, 30))
def test_framing_is_independent_of_how_the_bytes_are_chunked(lines, step):
    data = b"".join(line + b"\n" for line in lines)
    whole = LineFramer(1000).feed(data)
    framer = LineFramer(1000)
    pieces = []
    for i in range(0, len(data), step):
        pieces.extend(framer.feed(data[i : i + step]))
    assert pieces == whole


def test_requests_notifications_and_responses_are_told_apart():
    batch = decode(b'[{"jsonrpc":"2.0","id":1,"method":"m"},{"jsonrpc":"2.0","method":"n","params":[]},{"jsonrpc":"2.0","id":"promptd-1","result":3}]')
    assert batch.batch
    assert [type(m) for m in batch.messages] == [Request, Notification, Response]


def test_invalid_json_and_too_deep_json_are_distinguished():
    assert decode(b"{").messages[0].frame["error"]["code"] == codes.PARSE_ERROR
    deep = decode(b"[" * 5000 + b"]" * 5000).messages[0]
    assert isinstance(deep, Invalid) and deep.frame["error"]["data"]["kind"] == "too_deep"


def test_nan_and_infinity_are_not_json():
    assert decode(b'{"jsonrpc":"2.0","id":1,"method":"m","params":{"x":NaN}}').messages[0].frame["error"]["code"] == codes.PARSE_ERROR


@given(st.recursive(st.none() | st.booleans() | st.integers() | st.text(), lambda c: st.lists(c) | st.dictionaries(st.text(), c), max_leaves=20))
def test_decode_never_raises_on_any_json_value(value):
    import json

    decode(json.dumps(value).encode())


@given(st.binary(max_size=200))
def test_decode_never_raises_on_any_bytes(data):
    decode(data)


def test_encode_ends_every_frame_with_one_newline_and_writes_big_integers_in_full():
    assert encode({"a": 1}) == b'{"a":1}\n'
    assert encode({"a": 2**70}) == b'{"a":1180591620717411303424}\n'


def test_outgoing_ids_are_prefixed_and_settled_once():
    calls = OutgoingCalls()
    call_id, frame = calls.start("provider/produce", {"provider": "p"})
    assert call_id.startswith("promptd-") and frame["method"] == "provider/produce"
    assert calls.settle(Response(call_id, result=1)) == (call_id, None)
    assert calls.settle(Response(call_id, result=1)) is None


def test_a_forgotten_call_discards_its_late_reply():
    calls = OutgoingCalls()
    call_id, _ = calls.start("m", {})
    calls.forget(call_id)
    assert calls.settle(Response(call_id, result=1)) is None


def test_the_protocol_core_does_no_io_and_knows_no_domain():
    forbidden = {"asyncio", "sys", "os", "socket", "subprocess", "threading"}
    for path in RPC_DIR.glob("*.py"):
        tree = ast.parse(path.read_text("utf-8"))
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            for name in names:
                root = name.split(".")[0]
                assert root not in forbidden, f"{path.name} imports {name}"
                if name.startswith("promptd."):
                    # Its own modules, and the base's JSON codec (which imports nothing of promptd's).
                    assert name.startswith("promptd.rpc") or name == "promptd.exactjson", f"{path.name} imports {name}"


def test_deep_json_that_also_needs_the_fallback_parser_is_too_deep_not_a_crash():
    deep = b'{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":"\\ud800","b":' + b"[" * 1000 + b"]" * 1000 + b"}}"
    message = decode(deep).messages[0]
    assert isinstance(message, Invalid) and message.frame["error"]["data"]["kind"] == "too_deep"


def test_numbers_read_the_same_whichever_parser_a_line_needs():
    plain = decode(b'{"jsonrpc":"2.0","id":1,"method":"m","params":{"big":123456789012345678901234567890}}').messages[0]
    with_surrogate = decode(b'{"jsonrpc":"2.0","id":1,"method":"m","params":{"s":"\\ud800","big":123456789012345678901234567890}}').messages[0]
    assert plain.params["big"] == with_surrogate.params["big"] == 123456789012345678901234567890
    for line in (b'{"jsonrpc":"2.0","id":1,"method":"m","params":{"x":1e400}}', b'{"jsonrpc":"2.0","id":1,"method":"m","params":{"s":"\\ud800","x":1e400}}'):
        assert decode(line).messages[0].frame["error"]["code"] == codes.PARSE_ERROR


def test_a_callers_waiter_comes_back_with_its_reply_and_is_listed_until_then():
    calls = OutgoingCalls()
    waiter, other = object(), object()
    call_id, _ = calls.start("m", {}, waiter)
    calls.start("m", {}, other)
    assert calls.waiters() == [waiter, other]
    assert calls.settle(Response(call_id, result=1)) == (call_id, waiter)
    assert calls.waiters() == [other]
