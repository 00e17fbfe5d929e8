"""JSON-RPC frames as raw bytes, for tests that write to a server's stdin themselves."""

from __future__ import annotations

import json

SHUT_DOWN, CANCELLED = -32002, -32800
WRAP = {"key": "k", "body": "b"}
EXIT = {"jsonrpc": "2.0", "method": "exit"}


def req(ident, method, params=None):
    frame = {"jsonrpc": "2.0", "id": ident, "method": method}
    if params is not None:
        frame["params"] = params
    return frame


def lines(*frames):
    return b"".join(json.dumps(f).encode() + b"\n" for f in frames)


# A custom template whose render runs for hours in a worker thread without growing its output:
# the handler cannot be interrupted, so only the process's own exit can end it.
ENDLESS = req("render", "prompt/render", {"context": {"system_prompt": {"custom": "${% for i in range(100000) %}${% for j in range(100000) %}${% endfor %}${% endfor %}"}}})
