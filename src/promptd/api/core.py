"""Lifecycle methods: initialize, shutdown, rpc.discover."""

from typing import Annotated, Any, get_args

from pydantic import Field, field_validator

from promptd.api.base import ApiModel, Inline, Tools
from promptd.api.events import EventName
from promptd.text import OffsetUnit


class ClientInfo(ApiModel):
    name: str
    version: str | None = None


class Capabilities(ApiModel):
    # The client answers `provider/produce` requests for providers of kind `host`.
    host_providers: bool = False
    # Event notifications wanted: `true` for all, or a list of event names such as
    # "event/gate_fired": the closed set EventName, so that a misspelt name is refused
    # (invalid_params) instead of subscribing to nothing.
    events: bool | list[EventName] = Field(
        False,
        description="The event notifications wanted: true for all, false for none, or a list of event names (EventName); an unknown name is refused with invalid_params.",
    )

    @field_validator("events", mode="before")
    @classmethod
    def _known_events(cls, value: Any) -> Any:
        # One error naming the unknown event and the known ones, rather than one per union branch.
        if isinstance(value, list):
            known = get_args(EventName.__value__)
            for name in value:
                if isinstance(name, str) and name not in known:
                    raise ValueError(f"{name!r} is not an event name; the events are {', '.join(known)}")
        return value


class InitializeParams(ApiModel):
    protocol_version: str | None = None
    client_info: ClientInfo | None = None
    capabilities: Capabilities = Field(default_factory=Capabilities)
    # Deep-merged over the process configuration (same shape as promptd.toml).
    config: dict[str, Any] = {}
    # The default tool set for prompt rendering and the todo reminders.
    tools: Tools | None = None
    # What every offset in a result counts: Unicode code points (Python str, Go []rune), UTF-16
    # code units (JavaScript String.slice) or UTF-8 bytes (Go string and []byte, Rust str).
    offset_unit: Annotated[OffsetUnit, Inline(OffsetUnit)] = Field(
        OffsetUnit.CODE_POINTS,
        description="The unit of every offset promptd returns (start/end of citation/parse segments, reminder/parse blocks, content/inspect spans): code_points, utf16_units (JavaScript) or utf8_bytes (Go).",
    )


class ServerInfo(ApiModel):
    name: str
    version: str


class Limits(ApiModel):
    """The server's effective limits after `config` was applied, so a client need not be told."""

    max_message_bytes: int = Field(description="The longest line promptd reads (a request, a notification, an answer to provider/produce), in bytes without the newline; a longer one is refused unread (`too_large`).")
    provider_timeout_ms: int = Field(description="How long a provider's answer is awaited when its registration gives no timeout_ms; a host answer to provider/produce after it is discarded.")


class InitializeResult(ApiModel):
    protocol_version: str
    server_info: ServerInfo
    methods: list[str]
    offset_unit: Annotated[OffsetUnit, Inline(OffsetUnit)] = Field(description="The unit of every offset in results, as asked for.")
    limits: Limits


class DiscoverResult(ApiModel):
    """The OpenRPC document (see protocol/openrpc.json)."""

    model_config = {"extra": "allow"}
    openrpc: str


class CancelParams(ApiModel):
    id: str | int
