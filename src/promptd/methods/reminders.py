"""reminder/wrap, reminder/wrap_many, reminder/keys."""

from __future__ import annotations

from promptd.api.base import Empty
from promptd.api.reminders import KeysResult, WrapManyParams, WrapParams, WrapResult
from promptd.methods.base import Context, Method
from promptd.reminders import keyed


def _wrap_one(key: str, body: str, nonce: bool, session: str | None, ctx: Context) -> str:
    if not nonce:
        return keyed.wrap(key, body)
    # With the nonce, the block goes through the trusted path: sanitized and signed.
    from promptd.reminders.provenance import wrap_keyed

    return wrap_keyed(key, body, ctx.runtime.trust, session)


def wrap(params: WrapParams, ctx: Context) -> WrapResult:
    ctx.runtime.keys.require(params.key)
    return WrapResult(text=_wrap_one(params.key, params.body, params.nonce, params.session, ctx))


def wrap_many(params: WrapManyParams, ctx: Context) -> WrapResult:
    for part in params.parts:
        ctx.runtime.keys.require(part.key)
    # Every body is checked before any block is written.
    for part in params.parts:
        keyed.check_key(part.key)
        keyed.check_body(part.body)
    return WrapResult(text=keyed.SEPARATOR.join(_wrap_one(p.key, p.body, params.nonce, params.session, ctx) for p in params.parts))


def keys(params: Empty, ctx: Context) -> KeysResult:
    return KeysResult.model_validate({"keys": ctx.runtime.keys.entries()}, from_attributes=True)


METHODS: list[Method] = [
    Method("reminder/wrap", WrapParams, WrapResult, wrap, 'Wraps one body in a <system-reminder key="..."> block (the keyed reminder format).'),
    Method("reminder/wrap_many", WrapManyParams, WrapResult, wrap_many, "Wraps ordered parts and joins the blocks with one blank line."),
    Method("reminder/keys", Empty, KeysResult, keys, "The reserved-key registry, plus keys the host added."),
]
