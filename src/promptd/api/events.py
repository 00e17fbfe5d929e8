"""Event notifications the server sends (only those a client subscribed to with
`capabilities.events`). One model per event: the emit sites build their payload from it, and
protocol/openrpc.json lists them under `x-server-to-client` as notifications whose params are these
schemas (named `<Name>Event`).
"""

from typing import Any, ClassVar

from pydantic import Field

from promptd.api.base import ApiModel

# The closed set of event names (for `capabilities.events` and the clients' event types) is
# declared with initialize's models, which every process loads, so that answering initialize
# does not import these; a contract test checks it names exactly the events below.
from promptd.api.core import EventName as EventName
from promptd.assembly.kinds import SkipReason


class EventModel(ApiModel):
    """A payload of one event notification; METHOD is its method name."""

    METHOD: ClassVar[str]
    SUMMARY: ClassVar[str]

    def notification(self) -> tuple[str, dict[str, Any]]:
        """(method, params) for Context.emit: `ctx.emit(*GateFiredEvent(...).notification())`."""
        return self.METHOD, self.model_dump(mode="json")


class ProviderSkippedEvent(EventModel):
    METHOD = "event/provider_skipped"
    SUMMARY = "A provider gave nothing this turn: it timed out, failed, found nothing, was too large, or no host answers for it."

    session: str
    provider: str
    reason: SkipReason
    elapsed_ms: float


class SpilledEvent(EventModel):
    METHOD = "event/spilled"
    SUMMARY = "A truncated fragment was written whole to a spill file the reminder points to."

    session: str
    path: str = Field(description="The spill file.")
    retention_hours: float = Field(description="How long the file is kept.")


class GateFiredEvent(EventModel):
    METHOD = "event/gate_fired"
    SUMMARY = "todo/gate nudged: open todos remain and the turn ended without a tool call."

    session: str
    prompt_id: str
    fires: int = Field(description="Fires so far for this session and prompt id.")
    pending: int
    unbacked: int


class GateExhaustedEvent(EventModel):
    METHOD = "event/gate_exhausted"
    SUMMARY = "todo/gate reached its cap for this prompt (sent once per prompt)."

    session: str
    prompt_id: str
    fires: int


class NudgeFiredEvent(EventModel):
    METHOD = "event/nudge_fired"
    SUMMARY = "A turn that delivered the todo nudge reminder completed (turn/complete)."

    session: str
    turn: int = Field(description="The session's turn count after this turn.")


# Every event, in the order the document lists them.
EVENTS: dict[str, type[EventModel]] = {model.METHOD: model for model in (ProviderSkippedEvent, SpilledEvent, GateFiredEvent, GateExhaustedEvent, NudgeFiredEvent)}
