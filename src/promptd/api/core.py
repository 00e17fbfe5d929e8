"""Lifecycle methods: initialize, shutdown, rpc.discover."""

import json
from typing import Annotated, Any, Literal, get_args

from pydantic import Field, GetJsonSchemaHandler, field_validator
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema
from typing_extensions import TypeAliasType

from promptd.api.base import ApiModel, Inline, Tools
from promptd.text import OffsetUnit


class ClientInfo(ApiModel):
    name: str
    version: str | None = None


# The closed set of event names: `capabilities.events` and the clients' event types. One model per
# event is in promptd.api.events (EVENTS), whose keys are exactly these.
EventName = TypeAliasType(
    "EventName",
    Literal["event/provider_skipped", "event/spilled", "event/gate_fired", "event/gate_exhausted", "event/nudge_fired"],
)


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


class ConfigShape:
    """`Annotated[dict[str, Any], ConfigShape()]`: the field stays a plain mapping (initialize
    deep-merges it over the process configuration, and promptd.config validates it there, as
    `invalid_config`), while its schema is promptd.config's own models, so that the clients type
    it without a copy of them: the `Config` component and one per section.

    Every field of an override is optional, and absent means "keep what the process has" (from
    promptd.toml or PROMPTD_*), not "the default": so the fields of Config and of its sections
    carry their default in their description rather than as `default`, which a client would take
    as the value an absent field has."""

    __slots__ = ()

    def __get_pydantic_json_schema__(self, schema: CoreSchema, handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        from pydantic import create_model

        from promptd.config import Config

        # Through a field of a model, so that Config is a named component, not written in place.
        holder = create_model("ConfigHolder", config=(Config, ...))
        reference: JsonSchemaValue = handler.resolve_ref_schema(handler(holder.__pydantic_core_schema__))["properties"]["config"]
        _defaults_described(reference, handler)
        return {
            **reference,
            "description": "Deep-merged over the process configuration: the shape of promptd.toml (Config), every field optional; an invalid one is refused with invalid_config and changes nothing.",
        }


def _defaults_described(reference: JsonSchemaValue, handler: GetJsonSchemaHandler) -> None:
    """Moves the defaults of an object schema's fields (and of its sections', recursively) into
    their descriptions."""
    target = handler.resolve_ref_schema(reference)
    for field in target.get("properties", {}).values():
        if "default" in field:
            default = json.dumps(field.pop("default"))
            field["description"] = f"{field['description']} " if "description" in field else ""
            field["description"] += f"promptd's default: {default}."
        if "$ref" in field and "properties" in handler.resolve_ref_schema(field):
            _defaults_described(field, handler)


class InitializeParams(ApiModel):
    protocol_version: str | None = None
    client_info: ClientInfo | None = None
    capabilities: Capabilities = Field(default_factory=Capabilities)
    # Deep-merged over the process configuration (same shape as promptd.toml).
    config: Annotated[dict[str, Any], ConfigShape()] = {}
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

    max_message_bytes: int = Field(
        description="The longest line promptd reads (a request, a notification, an answer to provider/produce), in bytes without the newline; a longer one is refused unread (`too_large`)."
    )
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
