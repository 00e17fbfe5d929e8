"""reminder/wrap, reminder/wrap_many, reminder/keys."""

from __future__ import annotations

from promptd.api.base import Empty
from promptd.api.reminders import KeyInfoModel, KeysResult, WrapManyParams, WrapParams, WrapResult
from promptd.methods.base import Context, Method
from promptd.reminders import format as reminder_format


def wrap(params: WrapParams, ctx: Context) -> WrapResult:
    ctx.runtime.keys.require(params.key)
    nonce = ctx.runtime.nonce if params.nonce else None
    return WrapResult(text=reminder_format.wrap(params.key, params.body, nonce))


def wrap_many(params: WrapManyParams, ctx: Context) -> WrapResult:
    for part in params.parts:
        ctx.runtime.keys.require(part.key)
    nonce = ctx.runtime.nonce if params.nonce else None
    return WrapResult(text=reminder_format.wrap_many(((p.key, p.body) for p in params.parts), nonce))


def keys(params: Empty, ctx: Context) -> KeysResult:
    return KeysResult(keys=[KeyInfoModel(key=k.key, purpose=k.purpose, introduced_in=k.introduced_in) for k in ctx.runtime.keys.entries()])


METHODS = [
    Method("reminder/wrap", WrapParams, WrapResult, wrap, "Wraps one body in a keyed <system-reminder> block (seed 000)."),
    Method("reminder/wrap_many", WrapManyParams, WrapResult, wrap_many, "Wraps ordered parts and joins the blocks with one blank line."),
    Method("reminder/keys", Empty, KeysResult, keys, "The reserved-key registry, plus keys the host added."),
]
