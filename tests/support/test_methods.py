"""Methods that exist only in tests: they sleep, print to stdout, start a child that prints, or
fail unexpectedly, so the transport's guarantees can be shown over a real process."""

from __future__ import annotations

import asyncio
import subprocess
import sys

from pydantic import Field

from promptd.api.base import ApiModel, Empty
from promptd.methods.base import Context, Method


class SleepParams(ApiModel):
    ms: int = Field(ge=0)
    tag: str = ""


class SleepResult(ApiModel):
    tag: str


class PrintParams(ApiModel):
    text: str


async def sleep(params: SleepParams, ctx: Context) -> SleepResult:
    await asyncio.sleep(params.ms / 1000)
    return SleepResult(tag=params.tag)


def noisy(params: PrintParams, ctx: Context) -> Empty:
    print(params.text)
    sys.stdout.flush()
    subprocess.run([sys.executable, "-c", f"print({params.text!r})"], check=True)
    return Empty()


def explode(params: Empty, ctx: Context) -> Empty:
    raise RuntimeError("secret internal detail")


class AskParams(ApiModel):
    timeout_ms: int = 1000


class AskResult(ApiModel):
    answer: object = None
    failure: str | None = None


async def ask_client(params: AskParams, ctx: Context) -> AskResult:
    try:
        answer = await ctx.peer.call("test/question", {"q": 1}, params.timeout_ms / 1000)
    except TimeoutError:
        return AskResult(failure="timeout")
    except Exception as exc:  # reported to the test, which asserts the type
        return AskResult(failure=type(exc).__name__)
    return AskResult(answer=answer)


TEST_METHODS = [
    Method("test/sleep", SleepParams, SleepResult, sleep, "sleeps"),
    Method("test/noisy", PrintParams, Empty, noisy, "prints to stdout"),
    Method("test/explode", Empty, Empty, explode, "raises"),
    Method("test/ask_client", AskParams, AskResult, ask_client, "calls the client"),
]
