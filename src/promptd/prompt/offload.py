"""The thread a render or lint takes off the event loop, and the gate in front of it for the
templates promptd did not ship.

Domain layer: must not import promptd.rpc or promptd.methods. The one module of the prompt area
that uses asyncio: a render or lint that cannot answer at once runs its synchronous part here, in
a thread of the default executor, and a cancelled request cancels its Cancellation (which kills
its worker or stops its in-process render).
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from promptd.prompt.worker import Cancellation

T = TypeVar("T")

_gates: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = weakref.WeakKeyDictionary()


def template_gate() -> asyncio.Semaphore:
    """Taken, on the event loop, by every prompt/render and prompt/lint that runs a template
    promptd did not ship (a caller's, in a worker; a sealed one, in-process) before it takes a
    thread: at most MAX_RUNNING of them hold a thread at once, each running (a worker, or its
    in-process deadline), never waiting. The others wait here, holding no thread of the default
    executor, which the other offloaded requests (file providers, project memory) share. One per
    event loop (an asyncio.Semaphore belongs to the loop it is first used on)."""
    loop = asyncio.get_running_loop()
    gate = _gates.get(loop)
    if gate is None:
        from promptd.prompt.worker import MAX_RUNNING

        gate = _gates[loop] = asyncio.Semaphore(MAX_RUNNING)
    return gate


async def offload(run: Callable[[Cancellation], T], *, gated: bool) -> T:
    """`run(cancel)` in a thread of the default executor (after the template gate when `gated`);
    a cancelled request cancels `cancel`, which kills its worker or stops its in-process render."""
    from promptd.prompt import worker

    cancel = worker.Cancellation()
    try:
        if not gated:
            return await asyncio.to_thread(run, cancel)
        async with template_gate():
            return await asyncio.to_thread(run, cancel)
    except asyncio.CancelledError:
        cancel.cancel()
        raise
