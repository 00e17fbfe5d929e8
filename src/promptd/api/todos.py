"""TodoGate."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from promptd.api.base import ApiModel


class TodoItem(ApiModel):
    id: str
    content: str
    status: Literal["pending", "in_progress", "completed", "cancelled"]


class GateParams(ApiModel):
    session: str = Field(min_length=1)
    prompt_id: str = Field(min_length=1, description="The user prompt this turn answers; fires are counted per prompt")
    todos: list[TodoItem] = Field(default_factory=list)
    backing_task_count: int = Field(0, ge=0, description="Background tasks running for in-progress todos")
    tool_called: bool = Field(description="Whether the turn ended with a tool call")


class GateResult(ApiModel):
    decision: Literal["continue", "nudge"]
    reminder: str | None = Field(description="The wrapped reminder to send when the decision is nudge")
    fires: int = Field(description="Fires so far for this session and prompt id")
    exhausted: bool
    notice: str | None = Field(description="At the cap: a wrapped notice that the limit was reached")
    pending: int
    unbacked: int
