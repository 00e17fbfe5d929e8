"""What a method is, and what a handler receives.

Glue layer: the only place besides the server that knows both the wire and the domain. Handlers
take validated params and a Context and return a result model; they raise domain errors.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Generic, NamedTuple, Protocol

from pydantic import BaseModel
from typing_extensions import TypeVar

from promptd.runtime import Runtime


class Peer(Protocol):
    """The client on the other end, as the server lets handlers reach it."""

    def notify(self, method: str, params: dict[str, Any]) -> None: ...

    def call(self, method: str, params: dict[str, Any], timeout_s: float) -> Awaitable[Any]: ...


class NoPeer:
    """For in-process use (CLI `call`, library use): events go nowhere, client calls fail."""

    def notify(self, method: str, params: dict[str, Any]) -> None:
        return None

    async def call(self, method: str, params: dict[str, Any], timeout_s: float) -> Any:
        raise ConnectionError("no client is connected")


class Lifecycle(Protocol):
    """The server's own life, for the lifecycle methods."""

    async def shutdown(self) -> None: ...


class Context:
    """What a handler receives besides its params: the runtime, the client, the server's life."""

    __slots__ = ("runtime", "peer", "lifecycle")

    def __init__(self, runtime: Runtime, peer: Peer, lifecycle: Lifecycle) -> None:
        self.runtime = runtime
        self.peer = peer
        self.lifecycle = lifecycle

    def emit(self, method: str, params: dict[str, Any]) -> None:
        """Sends an event notification if the client subscribed to it."""
        if self.runtime.wants_event(method):
            self.peer.notify(method, params)


# The defaults let a door hold methods of every kind as plain `Method` (a table's values).
P = TypeVar("P", bound=BaseModel, default=Any)
R = TypeVar("R", bound=BaseModel, default=Any)

# A handler answers at once (most do) or returns something to await: a coroutine, or the future of
# a worker thread (asyncio.to_thread) when the work may take long.
Handler = Callable[[P, Context], R | Awaitable[R]]


class HasText(Protocol):
    text: str


def text_of(params: HasText) -> str:
    """The text of params that carry one (content/sanitize, content/inspect, citation/*)."""
    return params.text


class Method(NamedTuple, Generic[P, R]):
    name: str
    params: type[P]
    result: type[R]
    handler: Handler[P, R]
    summary: str
    # Run in a worker thread: for handlers that may take long on large input (sanitizing MiBs),
    # so one big request never stalls the others.
    offload: bool = False
    # For an offloaded method whose work grows with one text: that text, so a short one is handled
    # on the spot (a thread hop costs more than sanitizing a few KiB, and than a text this size
    # ever holds the loop: under a millisecond on ordinary text, a few on the worst shapes).
    offload_text: Callable[[P], str] | None = None
    # The handler answers at once when it can and with an awaitable when it must wait (assembly
    # runs providers that wait only when there are some): the in-process door treats it as a
    # method that waits.
    may_wait: bool = False
    # Lifecycle methods are served by the transport's own rules (never as notifications).
    lifecycle: bool = False
    # Sent as a notification and never answered (exit, $/cancelRequest).
    notification: bool = False
    # A request the clients send themselves while ending a session (shutdown: their stop() and
    # Close send it, then exit): documented with `x-no-wrapper`, so that no generated client
    # offers a raw call of it, which would leave the client half-stopped.
    client_driven: bool = False
