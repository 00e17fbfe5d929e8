"""The threads provider file reads run in: `file` providers and project memory, and nothing else.

A read of a regular file cannot be interrupted or made non-blocking (O_NONBLOCK has no effect on
regular files), and a file on a FUSE or network mount whose server never answers holds its thread
forever; a provider's timeout only stops waiting for it. Were those reads in asyncio's default
executor, each stuck one would take a thread that renders, lint, citation/strip and every other
offloaded request share, until none was left. So they run here, on at most MAX_READERS threads of
their own: a stuck read can only hold one of these, so at worst later provider reads find no
thread, and they are skipped at once (`timeout`, with a detail saying so) instead of queued behind
reads that may never end. Threads are started on first use, are daemons (a stuck one never keeps
promptd from exiting) and wait for the next read when idle.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import queue
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from promptd.assembly.kinds import SkipReason
from promptd.assembly.model import ProviderSkipped

T = TypeVar("T")

MAX_READERS = 4

Job = tuple[Callable[[], Any], "concurrent.futures.Future[Any]"]


class Readers:
    """A bounded set of reader threads that refuses work rather than queue it."""

    def __init__(self, size: int = MAX_READERS) -> None:
        self.size = size
        self._lock = threading.Lock()
        self._busy = 0  # reads accepted and not yet returned (stuck ones included)
        self._threads = 0
        self._jobs: queue.SimpleQueue[Job] = queue.SimpleQueue()

    @property
    def busy(self) -> int:
        return self._busy

    async def run(self, work: Callable[[], T]) -> T:
        """`work()` on a reader thread; ProviderSkipped(timeout) at once when every thread is held
        by a read that has not returned. Cancelling the caller (a provider's timeout) stops the
        wait, never the read: its thread is free again only when the read returns."""
        with self._lock:
            if self._busy >= self.size:
                raise ProviderSkipped(SkipReason.TIMEOUT, f"all {self.size} provider read threads are held by earlier reads that have not returned")
            self._busy += 1
            # Never fewer threads than accepted reads: a read accepted always has a thread free.
            start = self._threads < self._busy
            if start:
                self._threads += 1
        future: concurrent.futures.Future[T] = concurrent.futures.Future()
        self._jobs.put((work, future))
        if start:
            threading.Thread(target=self._serve, name="promptd-provider-reader", daemon=True).start()
        return await asyncio.wrap_future(future)

    def _serve(self) -> None:
        while True:
            work, future = self._jobs.get()
            try:
                # False when the caller gave up before the read began: it is not started at all.
                if future.set_running_or_notify_cancel():
                    try:
                        result = work()
                    except BaseException as exc:
                        future.set_exception(exc)
                    else:
                        future.set_result(result)
            finally:
                with self._lock:
                    self._busy -= 1


# The one set of reader threads of the process.
READERS = Readers()
