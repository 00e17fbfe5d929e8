"""session/update, session/close, reminder/assemble, turn/compose, turn/complete (providers/* are
in methods/providers.py)."""

from __future__ import annotations

import functools
from collections.abc import Awaitable
from typing import Any

from pydantic import ValidationError

from promptd.api.assembly import (
    AssembleParams,
    AssembleResult,
    CompleteParams,
    ComposeParams,
    ComposeResult,
    FragmentReport,
    SessionParams,
    SessionUpdateParams,
)
from promptd.api.base import Empty
from promptd.api.provenance import HistoryMessage
from promptd.assembly.assemble import Assembled, AssemblyRequest, Report, assemble
from promptd.assembly.compose import Composed
from promptd.assembly.compose import compose as compose_message
from promptd.assembly.kinds import FragmentStatus
from promptd.later import then
from promptd.logs import LogLevel
from promptd.methods.base import Context, Method


class PeerHost:
    """`host` providers answered by the client over `provider/produce`."""

    def __init__(self, ctx: Context) -> None:
        self.available = ctx.runtime.host_providers
        self.peer = ctx.peer

    async def produce(self, provider: str, session: str, user_message: str, timeout_s: float) -> str | None:
        # Imported when a host provider runs, not by every turn.
        from promptd.api.host import ProduceParams, ProduceResult

        params = ProduceParams(provider=provider, session=session, user_message=user_message)
        answer: Any = await self.peer.call(ProduceParams.METHOD, params.model_dump(mode="json"), timeout_s)
        if not isinstance(answer, dict):
            raise TypeError("provider/produce must answer {text: string | null}")
        # A missing `text` is read as null and other members are ignored, as they always were.
        try:
            return ProduceResult.model_validate({"text": answer.get("text")}).text
        except ValidationError:
            raise TypeError("provider/produce must answer {text: string | null}") from None


def update_session(params: SessionUpdateParams, ctx: Context) -> Empty:
    runtime = ctx.runtime
    facts = {"cwd": params.cwd, "date": params.date, "os_name": params.os_name, "shell": params.shell}
    tools = params.tools.by_kind if params.tools is not None else None
    runtime.sessions.get(params.session).update(runtime.config.sessions, facts, params.env, tools, params.modified_files)
    return Empty()


def close_session(params: SessionParams, ctx: Context) -> Empty:
    ctx.runtime.sessions.close(params.session)
    return Empty()


def run_assembly(params: AssembleParams, ctx: Context) -> AssembleResult | Awaitable[AssembleResult]:
    """Answered at once when the turn's providers are all instant (the domain decides); awaited
    otherwise."""
    runtime = ctx.runtime
    session = runtime.sessions.get(params.session)
    request = AssemblyRequest(params.session, params.user_message, tuple(params.directives), tuple(params.display_trigger), params.budget)
    outcome = assemble(
        request,
        session=session,
        registry=runtime.providers,
        config=runtime.config,
        trust=runtime.trust,
        host=PeerHost(ctx),
        spill=lambda: runtime.spill,
        tools=runtime.tools_for(session),
    )
    return then(outcome, functools.partial(reported, params.session, ctx))


def reported(session: str, ctx: Context, assembled: Assembled) -> AssembleResult:
    report(assembled, session, ctx)
    return to_result(assembled)


def report(assembled: Assembled, session: str, ctx: Context) -> None:
    """Metadata only: names, counts, sizes and reasons; never a body."""
    log = ctx.runtime.log
    # The event models are imported when there is an event to send, not by every turn.
    for skip in assembled.skipped:
        from promptd.api.events import ProviderSkippedEvent

        log.warning("provider_skipped", provider=skip.provider, reason=skip.reason.value, elapsed_ms=skip.elapsed_ms, detail=skip.detail)
        # The event's model is built only for a client that subscribed to it.
        if ctx.runtime.wants_event(ProviderSkippedEvent.METHOD):
            ctx.emit(*ProviderSkippedEvent(session=session, provider=skip.provider, reason=skip.reason, elapsed_ms=skip.elapsed_ms).notification())
    if assembled.spill is not None:
        from promptd.api.events import SpilledEvent

        ctx.emit(*SpilledEvent(session=session, path=assembled.spill.path, retention_hours=assembled.spill.retention_hours).notification())
    if assembled.spill_failure is not None:
        log.warning("spill_failed", reason=assembled.spill_failure)
    if not log.enabled(LogLevel.INFO):
        return  # counting the delivered fragments costs more than the line's other fields
    log.info(
        "assembled",
        fragments=len(assembled.fragments),
        delivered=sum(1 for f in assembled.fragments if f.status in (FragmentStatus.DELIVERED, FragmentStatus.TRUNCATED)),
        chars=len(assembled.body),
        skipped=len(assembled.skipped),
    )


def to_result(assembled: Assembled) -> AssembleResult:
    # The domain's result has the wire's shape: read field by field from its attributes, but for
    # the fragments' reports, whose models are made once per distinct report (a model built per
    # report per turn was most of the cost of reporting 64 static providers).
    return AssembleResult.model_validate(
        {
            "text": assembled.text,
            "body": assembled.body,
            "fragments": [_fragment_report(report) for report in assembled.fragments],
            "skipped": assembled.skipped,
            "spill": assembled.spill,
            "spill_failure": assembled.spill_failure,
            "display_trigger": assembled.display_trigger,
        },
        from_attributes=True,
    )


# Distinct reports of a process: its providers, each with a few statuses and sizes (a bound, so
# a provider whose size changes every turn cannot grow the cache).
@functools.lru_cache(maxsize=1024)
def _fragment_report(report: Report) -> FragmentReport:
    return FragmentReport.model_validate(report, from_attributes=True)


def compose(params: ComposeParams, ctx: Context) -> ComposeResult | Awaitable[ComposeResult]:
    """Two stages, each answered at once when it can: the reminder, then the message built with it."""

    def with_reminder(reminder: AssembleResult) -> ComposeResult | Awaitable[ComposeResult]:
        composed = compose_message(params.user_message, reminder.text, ctx.runtime.nonce, params.shape)
        return then(composed, functools.partial(_composed, reminder))

    return then(run_assembly(params, ctx), with_reminder)


def _composed(reminder: AssembleResult, composed: Composed) -> ComposeResult:
    message = HistoryMessage.model_validate(composed.message) if composed.message is not None else None
    return ComposeResult(content=composed.content, reminder=reminder, message=message)


def complete(params: CompleteParams, ctx: Context) -> Empty:
    runtime = ctx.runtime
    session = runtime.sessions.existing(params.session)
    tools = runtime.tools_for(session)
    # True when the completed turn delivered the todo nudge.
    if session.complete_turn(params.todo_write, params.tools_called, tools.get("plan")):
        from promptd.api.events import NudgeFiredEvent

        ctx.emit(*NudgeFiredEvent(session=params.session, turn=session.counters.turns).notification())
    return Empty()


METHODS: list[Method] = [
    Method("session/update", SessionUpdateParams, Empty, update_session, "Gives a session the host's facts: cwd, date, OS, shell, env, tools, modified files."),
    Method("session/close", SessionParams, Empty, close_session, "Forgets a session's state."),
    Method("reminder/assemble", AssembleParams, AssembleResult, run_assembly, "Runs the providers and assembles this turn's reminder under the budget.", may_wait=True),
    Method("turn/compose", ComposeParams, ComposeResult, compose, "The user-role message for a turn: sanitized user text plus the assembled reminder.", may_wait=True),
    Method("turn/complete", CompleteParams, Empty, complete, "Turn accounting: moves the TodoNudge counters and clears delivered notices."),
]
