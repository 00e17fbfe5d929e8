"""Reminder assembly, sessions and turns (the provider registry's own methods: api/providers.py)."""

from pydantic import AliasChoices, ConfigDict, Field

from promptd.api.base import ApiModel, Tools
from promptd.api.provenance import HistoryMessage
from promptd.assembly.kinds import FragmentStatus, SkipReason
from promptd.reminders.kinds import MessageShape


class SessionParams(ApiModel):
    session: str = Field(min_length=1)


class SessionUpdateParams(ApiModel):
    session: str = Field(min_length=1)
    cwd: str | None = None
    date: str | None = None
    os_name: str | None = None
    shell: str | None = None
    env: dict[str, str] | None = None
    tools: Tools | None = None
    # Appended to the pending file.modified notices (delivered once, cleared at turn/complete).
    modified_files: list[str] = []


class AssembleParams(ApiModel):
    session: str = Field(min_length=1)
    user_message: str = ""
    directives: list[str] = []
    display_trigger: list[str] = Field(
        default=[],
        description=(
            "What the person is shown as the reason for this reminder, one constituent per source (a directive, a "
            "slash command): a list going in because several sources may each add one. The result's "
            "`display_trigger` is the one string they become in the block."
        ),
    )
    budget: int | None = Field(None, ge=1, description="Overrides reminders.budget_chars")


class ComposeParams(AssembleParams):
    """turn/compose takes reminder/assemble's params and the shape to write the message in."""

    shape: MessageShape | None = Field(
        None,
        description=(
            "Also return the user message in this SDK's own shape (history/sanitize's names): the user's text and the "
            "reminder as text parts of their own, in that order (MCP: one text content holding `content`). Without it, "
            "`message` is null."
        ),
    )


class FragmentReport(ApiModel):
    # Frozen: a provider's report is the same turn after turn, so one instance serves them all
    # (methods.assembly keeps them).
    model_config = ConfigDict(extra="forbid", defer_build=True, frozen=True)

    provider: str
    key: str
    chars: int
    status: FragmentStatus


class SkipReport(ApiModel):
    provider: str
    reason: SkipReason
    elapsed_ms: float


class SpillInfo(ApiModel):
    path: str
    retention_hours: float


class AssembleResult(ApiModel):
    text: str = Field(description="The wrapped block, empty when nothing was delivered")
    body: str
    fragments: list[FragmentReport]
    skipped: list[SkipReport]
    spill: SpillInfo | None
    spill_failure: str | None = Field(description="Why the truncated fragment could not be spilled")
    display_trigger: str | None = Field(
        description=(
            "The display trigger the block carries, as one string: the params' `display_trigger` constituents "
            'sanitized, blank ones and repeats left out, joined with "; " (a string coming out, as in '
            "reminder/parse's Block.display_trigger); null when none was delivered."
        )
    )


class ComposeResult(ApiModel):
    content: str = Field(description="The user-role message: sanitized user text plus the reminder suffix")
    reminder: AssembleResult
    message: HistoryMessage | None = Field(
        description=(
            "With the params' `shape`: the user message in that SDK's shape, ready to send and to store; passed back "
            "through history/sanitize with the same session it keeps its reminder. Null without `shape`."
        ),
    )


class CompleteParams(ApiModel):
    session: str = Field(min_length=1)
    tools_called: list[str] = Field(
        default=[],
        validation_alias=AliasChoices("tools_called", "tool_calls"),
        description="Names of the tools called while answering the prompt (repeats allowed); the plan tool counts as a todo write. The 0.1 name `tool_calls` is still accepted, for one more version.",
    )
    todo_write: bool = False
