"""The in-process door: the method table through the wire's boundary, without a process.

Entry layer, beside cli/ and transport/: it may import methods/ and everything below; nothing
below imports it. The CLI commands and the in-process test helper use it, and so can a Python
host that wants promptd without a subprocess:

    from promptd.local import Local

    door = Local()
    door.call("initialize", {"config": {"reminders": {"budget_chars": 4000}}})
    text = door.call("reminder/wrap", {"key": "session.cwd", "body": "/tmp"})["text"]

A call is validated, run and serialized by methods.boundary exactly as a request on the wire, so
its result is the `result` member of the wire's answer and its failure carries the wire's code,
message and data. The transport's own refusals that make sense without a transport are kept too:
an unknown method or a notification-only one is -32601 (`method_not_found`), a call after
`shutdown` is -32002 (`shut_down`). There is no client on the other end: a `host` provider's
`provider/produce` fails and the provider is skipped, as any failing provider is; events go to
`on_event` when one is given and `initialize` subscribed to them.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable, Coroutine, Mapping
from typing import Any

from promptd.config import Config
from promptd.methods import TABLE
from promptd.methods.base import Context, Method, NoPeer
from promptd.methods.boundary import RpcFailure, discard, start
from promptd.rpc import codes
from promptd.rpc.connection import State, refusal
from promptd.runtime import Runtime

EventSink = Callable[[str, dict[str, Any]], None]


class LocalError(RpcFailure):
    """A call's failure as the wire would answer it: `code`, `message` and `data` (whose `kind`
    says what went wrong, from the catalogue in promptd.errors). A subclass of the boundary's
    RpcFailure, so code written against either catches both."""

    @property
    def kind(self) -> str | None:
        return self.data.get("kind") if isinstance(self.data, dict) else None

    def to_error(self) -> dict[str, Any]:
        """The JSON-RPC `error` member: code, message, and data when there is any."""
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error


class _EventPeer(NoPeer):
    """No client to call; events, when wanted, go to the host's callback."""

    def __init__(self, sink: EventSink) -> None:
        self._sink = sink

    def notify(self, method: str, params: dict[str, Any]) -> None:
        self._sink(method, params)


class _Lifecycle:
    def __init__(self) -> None:
        self.shut_down = False

    async def shutdown(self) -> None:
        # Nothing else runs concurrently through this door that shutdown would have to wait for.
        self.shut_down = True


class Local:
    """One promptd runtime served in-process. `config` is a Config, a mapping of settings over
    the defaults, or None for the defaults; no promptd.toml or PROMPTD_* variable is read unless
    the caller passes `promptd.config.load()`. Raises ConfigError when the settings cannot make a
    runtime. `runtime` serves an existing Runtime instead (tests share one across calls)."""

    def __init__(
        self,
        config: Config | Mapping[str, Any] | None = None,
        *,
        runtime: Runtime | None = None,
        on_event: EventSink | None = None,
        table: Mapping[str, Method] | None = None,
    ) -> None:
        if runtime is None:
            if config is None:
                config = Config()
            elif not isinstance(config, Config):
                config = Config().merged(config)
            runtime = Runtime(config)
        self.runtime = runtime
        self._table = TABLE if table is None else table
        self._lifecycle = _Lifecycle()
        peer = NoPeer() if on_event is None else _EventPeer(on_event)
        self._context = Context(runtime=runtime, peer=peer, lifecycle=self._lifecycle)

    @property
    def methods(self) -> list[str]:
        """The names a call may use (notification-only methods excluded), sorted."""
        return sorted(name for name, method in self._table.items() if not method.notification)

    def call(self, method: str, params: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """The result of one call; raises LocalError. A method whose handler waits (reminder/assemble,
        turn/compose, shutdown, the offloaded ones) is run to completion in its own event loop;
        inside a running loop, `await acall(...)` instead."""
        target = self._method(method)
        if _waits(target):
            try:
                asyncio.get_running_loop()
            except RuntimeError:
                pass
            else:
                raise RuntimeError(f"{method} waits on an event loop: inside one, use `await Local.acall(...)`")
        # Offloaded handlers run right here: this caller waits anyway, and has no loop to keep free.
        outcome = self._start(target, params, offload=False)
        if isinstance(outcome, dict):
            return outcome
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            pass
        else:  # a handler that answered with an awaitable though it is not declared async
            discard(outcome)
            raise RuntimeError(f"{method} waits on an event loop: inside one, use `await Local.acall(...)`")
        try:
            return asyncio.run(outcome)
        except RpcFailure as failure:
            raise _local(failure) from failure

    async def acall(self, method: str, params: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """The result of one call, awaited on the running loop; raises LocalError."""
        outcome = self._start(self._method(method), params)
        if isinstance(outcome, dict):
            return outcome
        try:
            return await outcome
        except RpcFailure as failure:
            raise _local(failure) from failure

    def _method(self, name: str) -> Method:
        # The connection's own rule, so a door refuses exactly what the wire refuses.
        refused = refusal(self._table, name, State.SHUTTING_DOWN if self._lifecycle.shut_down else State.RUNNING)
        if refused is not None:
            code, data = refused
            raise LocalError(code, codes.MESSAGES[code], data)
        return self._table[name]

    def _start(self, target: Method, params: Mapping[str, Any] | None, offload: bool = True) -> dict[str, Any] | Coroutine[Any, Any, dict[str, Any]]:
        # A mapping is copied to the plain dict the wire would have decoded; anything else (a
        # list, a number) is passed on to be refused by the boundary as the wire refuses it.
        raw = dict(params) if isinstance(params, Mapping) else params
        try:
            return start(target, raw, self._context, offload=offload)
        except RpcFailure as failure:
            raise _local(failure) from failure


def _waits(method: Method) -> bool:
    # Offloaded methods are not among them: call() runs their handlers inline.
    return method.may_wait or inspect.iscoroutinefunction(method.handler)


def _local(failure: RpcFailure) -> LocalError:
    if isinstance(failure, LocalError):
        return failure
    return LocalError(failure.code, failure.message, failure.data)
