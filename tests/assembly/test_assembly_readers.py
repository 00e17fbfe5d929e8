"""Provider file reads run on a few threads of their own (promptd.assembly.readers): a read that
never returns (a FUSE mount that never answers) holds one of them, never a thread the rest of
promptd needs, and once all are held, later reads are skipped at once instead of queued."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator

import pytest

from promptd.assembly import providers
from promptd.assembly.kinds import ProviderKind, Scope, SkipReason
from promptd.assembly.model import ProviderSpec, Skip
from promptd.assembly.providers import ProviderView, builtin_project_memory, produce_file
from promptd.assembly.readers import Readers
from promptd.assembly.registry import entry
from promptd.assembly.run import run_one

SPEC = ProviderSpec("notes", Scope.GLOBAL, ProviderKind.FILE, "file.notes", path="NOTES.md", timeout_ms=100)
VIEW = ProviderView(session="s", user_message="hi", cwd="/")


class NoHost:
    available = False

    async def produce(self, provider: str, session: str, user_message: str, timeout_s: float) -> str | None:
        return None


@pytest.fixture
def stuck(monkeypatch) -> Iterator[threading.Event]:
    """File reads that hang until the event is set, on two reader threads of the test's own."""
    release = threading.Event()
    readers = Readers(size=2)
    monkeypatch.setattr(providers, "READERS", readers)

    def never_answered(*args: object) -> str:
        release.wait()
        return "released"

    monkeypatch.setattr(providers, "read_provider_file", never_answered)
    monkeypatch.setattr(providers, "read_project_memory", never_answered)
    try:
        yield release
    finally:
        release.set()
        deadline = time.monotonic() + 60
        while readers.busy and time.monotonic() < deadline:
            time.sleep(0.01)


def turn() -> Skip | object:
    return asyncio.run(run_one(entry(SPEC, produce_file, False), VIEW, NoHost(), 2.0))


def test_a_read_that_never_returns_times_out_and_holds_only_a_reader_thread(stuck):
    outcome = turn()
    assert isinstance(outcome, Skip) and outcome.reason is SkipReason.TIMEOUT and outcome.detail is None

    async def elsewhere() -> int:
        # The default executor, which renders, lint and citation/strip use, is untouched.
        return await asyncio.wait_for(asyncio.to_thread(lambda: 7), 60)

    assert asyncio.run(elsewhere()) == 7


def test_once_every_reader_thread_is_held_later_reads_are_skipped_at_once_with_a_detail(stuck):
    for _ in range(2):
        assert turn().reason is SkipReason.TIMEOUT  # type: ignore[union-attr]
    skipped = turn()
    assert isinstance(skipped, Skip) and skipped.reason is SkipReason.TIMEOUT
    assert skipped.detail is not None and "read threads are held" in skipped.detail
    # Project memory reads on the same threads, and is refused the same way.
    memory = asyncio.run(run_one(entry(ProviderSpec("memory.project_md", Scope.GLOBAL, ProviderKind.BUILTIN, "memory.project_md"), builtin_project_memory, True), VIEW, NoHost(), 2.0))
    assert isinstance(memory, Skip) and memory.reason is SkipReason.TIMEOUT and "read threads" in (memory.detail or "")


def test_a_reader_thread_is_free_again_once_its_read_returns(stuck):
    for _ in range(2):
        turn()
    stuck.set()
    readers = providers.READERS
    deadline = time.monotonic() + 60
    while readers.busy and time.monotonic() < deadline:
        time.sleep(0.01)
    assert readers.busy == 0
    assert turn().text == "released"  # type: ignore[union-attr]


def test_with_its_one_thread_held_a_read_is_refused_not_queued_and_never_runs():
    readers = Readers(size=1)
    started = threading.Event()
    release = threading.Event()
    ran: list[str] = []

    async def scenario() -> None:
        first = asyncio.ensure_future(readers.run(lambda: (started.set(), release.wait())))
        await asyncio.to_thread(started.wait, 60)
        # The one thread is held: a second read is refused, not queued.
        with pytest.raises(Exception) as refused:
            await readers.run(lambda: ran.append("second"))
        assert getattr(refused.value, "reason", None) is SkipReason.TIMEOUT
        release.set()
        await asyncio.wait_for(first, 60)

    asyncio.run(scenario())
    assert ran == [] and readers.busy == 0
