"""A second reference point: the least an asyncio program can do to answer the same lines (the
loop reads the pipe, answers each line at once, no validation, no tasks). promptd is built on
asyncio, so this is the floor its round trip can approach; the synchronous baseline is the floor of
Python itself."""

import asyncio
import os

import orjson


class Answer(asyncio.Protocol):
    def __init__(self, done: asyncio.Future) -> None:
        self.done = done
        self.buffer = b""

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        *lines, self.buffer = self.buffer.split(b"\n")
        out = []
        for line in lines:
            request = orjson.loads(line)
            params = request.get("params") or {}
            body = str(params.get("body", "")).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            text = f'<system-reminder key="{params.get("key", "")}">\n{body}\n</system-reminder>'
            out.append(orjson.dumps({"jsonrpc": "2.0", "id": request["id"], "result": {"text": text}}) + b"\n")
        if out:
            os.write(1, b"".join(out))

    def eof_received(self) -> bool:
        self.done.set_result(None)
        return False


async def main() -> None:
    loop = asyncio.get_running_loop()
    done = loop.create_future()
    await loop.connect_read_pipe(lambda: Answer(done), os.fdopen(0, "rb", buffering=0))
    await done


if __name__ == "__main__":
    asyncio.run(main())
