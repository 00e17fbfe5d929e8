"""One assembled reminder: run the providers, sanitize, deduplicate, budget, truncate and spill,
wrap through the trusted path, and log what was delivered in the session's current turn."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple, TypeVar

from promptd.assembly import budget as budgeting
from promptd.assembly.kinds import FragmentStatus, Scope
from promptd.assembly.model import Fragment, Skip
from promptd.assembly.providers import HostChannel, ProviderView
from promptd.assembly.registry import ProviderRegistry
from promptd.assembly.run import run_instant, run_providers
from promptd.config import Config
from promptd.later import then
from promptd.reminders.kinds import BlockStyle
from promptd.reminders.ledger import Trust
from promptd.sessions.store import Session, digest

if TYPE_CHECKING:
    from promptd.assembly.spill import Spilled, SpillStore

# The session's spill store, asked for only when a fragment is truncated: most turns never are,
# and creating the store imports the spill module.
SpillAccess = Callable[[], "SpillStore"]

DIRECTIVE_PROVIDER = "directive"
# Above this many characters, sanitizing runs in a worker thread (about 5 ms of sanitizer time).
OFF_LOOP_CHARS = 64 * 1024
T = TypeVar("T")
DIRECTIVE_KEY = "directive"
DELIVERED, TRUNCATED = FragmentStatus.DELIVERED, FragmentStatus.TRUNCATED


class Report(NamedTuple):
    provider: str
    key: str
    chars: int
    status: FragmentStatus


@dataclass
class Assembled:
    text: str = ""
    body: str = ""
    fragments: list[Report] = field(default_factory=list)
    skipped: list[Skip] = field(default_factory=list)
    spill: Spilled | None = None
    spill_failure: str | None = None
    display_trigger: str | None = None


class AssemblyRequest(NamedTuple):
    session: str
    user_message: str = ""
    directives: tuple[str, ...] = ()
    display_trigger: tuple[str, ...] = ()
    budget: int | None = None


def view_of(session: Session, request: AssemblyRequest, config: Config, tools: dict[str, str]) -> ProviderView:
    data = session.data
    counters = session.counters
    return ProviderView(
        session=session.id,
        user_message=request.user_message,
        cwd=data.cwd,
        date=data.date,
        os_name=data.os_name,
        shell=data.shell,
        env=dict(data.env),
        tools=dict(tools),
        last_delivered=dict(session.last_delivered),
        modified_files=tuple(session.modified_files),
        turns_since_todo_write=counters.turns_since_todo_write,
        turns_since_nudge=counters.turns_since_nudge,
        project_memory_max_chars=config.reminders.project_memory_max_chars,
        nudge=(config.todo_nudge.enabled, config.todo_nudge.turns_since_todo_write, config.todo_nudge.turns_between_reminders),
    )


def assemble(
    request: AssemblyRequest,
    *,
    session: Session,
    registry: ProviderRegistry,
    config: Config,
    trust: Trust,
    host: HostChannel,
    spill: SpillAccess,
    tools: dict[str, str],
) -> Assembled | Awaitable[Assembled]:
    """This turn's reminder: at once when every provider to run is instant and the fragments are
    small (no task, no timer, no thread: the common turn costs what a cheap method costs), or an
    awaitable that runs the providers that wait and finishes the rest."""
    entries = registry.entries()
    # Per-turn providers run only for a turn with a user message.
    wanted = list(entries) if request.user_message.strip() else [e for e in entries if e.spec.scope is Scope.GLOBAL]
    if not wanted:
        return _finish(request, session, config, trust, spill, [])
    view = view_of(session, request, config, tools)
    instant = all(entry.instant for entry in wanted)
    outcomes = [run_instant(entry, view) for entry in wanted] if instant else run_providers(wanted, view, host, config.reminders.provider_timeout_ms / 1000)
    return then(outcomes, functools.partial(_finish, request, session, config, trust, spill))


def _finish(request: AssemblyRequest, session: Session, config: Config, trust: Trust, spill: SpillAccess, outcomes: list[Fragment | Skip | None]) -> Assembled | Awaitable[Assembled]:
    raw: list[Fragment] = [Fragment(DIRECTIVE_PROVIDER, DIRECTIVE_KEY, d) for d in request.directives if d.strip()]
    skipped: list[Skip] = []
    for outcome in outcomes:
        if isinstance(outcome, Fragment):  # the common outcome, tested first
            raw.append(outcome)
        elif outcome is not None:
            skipped.append(outcome)
    if not raw:
        # Nothing to sanitize, fit or wrap: the empty reminder.
        return Assembled(skipped=skipped)
    limit = request.budget or config.reminders.budget_chars
    finish = functools.partial(fit_and_wrap, raw, request, limit, trust, config.reminders.style, spill, session.id)

    def recorded(done: tuple[Assembled, dict[str, bytes]]) -> Assembled:
        result, delivered = done
        result.skipped = skipped
        # The delivery log: the digest of what this turn delivered under each key (turn/complete
        # reads it). Applied here, on the loop, never from the worker thread.
        session.record_delivered(delivered)
        return result

    # Sanitizing large fragments and writing a spill file are the slow parts: off the event loop
    # when they may happen, so one big turn never stalls other requests.
    sizes = [len(f.text) for f in raw]
    fitted = asyncio.to_thread(finish) if sum(sizes) > OFF_LOOP_CHARS or max(sizes) > limit else finish()
    return then(fitted, recorded)


def fit_and_wrap(raw: list[Fragment], request: AssemblyRequest, limit: int, trust: Trust, style: BlockStyle, spill: SpillAccess, session_id: str) -> tuple[Assembled, dict[str, bytes]]:
    """Sanitize, deduplicate, budget, truncate and spill, wrap. Pure but for the spill file and
    the ledger entry the wrapper records."""
    from promptd.reminders.provenance import seal, trigger_markup
    from promptd.reminders.sanitize import sanitize_text

    nonce = trust.nonce

    def clean(text: str) -> str:
        # Static providers hand over the same text every turn: sanitize_text remembers small ones.
        return sanitize_text(text, nonce)

    sanitized = [_cleaned(f, sanitize_text(f.text, nonce)) for f in raw]
    trigger_text = join_triggers(request.display_trigger, nonce)
    markup = trigger_markup(trigger_text) if trigger_text else None
    unfit: frozenset[int] = frozenset()
    while True:
        plan = budgeting.plan(sanitized, markup, limit, unfit)
        placed = place(plan, raw, spill, session_id, clean)
        if placed.uncut is None:
            break
        # Not even the marker fitted: plan again with that fragment dropped, so the room it was
        # given goes to the fragments after it (each pass drops one more, so this ends).
        unfit = unfit | {placed.uncut}
    result = placed.result
    if placed.texts:
        result.display_trigger = trigger_text if plan.trigger else None
        # Joined fragments can form what no fragment held: the body reported is the one the
        # wrapper repaired as joined text.
        result.text, result.body = seal(budgeting.join_body(plan.trigger, placed.texts), trust, style, session_id)
    return result, placed.delivered


def _cleaned(fragment: Fragment, text: str) -> Fragment:
    # Most fragments come out of the sanitizer unchanged: the same fragment, not a copy.
    return fragment if text is fragment.text else Fragment(fragment.provider, fragment.key, text)


@dataclass
class Placement:
    result: Assembled
    delivered: dict[str, bytes]  # key -> digest of the raw text delivered under it
    texts: list[str]
    uncut: int | None  # the index of a fragment planned as truncated that could not be


def place(plan: budgeting.Plan, raw: list[Fragment], spill: SpillAccess, session_id: str, clean: Callable[[str], str]) -> Placement:
    """Carries out a plan: truncates (and spills) the fragment to truncate, collects the texts."""
    placement = Placement(Assembled(), {}, [], None)
    result = placement.result
    texts, delivered, reports = placement.texts, placement.delivered, result.fragments
    # plan.placed keeps the order of `sanitized`, which keeps the order of `raw`.
    for index, ((fragment, status), source) in enumerate(zip(plan.placed, raw, strict=True)):
        text = fragment.text
        if status is TRUNCATED:
            head, result.spill, result.spill_failure = truncate_and_spill(fragment, source, plan.truncate_room or 0, spill, session_id, clean)
            if head is None:
                placement.uncut = index
                return placement
            text = head
        if status is DELIVERED or status is TRUNCATED:
            texts.append(text)
            # A digest, never the text: what change-only providers compare it with is a digest too.
            delivered[fragment.key] = digest(source.text)
        reports.append(Report(fragment.provider, fragment.key, len(text), status))
    return placement


def at_once_unless_large(size: int, work: Callable[[], T]) -> T | Awaitable[T]:
    """`work` done inline when its input is small; when it is large, an awaitable that runs it in a
    worker thread (a thread hop costs more than small work, and large work must not stall the loop)."""
    if size > OFF_LOOP_CHARS:
        return asyncio.to_thread(work)
    return work()


def join_triggers(parts: tuple[str, ...], nonce: str) -> str | None:
    """Caller constituents, sanitized, blank ones left out, duplicates once, in order."""
    from promptd.reminders.sanitize import sanitize

    seen: list[str] = []
    for part in parts:
        cleaned = sanitize(part.strip(), nonce).text
        if cleaned and cleaned not in seen:
            seen.append(cleaned)
    if not seen:
        return None
    # Sanitized again as joined text: constituents can join into what none of them held.
    return sanitize("; ".join(seen), nonce).text or None


def truncate_and_spill(fragment: Fragment, original: Fragment, room: int, spill: SpillAccess, session_id: str, clean: Callable[[str], str]) -> tuple[str | None, Spilled | None, str | None]:
    """The head of `fragment` with its marker, the spill file named in it, and why the spill
    failed. None for the text when the marker does not fit; then no file (and no folder) is left."""

    def plain(shown: int, total: int) -> str:
        return f"\n[truncated: showing {shown} of {total} characters]"

    without_path = budgeting.truncate(fragment.text, room, plain, clean)
    if without_path is None:
        return None, None, None  # the marker with a path is longer still: spilling is pointless
    from promptd.assembly.spill import SpillFailed

    store = spill()
    try:
        spilled = store.save(session_id, original.text)
    except SpillFailed as exc:
        return without_path, None, exc.reason

    def marker(shown: int, total: int) -> str:
        return f"\n[truncated: showing {shown} of {total} characters; the full text is in {spilled.path} (kept for {spilled.retention_hours:g} h)]"

    text = budgeting.truncate(fragment.text, room, marker, clean)
    if text is None:
        # Not even the marker fits: nothing refers to the file, so it is not kept or reported.
        store.discard(spilled)
        return None, None, None
    return text, spilled, None
