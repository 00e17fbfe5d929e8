"""The reader of the protocol's input descriptor, with pause and resume for back-pressure.

Transport layer, beside server.py: hands each chunk read (b"" at the end) to `feed` on the event
loop's thread. Pipes and sockets are read by the event loop itself (no thread hop per request);
anything else (a regular file, a terminal, which must not be made non-blocking) by a thread.
"""

from __future__ import annotations

import asyncio
import os
import stat
import threading
from collections.abc import Callable

READ_CHUNK = 1 << 16


class InputReader(asyncio.Protocol):
    def __init__(self, fd: int, feed: Callable[[bytes], None]) -> None:
        self.fd = fd
        self.feed = feed
        self._transport: asyncio.ReadTransport | None = None
        self._room = threading.Event()  # the go-ahead to read
        self._room.set()

    async def start(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        mode = os.fstat(self.fd).st_mode
        if stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode):
            pipe = os.fdopen(os.dup(self.fd), "rb", buffering=0)
            await loop.connect_read_pipe(lambda: self, pipe)
        else:
            threading.Thread(target=self._read_loop, name="promptd-reader", daemon=True).start()

    @property
    def paused(self) -> bool:
        return not self._room.is_set()

    def pause(self) -> None:
        if self._transport is not None:
            self._transport.pause_reading()
        self._room.clear()

    def resume(self) -> None:
        self._room.set()
        if self._transport is not None:
            self._transport.resume_reading()

    def close(self) -> None:
        """Closes the pipe transport (and the duplicate of the descriptor it reads). The reading
        thread of a file or terminal needs nothing: it ends at end of input or with the process."""
        if self._transport is not None:
            self._transport.close()
            self._transport = None

    def _read_loop(self) -> None:
        while True:
            self._room.wait()
            try:
                chunk = os.read(self.fd, READ_CHUNK)
            except OSError:
                chunk = b""
            try:
                self._loop.call_soon_threadsafe(self.feed, chunk)
            except RuntimeError:
                return  # the loop is gone
            if not chunk:
                return

    # asyncio.Protocol, for pipes and sockets

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        if isinstance(transport, asyncio.ReadTransport):
            self._transport = transport

    def data_received(self, data: bytes) -> None:
        self.feed(data)

    def eof_received(self) -> bool:
        self.feed(b"")
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        if exc is not None:
            self.feed(b"")
