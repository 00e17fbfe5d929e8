"""The floor of promptd's required stack at start-up: an interpreter that imports asyncio, orjson
and pydantic, validates one request's params with one model, and answers. Nothing promptd does
before its first answer can cost less than this (bench/startup.py measures both in one run)."""

import asyncio  # noqa: F401 - imported because promptd's transport needs it: part of the floor
import sys

import orjson
import pydantic


class WrapParams(pydantic.BaseModel):
    key: str
    body: str


def main() -> None:
    out = sys.stdout.buffer
    for line in sys.stdin.buffer:
        request = orjson.loads(line)
        params = WrapParams.model_validate(request.get("params") or {"key": "k", "body": ""})
        out.write(orjson.dumps({"jsonrpc": "2.0", "id": request["id"], "result": {"text": params.body}}) + b"\n")
        out.flush()


if __name__ == "__main__":
    main()
