"""Bookkeeping for requests the server sends to the client (for example `provider/produce`).

Ids are strings with a prefix no client would pick for its own requests, so a reply can never be
mistaken for a client request and the two id spaces never collide.
"""

from __future__ import annotations

import itertools
from typing import Any

from promptd.rpc.messages import Response, request_frame


class OutgoingCalls:
    PREFIX = "promptd-"

    def __init__(self) -> None:
        self._counter = itertools.count(1)
        self._pending: set[str] = set()

    def start(self, method: str, params: Any) -> tuple[str, dict[str, Any]]:
        call_id = f"{self.PREFIX}{next(self._counter)}"
        self._pending.add(call_id)
        return call_id, request_frame(call_id, method, params)

    def forget(self, call_id: str) -> None:
        """The caller stopped waiting (timeout, cancel): a late reply is then discarded."""
        self._pending.discard(call_id)

    def settle(self, response: Response) -> str | None:
        """Returns the id of the pending call this reply answers, or None for an unknown reply."""
        if isinstance(response.id, str) and response.id in self._pending:
            self._pending.discard(response.id)
            return response.id
        return None

    def __len__(self) -> int:
        return len(self._pending)
