"""Lifecycle methods: initialize, shutdown, rpc.discover."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from promptd.api.base import ApiModel, Tools


class ClientInfo(ApiModel):
    name: str
    version: str | None = None


class Capabilities(ApiModel):
    # The client answers `provider/produce` requests for providers of kind `host`.
    host_providers: bool = False
    # Event notifications wanted: `true` for all, or a list of method names such as
    # "event/gate_fired".
    events: bool | list[str] = False


class InitializeParams(ApiModel):
    protocol_version: str | None = None
    client_info: ClientInfo | None = None
    capabilities: Capabilities = Field(default_factory=Capabilities)
    # Deep-merged over the process configuration (same shape as promptd.toml).
    config: dict[str, Any] = Field(default_factory=dict)
    # The default tool set for prompt rendering and the todo reminders.
    tools: Tools | None = None


class ServerInfo(ApiModel):
    name: str
    version: str


class InitializeResult(ApiModel):
    protocol_version: str
    server_info: ServerInfo
    methods: list[str]


class DiscoverResult(ApiModel):
    """The OpenRPC document (see protocol/openrpc.json)."""

    model_config = {"extra": "allow"}
    openrpc: str


class CancelParams(ApiModel):
    id: str | int
