"""todo/gate: a thin adapter; the decision and its per-prompt memory are Session.gate_turn."""

from __future__ import annotations

from promptd.api.events import GateExhaustedEvent, GateFiredEvent
from promptd.api.todos import GateParams, GateResult
from promptd.methods.base import Context, Method
from promptd.sessions.todos import EXHAUSTED_TRIGGER, NUDGE_TRIGGER, Decision, Todo, exhausted_text, gate_text


def gate(params: GateParams, ctx: Context) -> GateResult:
    from promptd.reminders.provenance import wrap_triggered
    from promptd.reminders.sanitize import sanitize

    runtime = ctx.runtime
    settings = runtime.config.todo_gate
    # A session remembers up to MAX_PROMPTS_PER_SESSION prompt ids: each is capped as a session
    # id is, before anything is kept or echoed in an event.
    runtime.sessions.check_id(params.prompt_id, "prompt_id", "the prompt id")
    session = runtime.sessions.get(params.session)
    todos = [Todo(t.id, t.content, t.status) for t in params.todos]
    turn = session.gate_turn(params.prompt_id, todos, params.backing_task_count, params.last_step_called_tool, settings)
    outcome = turn.outcome
    parts = outcome.partition
    style = runtime.config.reminders.style

    def wrap(trigger: str, text: str) -> str:
        return wrap_triggered(trigger, text, runtime.trust, style, params.session)

    reminder = notice = None
    if outcome.decision is Decision.NUDGE:
        body = gate_text(parts, runtime.tools_for(session).get("plan"), lambda text: sanitize(text, runtime.nonce).text)
        reminder = wrap(NUDGE_TRIGGER, body)
        ctx.emit(*GateFiredEvent(session=params.session, prompt_id=params.prompt_id, fires=outcome.fires, pending=len(parts.pending), unbacked=len(parts.unbacked)).notification())
        runtime.log.info("gate_fired", fires=outcome.fires, pending=len(parts.pending), unbacked=len(parts.unbacked))
    elif outcome.exhausted:
        notice = wrap(EXHAUSTED_TRIGGER, exhausted_text(settings.max_fires_per_prompt))
        if turn.first_exhausted:
            ctx.emit(*GateExhaustedEvent(session=params.session, prompt_id=params.prompt_id, fires=outcome.fires).notification())
    return GateResult(
        decision=outcome.decision,
        reason=outcome.reason,
        reminder=reminder,
        fires=outcome.fires,
        exhausted=outcome.exhausted,
        notice=notice,
        pending=len(parts.pending),
        unbacked=len(parts.unbacked),
    )


METHODS: list[Method] = [
    Method("todo/gate", GateParams, GateResult, gate, "TodoGate: at the end of a turn, nudge when open todos remain and no tool was called."),
]
