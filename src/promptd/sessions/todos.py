"""TodoNudge and TodoGate, the runtime todo reminders (docs/todos.md).

Domain layer: plain functions over plain data. Todo contents are model-written, untrusted text:
they are sanitized and never rendered as a template.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum
from typing import Any, NamedTuple

from promptd.text import one_line

# The reminder key of TodoNudge: its built-in provider delivers under it, and turn accounting
# reads it back from the turn's delivery log.
NUDGE_KEY = "todo.nudge"


def nudge_due(turns_since_todo_write: int, turns_since_nudge: int | None, every: int, spacing: int) -> bool:
    """Due once `every` turns have passed without a todo write and at least `spacing` turns since
    the previous nudge (no previous nudge puts no constraint)."""
    return turns_since_todo_write >= every and (turns_since_nudge is None or turns_since_nudge >= spacing)


def nudge_text(view: Any) -> str | None:
    """The TodoNudge fragment for a provider view, or None when it is not due. Only sessions whose
    tool set has a plan tool are nudged: without one the model could not act on it."""
    enabled, every, spacing = view.nudge
    plan_tool = view.tools.get("plan")
    if not enabled or not plan_tool:
        return None
    if not nudge_due(view.turns_since_todo_write, view.turns_since_nudge, every, spacing):
        return None
    return (
        f"The todo list has not been updated for {view.turns_since_todo_write} turns. If the work has "
        f"moved on, use {plan_tool} to mark finished items completed and add what comes next; if the "
        "list is still accurate, carry on without mentioning this reminder."
    )


# ---- TodoGate ------------------------------------------------------------------------------


class TodoStatus(StrEnum):
    PENDING = "pending"
    IN_PROGRESS = "in_progress"
    COMPLETED = "completed"
    CANCELLED = "cancelled"


# Longest todo text quoted back to the model: a todo is a one-line item, not a document.
MAX_ITEM_CHARS = 200


class Todo(NamedTuple):
    id: str
    content: str
    status: TodoStatus


class Partition(NamedTuple):
    pending: tuple[Todo, ...]
    backed: tuple[Todo, ...]
    unbacked: tuple[Todo, ...]


class Decision(StrEnum):
    CONTINUE = "continue"
    NUDGE = "nudge"


class Reason(StrEnum):
    """Why the gate decided as it did; the first that applies, in this order."""

    DISABLED = "disabled"  # todo_gate.enabled is false: the gate never fires
    TOOL_CALL = "tool_call"  # the last step called a tool: the turn is not over
    NO_OPEN_TODOS = "no_open_todos"  # nothing pending, every in-progress todo backed
    NO_FIRES_ALLOWED = "no_fires_allowed"  # max_fires_per_prompt is 0
    EXHAUSTED = "exhausted"  # the prompt already had max_fires_per_prompt fires
    OPEN_TODOS = "open_todos"  # the nudge: open work remains and the model stopped


class GateOutcome(NamedTuple):
    decision: Decision
    reason: Reason
    fires: int
    exhausted: bool
    partition: Partition


def partition(todos: list[Todo], backing_task_count: int) -> Partition:
    """Completed and cancelled todos are ignored; the first min(in_progress, backing) in-progress
    todos, in list order, are backed by a running task; pending todos are never backed."""
    in_progress = tuple(t for t in todos if t.status == TodoStatus.IN_PROGRESS)
    backed_count = max(0, min(len(in_progress), backing_task_count))
    return Partition(
        pending=tuple(t for t in todos if t.status == TodoStatus.PENDING),
        backed=in_progress[:backed_count],
        unbacked=in_progress[backed_count:],
    )


def decide(todos: list[Todo], backing_task_count: int, last_step_called_tool: bool, fires_so_far: int, max_fires: int, enabled: bool) -> GateOutcome:
    """The gate's decision (docs/todos.md): nudge when pending or unbacked in-progress todos remain
    and the model's last step called no tool, until the per-prompt cap; a cap of 0 means the gate
    never fires. The outcome says why (Reason)."""
    parts = partition(todos, backing_task_count)
    open_work = bool(parts.pending or parts.unbacked)
    quiet = None
    if not enabled:
        quiet = Reason.DISABLED
    elif last_step_called_tool:
        quiet = Reason.TOOL_CALL
    elif not open_work:
        quiet = Reason.NO_OPEN_TODOS
    elif max_fires == 0:
        quiet = Reason.NO_FIRES_ALLOWED
    if quiet is not None:
        return GateOutcome(Decision.CONTINUE, quiet, fires_so_far, False, parts)
    if fires_so_far >= max_fires:
        return GateOutcome(Decision.CONTINUE, Reason.EXHAUSTED, fires_so_far, True, parts)
    return GateOutcome(Decision.NUDGE, Reason.OPEN_TODOS, fires_so_far + 1, False, parts)


# The display triggers of the gate's two reminders: what a host may show the user when one fires.
NUDGE_TRIGGER = "Open todo items remain"
EXHAUSTED_TRIGGER = "Todo reminders stopped for this prompt"


def gate_text(parts: Partition, plan_tool: str | None, clean: Callable[[str], str]) -> str:
    """The reminder for a fire. `clean` sanitizes model-written todo text; nothing here is a
    template, so `${{ }}` in a todo stays literal text."""
    lines = ["You ended the turn without a tool call, but the todo list still has open work:"]
    lines += [f"- [in progress] {clean(one_line(t.content, MAX_ITEM_CHARS))}" for t in parts.unbacked]
    lines += [f"- [pending] {clean(one_line(t.content, MAX_ITEM_CHARS))}" for t in parts.pending]
    update = f"update it with {plan_tool}" if plan_tool else "update the todo list"
    lines.append(f"Continue with the next item, or, if an item is finished or no longer needed, {update} before you stop.")
    return "\n".join(lines)


def exhausted_text(max_fires: int) -> str:
    return (
        f"The todo check has reminded the agent {max_fires} time(s) for this prompt and will not do so again. Open todo items remain; the user can ask the agent to continue, or review the todo list."
    )
