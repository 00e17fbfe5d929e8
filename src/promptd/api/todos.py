"""TodoGate."""

from typing import Annotated

from pydantic import AliasChoices, Field

from promptd.api.base import ApiModel, Inline
from promptd.sessions.todos import Decision, Reason, TodoStatus


class TodoItem(ApiModel):
    id: str
    content: str
    status: Annotated[TodoStatus, Inline(TodoStatus)]


class GateParams(ApiModel):
    session: str = Field(min_length=1)
    prompt_id: str = Field(min_length=1, description="The user prompt this turn answers; fires are counted per prompt")
    todos: list[TodoItem] = []
    backing_task_count: int = Field(0, ge=0, description="Background tasks running for in-progress todos")
    last_step_called_tool: bool = Field(
        validation_alias=AliasChoices("last_step_called_tool", "tool_called"),
        description=(
            "Whether the model's last step asked for a tool call. True means the turn is not over (the host runs the "
            "tool and the model goes on) and the gate answers continue; at the end of a turn as docs/todos.md defines it, "
            "false. The 0.1 name `tool_called` is still accepted, for one more version."
        ),
    )


class GateResult(ApiModel):
    decision: Annotated[Decision, Inline(Decision)]
    # Why the gate decided as it did: the first that applies, in this order (docs/todos.md).
    reason: Annotated[Reason, Inline(Reason)] = Field(
        description=(
            "disabled: todo_gate.enabled is false, the gate never fires; tool_call: the last step called a tool; "
            "no_open_todos: nothing pending and every in-progress todo backed; no_fires_allowed: max_fires_per_prompt is 0; "
            "exhausted: the cap was reached for this prompt (see notice); open_todos: the nudge."
        )
    )
    reminder: str | None = Field(description="The wrapped reminder to send when the decision is nudge")
    fires: int = Field(description="Fires so far for this session and prompt id")
    exhausted: bool
    notice: str | None = Field(description="At the cap: a wrapped notice that the limit was reached")
    pending: int
    unbacked: int
