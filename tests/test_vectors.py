"""Replays protocol/vectors/ over the wire and in-process: the same files the Node
and Go suites replay. Method vectors (`<area>/<case>.json`) are one request each; wire vectors
(`wire/<case>.json`) are raw bytes in and frames out, replayed against the protocol connection in
memory and against spawned servers."""

from __future__ import annotations

import json

import pytest
from conftest import VECTORS, call_in_process
from support import wire

from promptd.methods.boundary import RpcFailure

CASES = sorted(path for path in VECTORS.glob("*/*.json") if path.parent.name != "wire")
WIRE_CASES = sorted(wire.WIRE_VECTORS.glob("*.json"))


def load(path):
    return json.loads(path.read_text("utf-8"))


def check(case, reply):
    expect = case["expect"]
    if "result" in expect:
        assert "error" not in reply, reply
        assert reply["result"] == expect["result"]
    else:
        assert "error" in reply, reply
        assert reply["error"]["code"] == expect["error"]["code"]
        assert reply["error"].get("data", {}).get("kind") == expect["error"]["kind"]


def test_there_are_vectors_for_every_area():
    assert len(CASES) >= 10


def test_every_vector_replays_over_one_server(served):
    for path in CASES:
        case = load(path)
        reply = served.request(case["method"], case["params"])
        check(case, reply)


@pytest.mark.parametrize("path", CASES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_vector_in_process(path):
    from promptd.methods import TABLE

    case = load(path)
    if case["method"] not in TABLE:
        pytest.skip("unknown-method vectors are served by the transport only")
    try:
        reply = {"result": call_in_process(case["method"], case["params"])}
    except RpcFailure as failure:
        reply = {"error": {"code": failure.code, "message": failure.message, "data": failure.data}}
    check(case, reply)


def test_there_are_wire_vectors_for_every_kind_of_input():
    assert len(WIRE_CASES) >= 20


@pytest.mark.parametrize("path", WIRE_CASES, ids=lambda p: p.stem)
def test_wire_vector_against_the_connection_in_memory(path):
    wire.replay_in_memory(wire.load(path))


def test_every_wire_vector_replays_against_the_stdio_transport_over_pipes():
    # One transport per vector (each vector ends its server), all running at once in this process.
    wire.replay_over_pipes([wire.load(path) for path in WIRE_CASES])


def test_a_whole_session_vector_replays_against_a_spawned_server():
    # The full lifecycle, down to the process's own exit status (the Node and Go suites replay
    # every vector this way).
    wire.replay_spawned([wire.load(wire.WIRE_VECTORS / "shutdown_refuses_then_exit_zero.json")])
