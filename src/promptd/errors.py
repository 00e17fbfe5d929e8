"""Domain error hierarchy.

Domain layer: imports nothing from promptd.rpc. Every error carries a JSON-RPC application code
(-32000..-32099) and a machine-readable `kind`; the one exception-to-wire boundary in
promptd.methods turns them into error frames.
"""

from __future__ import annotations

from typing import Any, ClassVar


class PromptdError(Exception):
    """Root of every error promptd raises on purpose."""

    code: ClassVar[int] = -32000
    kind: ClassVar[str] = "error"

    def __init__(self, message: str, **data: Any) -> None:
        super().__init__(message)
        self.message = message
        self.data = data

    def to_data(self) -> dict[str, Any]:
        return {"kind": self.kind, **self.data}


class InvalidKey(PromptdError):
    code = -32010
    kind = "invalid_key"


class NestedMarker(PromptdError):
    code = -32011
    kind = "nested_marker"


class UnregisteredKey(PromptdError):
    code = -32012
    kind = "unregistered_key"


class TemplateSyntax(PromptdError):
    code = -32020
    kind = "template_syntax"


class TemplateRender(PromptdError):
    code = -32021
    kind = "template_render"


class InvalidContext(PromptdError):
    code = -32023
    kind = "invalid_context"


class VaultLocked(PromptdError):
    code = -32030
    kind = "vault_locked"


class UnknownProvider(PromptdError):
    code = -32041
    kind = "unknown_provider"


class ConfigError(PromptdError):
    code = -32060
    kind = "invalid_config"


class AlreadyInitialized(PromptdError):
    code = -32061
    kind = "already_initialized"


class ProviderExists(PromptdError):
    code = -32042
    kind = "provider_exists"


class InvalidProvider(PromptdError):
    code = -32043
    kind = "invalid_provider"
