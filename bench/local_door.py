"""The in-process door's own cost: `promptd.Local().call(...)` against the domain function it
serves, with the same pydantic validation, in the same run (the near-limit baseline: nothing
less can validate and run the call). Run alone with `python bench/local_door.py`, or as a
section of `make bench`."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))

# At most this much more CPU per call than validating and running the domain function directly.
TARGET_OVERHEAD_US = 50.0
CALLS = 20_000
SHORT = "build ok: <b>26 characters</b>"


def _per_call_us(fn: Callable[[], object], calls: int = CALLS) -> float:
    best = float("inf")
    for _ in range(3):
        started = time.process_time()
        for _ in range(calls):
            fn()
        best = min(best, time.process_time() - started)
    return best / calls * 1e6


def _awaited_us(door: Any, method: str, params: dict[str, object], calls: int = CALLS) -> float:
    """CPU per `await door.acall(...)` inside one running loop, best of 3."""
    import asyncio

    async def run() -> float:
        best = float("inf")
        for _ in range(3):
            started = time.process_time()
            for _ in range(calls):
                await door.acall(method, params)
            best = min(best, time.process_time() - started)
        return best / calls * 1e6

    return asyncio.run(run())


def section() -> list[str]:
    from promptd.api.citations import CitationStripParams
    from promptd.api.provenance import SanitizeParams
    from promptd.api.reminders import WrapParams
    from promptd.citations.export import strip as strip_markers
    from promptd.local import Local
    from promptd.reminders.keyed import wrap
    from promptd.reminders.sanitize import sanitize

    door = Local()
    nonce = door.runtime.nonce
    cases = [
        ("content/sanitize", {"text": SHORT}, lambda: sanitize(SanitizeParams.model_validate({"text": SHORT}).text, nonce)),
        ("citation/strip", {"text": SHORT}, lambda: strip_markers(CitationStripParams.model_validate({"text": SHORT}).text)),
        ("reminder/wrap", {"key": "session.cwd", "body": "/srv/app"}, lambda: wrap(*(lambda p: (p.key, p.body))(WrapParams.model_validate({"key": "session.cwd", "body": "/srv/app"})))),
    ]
    rows = []
    for method, params, direct in cases:
        through = _per_call_us(lambda: door.call(method, params))
        awaited = _awaited_us(door, method, params)
        baseline = _per_call_us(direct)
        worst = max(through, awaited) - baseline
        rows.append(
            f"| `{method}` | {through:.1f} µs | {awaited:.1f} µs | {baseline:.1f} µs | {through - baseline:.1f} / {awaited - baseline:.1f} µs "
            f"| ≤ {TARGET_OVERHEAD_US:.0f} µs | {'yes' if worst <= TARGET_OVERHEAD_US else 'no'} |"
        )
    return [
        "## The in-process door (CPU per call, best of 3)",
        "",
        f"`promptd.Local().call(method, params)` and `await Local.acall(method, params)` in a running loop on a short input, against the domain function with "
        f"the same pydantic validation, {CALLS:,} calls each. Offloaded methods run their handler inline in `call`, and in `acall` when their text is at most "
        "16 KiB: no event loop and no thread per call.",
        "",
        "| method | through `Local.call` | through `Local.acall` | validate + domain function | overhead (call / acall) | target | met |",
        "| --- | --- | --- | --- | --- | --- | --- |",
        *rows,
        "",
    ]


if __name__ == "__main__":
    print("\n".join(section()))
