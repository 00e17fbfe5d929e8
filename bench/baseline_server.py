"""The near-limit baseline: the least a Python process can do to answer line-delimited JSON-RPC
with orjson. No validation, no concurrency, no threads: it reads a line, builds the same answer
`reminder/wrap` would, and writes it. promptd is measured against this in the same run."""

import sys

import orjson


def main() -> None:
    out = sys.stdout.buffer
    for line in sys.stdin.buffer:
        request = orjson.loads(line)
        params = request.get("params") or {}
        body = str(params.get("body", "")).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
        text = f'<system-reminder key="{params.get("key", "")}">\n{body}\n</system-reminder>'
        out.write(orjson.dumps({"jsonrpc": "2.0", "id": request["id"], "result": {"text": text}}) + b"\n")
        out.flush()


if __name__ == "__main__":
    main()
