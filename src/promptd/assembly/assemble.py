"""One assembled reminder: run the providers, sanitize, deduplicate, budget, truncate and spill,
wrap through the trusted path, and log what was delivered in the session's current turn."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from promptd.assembly import budget as budgeting
from promptd.assembly.model import Fragment, Scope, Skip, Status
from promptd.assembly.providers import HostChannel, ProviderView
from promptd.assembly.registry import ProviderRegistry
from promptd.assembly.run import run_providers
from promptd.assembly.spill import SpillFailed, Spilled, SpillStore
from promptd.config import Config
from promptd.sessions import Session

DIRECTIVE_PROVIDER = "directive"
DIRECTIVE_KEY = "directive"


@dataclass(frozen=True, slots=True)
class Report:
    provider: str
    key: str
    chars: int
    status: Status


@dataclass
class Assembled:
    text: str = ""
    body: str = ""
    fragments: list[Report] = field(default_factory=list)
    skipped: list[Skip] = field(default_factory=list)
    spill: Spilled | None = None
    spill_failure: str | None = None
    display_trigger: str | None = None


@dataclass(frozen=True, slots=True)
class Request:
    session: str
    user_message: str = ""
    directives: tuple[str, ...] = ()
    display_trigger: tuple[str, ...] = ()
    budget: int | None = None


def view_of(session: Session, request: Request, config: Config, default_tools: dict[str, str]) -> ProviderView:
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
        tools=dict(data.tools if data.tools is not None else default_tools),
        last_delivered=dict(session.last_delivered),
        modified_files=tuple(session.modified_files),
        turns_since_todo_write=counters.turns_since_todo_write,
        turns_since_nudge=counters.turns_since_nudge,
        project_memory_max_chars=config.reminders.project_memory_max_chars,
        nudge=(config.todo_nudge.enabled, config.todo_nudge.turns_since_todo_write, config.todo_nudge.turns_between_reminders),
    )


async def assemble(
    request: Request,
    *,
    session: Session,
    registry: ProviderRegistry,
    config: Config,
    nonce: str,
    host: HostChannel,
    spill: SpillStore,
    default_tools: dict[str, str],
) -> Assembled:
    from promptd.reminders.provenance import trigger_markup, wrap_trusted
    from promptd.reminders.sanitize import sanitize

    view = view_of(session, request, config, default_tools)
    wanted = [e for e in registry.entries() if e.spec.scope is Scope.GLOBAL or request.user_message.strip()]
    outcomes = await run_providers(wanted, view, host, config.reminders.provider_timeout_ms / 1000)

    raw: list[Fragment] = [Fragment(DIRECTIVE_PROVIDER, DIRECTIVE_KEY, d) for d in request.directives if d.strip()]
    skipped: list[Skip] = []
    for outcome in outcomes:
        if isinstance(outcome, Skip):
            skipped.append(outcome)
        elif outcome is not None:
            raw.append(outcome)
    clean = [Fragment(f.provider, f.key, sanitize(f.text, nonce).text) for f in raw]

    trigger_text = join_triggers(request.display_trigger, nonce)
    markup = trigger_markup(trigger_text) if trigger_text else None
    limit = request.budget or config.reminders.budget_chars
    plan = budgeting.plan(clean, markup, limit)

    result = Assembled(skipped=skipped)
    texts: list[str] = []
    # plan.placed keeps the order of `clean`, which keeps the order of `raw`.
    for placed, source in zip(plan.placed, raw, strict=True):
        fragment, status = placed.fragment, placed.status
        text: str | None = fragment.text
        if status is Status.TRUNCATED:
            text, result.spill, result.spill_failure = truncate_and_spill(fragment, source, plan.truncate_room or 0, spill, session.id, lambda t: sanitize(t, nonce).text)
            if text is None:
                status = Status.DROPPED
        if status in (Status.DELIVERED, Status.TRUNCATED) and text is not None:
            texts.append(text)
            # The delivery log: what this turn delivered under each key (turn/complete reads it).
            session.delivered[fragment.key] = source.text
        result.fragments.append(Report(fragment.provider, fragment.key, len(text) if text is not None else len(fragment.text), status))
    if texts:
        result.display_trigger = trigger_text if plan.trigger else None
        result.body = budgeting.join_body(plan.trigger, texts)
        result.text = wrap_trusted(result.body, nonce, config.reminders.style)
    return result


def join_triggers(parts: tuple[str, ...], nonce: str) -> str | None:
    """Caller constituents, sanitized, blank ones left out, duplicates once, in order."""
    from promptd.reminders.sanitize import sanitize

    seen: list[str] = []
    for part in parts:
        cleaned = sanitize(part.strip(), nonce).text
        if cleaned and cleaned not in seen:
            seen.append(cleaned)
    return "; ".join(seen) or None


def truncate_and_spill(
    fragment: Fragment, original: Fragment, room: int, spill: SpillStore, session_id: str, clean: Callable[[str], str]
) -> tuple[str | None, Spilled | None, str | None]:
    spilled: Spilled | None = None
    failure: str | None = None
    try:
        spilled = spill.save(session_id, original.text)
    except SpillFailed as exc:
        failure = exc.reason

    def marker(shown: int, total: int) -> str:
        if spilled is None:
            return f"\n[truncated: showing {shown} of {total} characters]"
        return f"\n[truncated: showing {shown} of {total} characters; the full text is in {spilled.path} (kept for {spilled.retention_hours:g} h)]"

    text = budgeting.truncate(fragment.text, room, marker, clean)
    return text, spilled, failure
