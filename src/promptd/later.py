"""A result now, or an awaitable of it: the one place that tells the two apart.

Base layer: imports nothing of promptd's. A handler or a domain that answers at once when it can
(prompt/render of a compiled shipped template, a turn whose providers are all instant) returns
the value itself, and an awaitable when it must wait; what is then done with the value is written
once, through `then`, rather than once for each of the two paths.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")


def then(outcome: T | Awaitable[T], finish: Callable[[T], R | Awaitable[R]]) -> R | Awaitable[R]:
    """`finish(outcome)` at once when `outcome` is a value; when it is an awaitable, an awaitable
    that awaits it and then finishes it. `finish` may itself answer now or later (a second stage,
    written as a `then` of its own): the awaitable awaits that too, so chained stages stay one
    value or one awaitable of it."""
    if isinstance(outcome, Awaitable):
        return _finished_later(outcome, finish)
    return finish(outcome)


async def _finished_later(pending: Awaitable[T], finish: Callable[[T], R | Awaitable[R]]) -> R:
    finished = finish(await pending)
    if isinstance(finished, Awaitable):
        return await finished
    return finished
