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

Params are taken as the data the wire would have decoded from the JSON a host writes: a pydantic
model anywhere in them (an SDK's message, content block or tool result) becomes the JSON its SDK
writes for it (`as_json_data`), a tuple becomes a list, and a surrogate pair held as two code points
(two halves of a character a host cut and joined again) becomes the one character it encodes.
"""

from __future__ import annotations

import asyncio
import functools
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
from promptd.text import join_surrogate_pairs

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
        # The plain data the wire would have decoded; anything that is not a mapping (a list, a
        # number) is passed on to be refused by the boundary as the wire refuses it.
        try:
            raw = as_json_data(params)
        except RecursionError:
            # The wire refuses such nesting before reading it, with the same error.
            raise LocalError(codes.INVALID_REQUEST, codes.MESSAGES[codes.INVALID_REQUEST], {"kind": "too_deep"}) from None
        except (TypeError, ValueError) as exc:  # a model its own serializer cannot dump (pydantic raises these)
            error = {"field": "", "type": "model_dump", "message": f"a model in params cannot be written as JSON ({type(exc).__name__})"}
            raise LocalError(codes.INVALID_PARAMS, "Invalid params", {"kind": "invalid_params", "errors": [error]}) from exc
        if raw is params and isinstance(params, dict):
            raw = dict(params)  # the handler never shares the caller's own top-level dict
        try:
            return start(target, raw, self._context, offload=offload)
        except RpcFailure as failure:
            raise _local(failure) from failure


def as_json_data(value: Any) -> Any:
    """`value` as the data a JSON reader would give for it: pydantic models dumped as their SDK
    writes them (sdk_json), mappings as dicts, tuples as lists, surrogate pairs joined. What is
    already plain data is returned as it is, not copied."""
    if isinstance(value, str):
        return join_surrogate_pairs(value)
    if isinstance(value, dict):
        changed = False
        plain: dict[Any, Any] = {}
        for key, member in value.items():
            new_key, new_member = as_json_data(key), as_json_data(member)
            changed = changed or new_key is not key or new_member is not member
            plain[new_key] = new_member
        return plain if changed or type(value) is not dict else value
    if isinstance(value, list):
        members = [as_json_data(member) for member in value]
        return members if type(value) is not list or any(new is not old for new, old in zip(members, value)) else value
    if isinstance(value, tuple):
        return [as_json_data(member) for member in value]
    if isinstance(value, Mapping):
        return as_json_data(dict(value))
    if not isinstance(value, type) and callable(getattr(value, "model_dump", None)):
        return as_json_data(sdk_json(value))
    return value


def sdk_json(model: Any) -> Any:
    """The JSON data a pydantic model's own SDK writes for it:
    - Anthropic's and OpenAI's models (Stainless's, recognized by their `to_dict(use_api_names=)`)
      as they are sent in a request body: by API name, the fields that were set, minus
      `__api_exclude__`;
    - google-genai's by their own `to_json_dict()` (fields that are not None);
    - any other (MCP's types among them) as MCP sends them: `model_dump(mode="json",
      by_alias=True, exclude_none=True)`."""
    kind = _sdk_kind(model.__class__)
    if kind == "stainless":
        return model.model_dump(mode="json", by_alias=True, exclude_unset=True, exclude=getattr(model, "__api_exclude__", None))
    if kind == "genai":
        return model.to_json_dict()
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


@functools.cache
def _sdk_kind(model: type[object]) -> str:
    to_dict = getattr(model, "to_dict", None)
    if callable(to_dict):
        try:
            if "use_api_names" in inspect.signature(to_dict).parameters:
                return "stainless"
        except (TypeError, ValueError):
            pass
    if callable(getattr(model, "to_json_dict", None)):
        return "genai"
    return "pydantic"


def _waits(method: Method) -> bool:
    # Offloaded methods are not among them: call() runs their handlers inline.
    return method.may_wait or inspect.iscoroutinefunction(method.handler)


def _local(failure: RpcFailure) -> LocalError:
    if isinstance(failure, LocalError):
        return failure
    return LocalError(failure.code, failure.message, failure.data)
