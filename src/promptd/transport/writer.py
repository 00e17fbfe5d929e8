"""The single writer of the protocol descriptor, with back-pressure.

Transport layer, beside server.py: threads and descriptors, no protocol knowledge (frames arrive
already encoded by promptd.rpc.connection). Nothing else writes to the protocol descriptor.
"""

from __future__ import annotations

import os
import select
import stat
import threading
from collections.abc import Callable

# Answers written but not yet read by the client: above the high mark reading pauses, below the
# low mark it resumes. Bounds memory when a client stops reading yet keeps sending.
BACKLOG_HIGH = 32 << 20
BACKLOG_LOW = 8 << 20
# At exit, answers still unread are flushed for this long: a client that stopped reading cannot
# hold the process, one that reads slowly still gets its answers.
CLOSE_TIMEOUT_S = 5.0


class FrameWriter:
    """The single writer of the protocol descriptor.

    On a pipe or socket the descriptor is non-blocking and a frame is written at once from the
    caller's thread when nothing is waiting (no thread hop on the hot path); whatever does not fit
    becomes a backlog that one writer thread drains in order as the client reads. Any other
    descriptor (a file, a terminal, which must not be made non-blocking) is always written by the
    writer thread. Either way frames leave in the order they were sent and coalesce under load.
    """

    def __init__(self, fd: int, on_room: Callable[[], None] | None = None, on_broken: Callable[[], None] | None = None) -> None:
        self.fd = fd
        self._on_room = on_room
        # Called once, from whichever thread saw it, when the client stops reading for good.
        self._on_broken = on_broken
        self._pending_bytes = 0
        self._over_high = False
        mode = os.fstat(fd).st_mode
        self._direct = stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)
        if self._direct:
            os.set_blocking(fd, False)
        self._lock = threading.Lock()
        self._backlog = bytearray()
        self._wake = threading.Condition(self._lock)
        self._closing = False
        self._broken = False
        self._draining = False
        # Frames collected while the loop handles one chunk of input (loop thread only).
        self._held: list[bytes] | None = None
        self._thread = threading.Thread(target=self._run, name="promptd-writer", daemon=True)
        self._thread.start()

    def hold(self) -> None:
        """Collects frames instead of writing each: one write for a whole chunk of requests."""
        self._held = []

    def release(self) -> None:
        held, self._held = self._held, None
        if held:
            self._send_bytes(b"".join(held))

    def write(self, data: bytes) -> None:
        """Queues encoded frames (one or more whole lines) to be written in order."""
        if not data:
            return
        if self._held is not None:
            self._held.append(data)
            return
        self._send_bytes(data)

    def _send_bytes(self, data: bytes) -> None:
        with self._lock:
            if self._broken:
                return
            if self._direct and not self._backlog and not self._draining:
                data = self._write_some(data)
                if not data:
                    return
            self._backlog += data
            self._pending_bytes += len(data)
            if self._pending_bytes > BACKLOG_HIGH:
                # Sticky until the backlog falls below the low mark, however the thread's drains
                # happen to be cut: the reader paused on it waits for that one signal.
                self._over_high = True
            self._wake.notify()

    def congested(self) -> bool:
        """Unread answers went over the high mark and have not yet fallen below the low mark: the
        reader should not take requests."""
        return self._over_high

    def close(self, timeout: float = CLOSE_TIMEOUT_S) -> None:
        with self._lock:
            self._closing = True
            self._wake.notify()
        self._thread.join(timeout)

    def _write_some(self, data: bytes) -> bytes:
        """Writes what the descriptor takes now; returns the rest. Called with the lock held."""
        try:
            written = os.write(self.fd, data)
        except BlockingIOError:
            return data
        except OSError:
            self._break()  # the client went away; frames are dropped, nothing blocks
            return b""
        return data[written:]

    def _break(self) -> None:
        """Marks the descriptor broken (called with the lock held) and tells the server once."""
        if self._broken:
            return
        self._broken = True
        if self._on_broken is not None:
            self._on_broken()

    def _run(self) -> None:
        while True:
            with self._lock:
                while not self._backlog and not self._closing:
                    self._wake.wait()
                if not self._backlog or self._broken:
                    return
                pending = bytes(self._backlog)
                self._backlog.clear()
                # While the thread writes outside the lock, senders must queue, not write.
                self._draining = True
            self._drain(pending)
            with self._lock:
                self._draining = False
                self._pending_bytes -= len(pending)
                room = self._over_high and self._pending_bytes <= BACKLOG_LOW
                if room:
                    self._over_high = False
            if room and self._on_room is not None:
                self._on_room()

    def _drain(self, data: bytes) -> None:
        """Writes `data` fully, waiting for the descriptor to take it."""
        view = memoryview(data)
        while view:
            try:
                written = os.write(self.fd, view)
            except BlockingIOError:
                select.select([], [self.fd], [], 1.0)
                continue
            except OSError:
                with self._lock:
                    self._break()
                return
            view = view[written:]
