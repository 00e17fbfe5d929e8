"""later.then: a value is finished at once, an awaitable is finished once it has been awaited,
and a finish that itself waits is awaited too, so chained stages stay one awaitable."""

from __future__ import annotations

import asyncio
import inspect

import pytest

from promptd.later import then


class Finisher:
    """A finish that records what it was given."""

    def __init__(self) -> None:
        self.seen: list[int] = []

    def __call__(self, value: int) -> str:
        self.seen.append(value)
        return f"finished {value}"


async def answer(value: int) -> int:
    await asyncio.sleep(0)
    return value


def test_a_value_is_finished_at_once_and_its_result_returned():
    finish = Finisher()
    result = then(7, finish)
    assert result == "finished 7"
    assert finish.seen == [7]


def test_an_awaitable_gives_an_awaitable_of_the_finished_result():
    finish = Finisher()
    pending = then(answer(7), finish)
    assert inspect.isawaitable(pending)
    assert asyncio.run(_awaited(pending)) == "finished 7"
    assert finish.seen == [7]


def test_finish_is_not_called_until_the_awaitable_is_awaited():
    finish = Finisher()
    pending = then(answer(7), finish)
    assert finish.seen == []
    asyncio.run(_awaited(pending))
    assert finish.seen == [7]


def test_an_exception_from_the_awaitable_propagates_and_finish_is_never_called():
    async def failing() -> int:
        raise LookupError("no answer")

    finish = Finisher()
    pending = then(failing(), finish)
    with pytest.raises(LookupError, match="no answer"):
        asyncio.run(_awaited(pending))
    assert finish.seen == []


def test_a_finish_that_waits_is_awaited_too_so_nested_stages_give_one_awaitable():
    def second(first: int) -> object:
        return then(answer(first + 1), lambda value: ("second", value))

    assert asyncio.run(_awaited(then(answer(1), second))) == ("second", 2)
    # A first stage answered at once hands back the second stage's awaitable as it is.
    assert asyncio.run(_awaited(then(1, second))) == ("second", 2)
    # Both at once: a plain value, no awaitable anywhere.
    assert then(1, lambda first: then(first + 1, lambda value: ("second", value))) == ("second", 2)


async def _awaited(pending: object) -> object:
    assert inspect.isawaitable(pending)
    return await pending
