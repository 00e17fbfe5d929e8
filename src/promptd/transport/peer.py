"""The client as a peer of the handlers: server-to-client requests (provider/produce) and events.

Transport layer, beside server.py: asyncio futures over promptd.rpc.connection's call bookkeeping,
frames through the one writer. Used only from the event loop's thread, except `notify`, which a
handler in a worker thread may call.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any

from promptd.rpc.connection import Connection, Reply
from promptd.transport.writer import FrameWriter


class ClientError(Exception):
    """The client answered a server-to-client request with an error."""

    def __init__(self, error: Any) -> None:
        super().__init__("client returned an error")
        self.error = error


class ClientPeer:
    def __init__(self, conn: Connection, writer: FrameWriter, loop: asyncio.AbstractEventLoop) -> None:
        self.conn = conn
        self.writer = writer
        self.loop = loop
        self._loop_thread = threading.get_ident()

    def notify(self, method: str, params: dict[str, Any]) -> None:
        data = self.conn.send_notification(method, params)
        if threading.get_ident() == self._loop_thread:
            self.writer.write(data)
        else:  # from a worker thread: the loop's thread keeps the writer's order
            self.loop.call_soon_threadsafe(self.writer.write, data)

    async def call(self, method: str, params: dict[str, Any], timeout_s: float) -> Any:
        future: asyncio.Future[Any] = self.loop.create_future()
        call_id, data = self.conn.start_call(method, params, future)
        self.writer.write(data)
        try:
            return await asyncio.wait_for(future, timeout_s)
        finally:
            self.writer.write(self.conn.end_call(call_id, answered=future.done() and not future.cancelled()))

    def settle(self, reply: Reply) -> bool:
        """Hands the client's answer to the call waiting for it; False when nothing waits any more."""
        future = reply.waiter
        if not isinstance(future, asyncio.Future) or future.done():
            return False
        if reply.error is not None:
            future.set_exception(ClientError(reply.error))
        else:
            future.set_result(reply.result)
        return True

    def fail_waiting(self, exc: Exception) -> None:
        """The client can no longer answer (its output ended): every call waiting fails now."""
        for future in self.conn.waiters():
            if isinstance(future, asyncio.Future) and not future.done():
                future.set_exception(exc)
