"""The one exception-to-wire boundary, and the validated call of a handler.

pydantic validation -> -32602 with a cleaned field list; domain errors -> their code and
`data.kind`; anything unexpected -> -32603 "Internal error" on the wire and the traceback on
stderr. Never a traceback or `str(exc)` of an unexpected error to the peer.
"""

from __future__ import annotations

import asyncio
import enum
import functools
import inspect
from collections.abc import Awaitable, Coroutine
from typing import Any, cast

from pydantic import BaseModel, ValidationError

from promptd.api.base import Verbatim
from promptd.errors import PromptdError, TransportKind
from promptd.methods.base import Context, Method
from promptd.rpc import codes, faults

# Enough to show what is wrong without echoing a whole oversized input back.
MAX_REPORTED_ERRORS = 20


class RpcFailure(Exception):
    """A failure already shaped for the wire."""

    def __init__(self, code: int, message: str, data: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data


def to_failure(exc: BaseException, method: str, ctx: Context | None = None) -> RpcFailure:
    if isinstance(exc, RpcFailure):
        return exc
    if isinstance(exc, ValidationError):
        return RpcFailure(codes.INVALID_PARAMS, "Invalid params", {"kind": TransportKind.INVALID_PARAMS, "errors": clean_errors(exc)})
    if isinstance(exc, PromptdError):
        return RpcFailure(exc.code, exc.message, exc.to_data())
    if ctx is not None:
        ctx.runtime.log.error(faults.LOG_EVENT, **faults.fault_fields(exc, method))
    return RpcFailure(codes.INTERNAL_ERROR, "Internal error", faults.internal_data())


def clean_errors(exc: ValidationError) -> list[dict[str, Any]]:
    cleaned = []
    for error in exc.errors(include_url=False, include_input=False, include_context=False)[:MAX_REPORTED_ERRORS]:
        cleaned.append({"field": ".".join(str(p) for p in error["loc"]), "type": error["type"], "message": error["msg"]})
    return cleaned


def start(method: Method, raw_params: Any, ctx: Context, *, offload: bool = True) -> dict[str, Any] | Coroutine[Any, Any, dict[str, Any]]:
    """Runs a call as far as it goes without waiting: the serialized result when the handler
    answered at once (most methods), or a coroutine that finishes the rest. Raises RpcFailure.

    Answering synchronous handlers inline spares the transport a task per request, which was most
    of the cost of a cheap call. `offload` False runs an offloaded method's handler here too: a
    caller with no event loop to keep free (the in-process door's call) would otherwise start a
    loop and a thread to wait for it, 20 times the cost of sanitizing a short text."""
    try:
        if isinstance(raw_params, list):
            raise RpcFailure(codes.INVALID_PARAMS, "Params must be an object (by-name)", {"kind": TransportKind.POSITIONAL_PARAMS})
        params = method.params.model_validate(raw_params or {})
        if method.offload and offload and not _short(method, params):
            return finish(asyncio.to_thread(method.handler, params, ctx), method, ctx)
        result = method.handler(params, ctx)
        if isinstance(result, BaseModel):  # the common case, checked first: it is the cheaper test
            return dump(result)
        return finish(result, method, ctx)
    except Exception as exc:  # the boundary: every failure leaves here shaped for the wire
        raise to_failure(exc, method.name, ctx) from exc


# Below this many characters an offloaded method's text is handled without a thread.
INLINE_TEXT_CHARS = 16_384


def _short(method: Method, params: BaseModel) -> bool:
    return method.offload_text is not None and len(method.offload_text(params)) <= INLINE_TEXT_CHARS


async def finish(pending: Awaitable[object], method: Method, ctx: Context) -> dict[str, Any]:
    try:
        result = await pending
        if not isinstance(result, BaseModel):
            raise TypeError(f"{method.name} answered {type(result).__name__}, not a result model")
        return dump(result)
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # the boundary, for the part of a call that waited
        raise to_failure(exc, method.name, ctx) from exc


def dump(result: BaseModel) -> dict[str, Any]:
    """A result model as the plain JSON data of the wire's `result`, host data kept exactly.

    pydantic's JSON mode writes a dict key holding a lone surrogate as U+FFFD (or raises, in an
    `Any` field), so the fields marked VERBATIM (the host's own JSON) are dumped in Python mode, and
    a result that still trips over one is dumped in Python mode whole, its enums made plain."""
    kept = _verbatim_fields(type(result))
    try:
        if not kept:
            return result.model_dump(mode="json")
        written = result.model_dump(mode="json", exclude=set(kept))
        held = result.model_dump(mode="python", include=set(kept))
        return {name: held[name] if name in kept else written[name] for name in type(result).model_fields}
    except UnicodeEncodeError:
        return cast(dict[str, Any], _plain(result.model_dump(mode="python")))


@functools.cache
def _verbatim_fields(model: type[BaseModel]) -> frozenset[str]:
    return frozenset(name for name, info in model.model_fields.items() if any(isinstance(m, Verbatim) for m in info.metadata))


def _plain(value: Any) -> Any:
    """What JSON mode would have made of a Python-mode dump: enums as their values, tuples as lists."""
    if isinstance(value, dict):
        return {key: _plain(member) for key, member in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(member) for member in value]
    if isinstance(value, enum.Enum):
        return value.value
    return value


def discard(later: Coroutine[Any, Any, Any]) -> None:
    """Closes the waiting part of a call that will never run (cancelled before its first step),
    and every coroutine it was handed that has not started either. A coroutine closed before it
    starts runs none of its code, so it cannot close those itself; left open, each is reported
    "never awaited" on stderr when it is collected."""
    for value in inspect.getcoroutinelocals(later).values():
        if inspect.iscoroutine(value) and inspect.getcoroutinestate(value) == inspect.CORO_CREATED:
            discard(value)
    later.close()
