"""Runs providers concurrently, each under its own timeout; a failed or late one becomes a Skip."""

from __future__ import annotations

import asyncio
import time

from promptd.assembly.kinds import SkipReason
from promptd.assembly.model import Fragment, ProviderSkipped, Skip
from promptd.assembly.providers import HostChannel, ProviderView
from promptd.assembly.registry import Entry


async def run_providers(entries: list[Entry], view: ProviderView, host: HostChannel, default_timeout_s: float) -> list[Fragment | Skip | None]:
    """One outcome per entry, in registration order (None: the provider had nothing). Instant
    providers are answered inline; the others run concurrently, each under its own timeout."""
    outcomes: list[Fragment | Skip | None] = [None] * len(entries)
    waiting = []
    for index, entry in enumerate(entries):
        if entry.instant:
            outcomes[index] = run_instant(entry, view)
        else:
            waiting.append(index)
    if waiting:
        results = await asyncio.gather(*(run_one(entries[i], view, host, default_timeout_s) for i in waiting))
        for index, result in zip(waiting, results, strict=True):
            outcomes[index] = result
    return outcomes


def run_instant(entry: Entry, view: ProviderView) -> Fragment | Skip | None:
    if entry.fixed is not None:
        return entry.fixed
    spec = entry.spec
    try:
        text = entry.produce(spec, view)  # type: ignore[call-arg]
    except ProviderSkipped as exc:
        return Skip(spec.name, exc.reason, 0.0, exc.detail)
    except Exception as exc:  # a provider's fault is contained: reported, never raised
        return Skip(spec.name, SkipReason.ERROR, 0.0, type(exc).__name__)
    return fragment_of(spec.name, spec.key, text)


def fragment_of(name: str, key: str, text: object) -> Fragment | None:
    if not isinstance(text, str) or not text.strip():
        return None
    return Fragment(name, key, text)


async def run_one(entry: Entry, view: ProviderView, host: HostChannel, default_timeout_s: float) -> Fragment | Skip | None:
    spec = entry.spec
    timeout_s = spec.timeout_ms / 1000 if spec.timeout_ms else default_timeout_s
    started = time.perf_counter()

    def skip(reason: SkipReason, detail: str | None = None) -> Skip:
        return Skip(spec.name, reason, round((time.perf_counter() - started) * 1000, 1), detail)

    try:
        # asyncio.timeout, not wait_for: no extra task per provider.
        async with asyncio.timeout(timeout_s):
            text = await entry.produce(spec, view, host, timeout_s)  # type: ignore[call-arg,misc]
    except ProviderSkipped as exc:
        return skip(exc.reason, exc.detail)
    except TimeoutError:
        return skip(SkipReason.TIMEOUT)
    except Exception as exc:  # a provider's fault is contained: reported, never raised
        return skip(SkipReason.ERROR, type(exc).__name__)
    return fragment_of(spec.name, spec.key, text)
