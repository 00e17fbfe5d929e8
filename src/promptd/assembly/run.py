"""Runs providers concurrently, each under its own timeout; a failed or late one becomes a Skip."""

from __future__ import annotations

import asyncio
import time

from promptd.assembly.model import Fragment, ProviderSkipped, Skip, SkipReason
from promptd.assembly.providers import HostChannel, ProviderView
from promptd.assembly.registry import Entry


async def run_providers(entries: list[Entry], view: ProviderView, host: HostChannel, default_timeout_s: float) -> list[Fragment | Skip | None]:
    """One outcome per entry, in registration order (None: the provider had nothing)."""
    return list(await asyncio.gather(*(run_one(entry, view, host, default_timeout_s) for entry in entries)))


async def run_one(entry: Entry, view: ProviderView, host: HostChannel, default_timeout_s: float) -> Fragment | Skip | None:
    spec = entry.spec
    timeout_s = spec.timeout_ms / 1000 if spec.timeout_ms else default_timeout_s
    started = time.perf_counter()

    def skip(reason: SkipReason, detail: str | None = None) -> Skip:
        return Skip(spec.name, reason, round((time.perf_counter() - started) * 1000, 1), detail)

    try:
        text = await asyncio.wait_for(entry.produce(spec, view, host, timeout_s), timeout_s)
    except ProviderSkipped as exc:
        return skip(exc.reason, exc.detail)
    except TimeoutError:
        return skip(SkipReason.TIMEOUT)
    except Exception as exc:  # a provider's fault is contained: reported, never raised
        return skip(SkipReason.ERROR, type(exc).__name__)
    if text is None or not text.strip():
        return None
    return Fragment(spec.name, spec.key, text)
