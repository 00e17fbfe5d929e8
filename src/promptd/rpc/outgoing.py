"""Bookkeeping for requests the server sends to the client (for example `provider/produce`).

Ids are strings with a prefix no client would pick for its own requests, so a reply can never be
mistaken for a client request and the two id spaces never collide. This is the one table of calls
waiting for the client: each id holds the caller's waiter (the transport's future), which comes
back with the reply, so no other layer keeps a second table.
"""

from __future__ import annotations

import itertools
from typing import Any

from promptd.rpc.messages import Response, request_frame


class OutgoingCalls:
    PREFIX = "promptd-"

    def __init__(self) -> None:
        self._counter = itertools.count(1)
        self._pending: dict[str, object] = {}

    def start(self, method: str, params: Any, waiter: object = None) -> tuple[str, dict[str, Any]]:
        call_id = f"{self.PREFIX}{next(self._counter)}"
        self._pending[call_id] = waiter
        return call_id, request_frame(call_id, method, params)

    def forget(self, call_id: str) -> None:
        """The caller stopped waiting (timeout, cancel): a late reply is then discarded."""
        self._pending.pop(call_id, None)

    def settle(self, response: Response) -> tuple[str, object] | None:
        """The id and waiter of the pending call this reply answers, or None for an unknown reply."""
        if isinstance(response.id, str) and response.id in self._pending:
            return response.id, self._pending.pop(response.id)
        return None

    def waiters(self) -> list[object]:
        """Every call still waiting, for when the client can no longer answer."""
        return list(self._pending.values())

    def __len__(self) -> int:
        return len(self._pending)
