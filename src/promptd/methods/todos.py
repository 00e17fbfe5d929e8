"""todo/gate."""

from __future__ import annotations

from promptd.api.todos import GateParams, GateResult
from promptd.methods.base import Context, Method
from promptd.todos import Decision, Todo, decide, exhausted_text, gate_text

# Prompt ids remembered per session: a session answers one prompt at a time, so a few suffice.
MAX_PROMPTS_PER_SESSION = 16


def gate(params: GateParams, ctx: Context) -> GateResult:
    from promptd.reminders.provenance import trigger_markup, wrap_trusted
    from promptd.reminders.sanitize import sanitize

    runtime = ctx.runtime
    settings = runtime.config.todo_gate
    session = runtime.sessions.get(params.session)
    todos = [Todo(t.id, t.content, t.status) for t in params.todos]
    before = session.gate_fires.get(params.prompt_id, 0)
    outcome = decide(todos, params.backing_task_count, params.last_step_called_tool, before, settings.max_fires_per_prompt, settings.enabled)
    parts = outcome.partition
    style = runtime.config.reminders.style

    def wrap(trigger: str, text: str) -> str:
        return wrap_trusted(f"{trigger_markup(trigger)}\n\n{text}", runtime.trust, style)

    reminder = notice = None
    if outcome.decision is Decision.NUDGE:
        session.gate_fires[params.prompt_id] = outcome.fires
        while len(session.gate_fires) > MAX_PROMPTS_PER_SESSION:
            oldest = next(iter(session.gate_fires))
            del session.gate_fires[oldest]
            session.gate_exhausted.discard(oldest)
        body = gate_text(parts, runtime.tools_for(session).get("plan"), lambda text: sanitize(text, runtime.nonce).text)
        reminder = wrap("Open todo items remain", body)
        ctx.emit("event/gate_fired", {"session": params.session, "prompt_id": params.prompt_id, "fires": outcome.fires, "pending": len(parts.pending), "unbacked": len(parts.unbacked)})
        runtime.log.info("gate_fired", fires=outcome.fires, pending=len(parts.pending), unbacked=len(parts.unbacked))
    elif outcome.exhausted:
        notice = wrap("Todo reminders stopped for this prompt", exhausted_text(settings.max_fires_per_prompt))
        if params.prompt_id not in session.gate_exhausted:
            session.gate_exhausted.add(params.prompt_id)
            ctx.emit("event/gate_exhausted", {"session": params.session, "prompt_id": params.prompt_id, "fires": outcome.fires})
    return GateResult(
        decision=outcome.decision.value,
        reason=outcome.reason.value,
        reminder=reminder,
        fires=outcome.fires,
        exhausted=outcome.exhausted,
        notice=notice,
        pending=len(parts.pending),
        unbacked=len(parts.unbacked),
    )


METHODS = [
    Method("todo/gate", GateParams, GateResult, gate, "TodoGate: at the end of a turn, nudge when open todos remain and no tool was called."),
]
