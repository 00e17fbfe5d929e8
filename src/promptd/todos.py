"""TodoNudge and TodoGate (seed 004's runtime todo reminders).

Domain layer: plain functions over plain data. Todo contents are model-written, untrusted text:
they are sanitized and never rendered as a template.
"""

from __future__ import annotations

from typing import Any


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
