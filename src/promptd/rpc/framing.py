"""Bounded line framing: bytes in, complete lines (or over-limit notices) out.

A line longer than the limit is never held in memory: once the buffer passes the limit without a
newline, the framer drops what it has and keeps dropping until the next newline, then reports one
`Oversize` so the caller can answer it and serve the following line.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Oversize:
    """A line over the limit was discarded; `size` is how many bytes it had."""

    size: int


class LineFramer:
    def __init__(self, max_line_bytes: int) -> None:
        self.max_line_bytes = max_line_bytes
        self._buffer = bytearray()
        self._discarding = False
        self._discarded = 0

    def feed(self, data: bytes) -> list[bytes | Oversize]:
        out: list[bytes | Oversize] = []
        start = 0
        end = len(data)
        while start < end:
            newline = data.find(b"\n", start)
            if newline == -1:
                self._take(data[start:])
                break
            self._take(data[start:newline])
            out.append(self._finish_line())
            start = newline + 1
        return out

    def close(self) -> list[bytes | Oversize]:
        """End of input: a final unterminated line still counts as a line."""
        if self._discarding:
            return [self._finish_line()]
        if self._buffer.strip():
            return [self._finish_line()]
        self._buffer.clear()
        return []

    def _take(self, chunk: bytes) -> None:
        if self._discarding:
            self._discarded += len(chunk)
            return
        if len(self._buffer) + len(chunk) > self.max_line_bytes:
            self._discarding = True
            self._discarded = len(self._buffer) + len(chunk)
            self._buffer = bytearray()
            return
        self._buffer += chunk

    def _finish_line(self) -> bytes | Oversize:
        if self._discarding:
            self._discarding = False
            size, self._discarded = self._discarded, 0
            return Oversize(size)
        line = bytes(self._buffer)
        self._buffer.clear()
        if line.endswith(b"\r"):
            line = line[:-1]
        return line
