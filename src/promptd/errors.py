"""Domain error hierarchy, and the one catalogue of every error code and `data.kind` on the wire.

Domain layer: imports nothing from promptd.rpc. Every error carries a JSON-RPC application code
(-32000..-32099) and a machine-readable `kind`; the one exception-to-wire boundary in
promptd.methods turns them into error frames.

The transport's own codes (JSON-RPC 2.0 section 5.1, LSP's cancel code, the shutdown code) are
declared here too, with the `data.kind` values the transport sends with them, so that
promptd.rpc.codes, protocol/openrpc.json (`x-errors`, the `ErrorKind` schema) and both generated
clients read one list. A test checks that every `"kind": "..."` the source sends is listed.
"""

from __future__ import annotations

from collections import Counter
from enum import StrEnum
from typing import Any, ClassVar, NamedTuple


class TransportKind(StrEnum):
    """The `data.kind` values the transport sends with its own codes: one closed set, named once."""

    PARSE_ERROR = "parse_error"
    BAD_VERSION = "bad_version"
    INVALID_METHOD = "invalid_method"
    INVALID_ID = "invalid_id"
    INVALID_PARAMS_TYPE = "invalid_params_type"
    NOT_AN_OBJECT = "not_an_object"
    EMPTY_BATCH = "empty_batch"
    TOO_DEEP = "too_deep"
    TOO_LARGE = "too_large"
    DUPLICATE_ID = "duplicate_id"
    METHOD_NOT_FOUND = "method_not_found"
    INVALID_PARAMS = "invalid_params"
    POSITIONAL_PARAMS = "positional_params"
    INTERNAL = "internal"
    CANCELLED = "cancelled"
    SHUT_DOWN = "shut_down"


class WireError(NamedTuple):
    """One error code as the protocol document describes it."""

    code: int
    # The constant's name in the clients (ErrorCodes.InvalidParams, CodeInvalidParams).
    name: str
    # The `message` sent when nothing more specific is said.
    message: str
    # The `data.kind` values sent with this code, each with what it means.
    kinds: tuple[tuple[str, str], ...] = ()
    # What the code means when it is sent without a kind (docs/errors.md).
    description: str = ""


PARSE_ERROR = WireError(
    -32700,
    "ParseError",
    "Parse error",
    (
        (
            TransportKind.PARSE_ERROR,
            "A line that is not JSON (`reason` invalid_json) or not valid UTF-8 (invalid_utf8); `offset` is the byte of the line where reading stopped, `detail` what was expected there. The answer's id is null.",
        ),
    ),
)
INVALID_REQUEST = WireError(
    -32600,
    "InvalidRequest",
    "Invalid Request",
    (
        (TransportKind.BAD_VERSION, '`jsonrpc` is not "2.0".'),
        (TransportKind.INVALID_METHOD, "`method` is missing or not a string."),
        (TransportKind.INVALID_ID, "The id is not a string or an integer (null, a fraction, a boolean, an object or an array)."),
        (TransportKind.INVALID_PARAMS_TYPE, "`params` is neither an object nor an array."),
        (TransportKind.NOT_AN_OBJECT, "The message is not a JSON object."),
        (TransportKind.EMPTY_BATCH, "An empty batch array."),
        (TransportKind.TOO_DEEP, "Nesting deeper than the limit (`max_depth`)."),
        (TransportKind.TOO_LARGE, "The line is longer than max_message_bytes (`limit`)."),
        (TransportKind.DUPLICATE_ID, "The id of a request still in flight (`id`)."),
    ),
)
METHOD_NOT_FOUND = WireError(-32601, "MethodNotFound", "Method not found", ((TransportKind.METHOD_NOT_FOUND, "No such method (`method`)."),))
INVALID_PARAMS = WireError(
    -32602,
    "InvalidParams",
    "Invalid params",
    (
        (TransportKind.INVALID_PARAMS, "The params do not match the method's schema (`errors: [{field, type, message}]`)."),
        (TransportKind.POSITIONAL_PARAMS, "Params given as an array; promptd takes them by name."),
    ),
)
INTERNAL_ERROR = WireError(-32603, "InternalError", "Internal error", ((TransportKind.INTERNAL, "An unexpected fault; details go to the log only."),))
REQUEST_CANCELLED = WireError(-32800, "RequestCancelled", "Request cancelled", ((TransportKind.CANCELLED, "Cancelled by `$/cancelRequest`, `exit` or the shutdown deadline."),))
SERVER_SHUT_DOWN = WireError(-32002, "ServerShutDown", "Server is shut down", ((TransportKind.SHUT_DOWN, "Sent after `shutdown`."),))

# In the order the document lists them.
TRANSPORT_ERRORS: tuple[WireError, ...] = (
    PARSE_ERROR,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    INVALID_PARAMS,
    INTERNAL_ERROR,
    REQUEST_CANCELLED,
    SERVER_SHUT_DOWN,
)


class PromptdError(Exception):
    """Root of every error promptd raises on purpose. Each concrete subclass is one application
    code (-32000..-32099) and one `data.kind`; its docstring is the kind's description."""

    code: ClassVar[int] = -32000
    kind: ClassVar[str] = "error"

    def __init__(self, message: str, **data: Any) -> None:
        super().__init__(message)
        self.message = message
        self.data = data

    def to_data(self) -> dict[str, Any]:
        return {"kind": self.kind, **self.data}


class InvalidKey(PromptdError):
    """A reminder key outside [A-Za-z0-9._-]+ or longer than 128 characters."""

    code = -32010
    kind = "invalid_key"


class NestedMarker(PromptdError):
    """A reminder body that contains reminder markup."""

    code = -32011
    kind = "nested_marker"


class UnregisteredKey(PromptdError):
    """A key that is neither reserved nor added by the host, with `keys.strict`."""

    code = -32012
    kind = "unregistered_key"


class TemplateSyntax(PromptdError):
    """A prompt template that does not parse or compile (`reason` `compile_limit`: nested deeper than Python can compile)."""

    code = -32020
    kind = "template_syntax"


class TemplateRender(PromptdError):
    """A prompt template that failed while rendering (`error` `security`: over a sandbox bound or `prompt.render_memory_mb`)."""

    code = -32021
    kind = "template_render"


class RenderTimeout(PromptdError):
    """A caller's template (custom or body, or one being linted) that took more CPU time than `prompt.render_timeout_ms` (`limit_ms`); its render was stopped."""

    code = -32022
    kind = "render_timeout"


class InvalidContext(PromptdError):
    """A prompt context field that is unknown or invalid (`field`)."""

    code = -32023
    kind = "invalid_context"


class VaultLocked(PromptdError):
    """The prompt vault could not be opened."""

    code = -32030
    kind = "vault_locked"


class UnknownProvider(PromptdError):
    """No provider by that name (also what a client answers `provider/produce` with for a name it does not serve)."""

    code = -32041
    kind = "unknown_provider"


class ProviderExists(PromptdError):
    """A provider by that name is already registered."""

    code = -32042
    kind = "provider_exists"


class InvalidProvider(PromptdError):
    """A provider registration that does not fit its kind (`field`)."""

    code = -32043
    kind = "invalid_provider"


class UnknownSession(PromptdError):
    """A method that needs a session the host already used (`turn/complete`) named one this process does not hold: never used, closed, or evicted (`session`)."""

    code = -32050
    kind = "unknown_session"


class ConfigError(PromptdError):
    """A configuration (file, environment or `initialize` override) that is invalid."""

    code = -32060
    kind = "invalid_config"


class ValueTooLarge(PromptdError):
    """A value over one of promptd's size limits (`field`, `limit` and `size`, in bytes), such as the byte caps on session state; nothing was changed."""

    # Invalid params, as every other request promptd refuses for its content.
    code = -32602
    kind = "value_too_large"


class EmptyToolName(PromptdError):
    """A tool kind given an empty (or blank) tool name in `tools.by_kind` (`field`, `tool_kind`): leave a kind out when the host has no such tool."""

    # Invalid params: the request's content is refused before anything renders.
    code = -32602
    kind = "empty_tool_name"


class AlreadyInitialized(PromptdError):
    """`initialize` was called a second time."""

    code = -32061
    kind = "already_initialized"


def _application_errors() -> list[type[PromptdError]]:
    found: list[type[PromptdError]] = []
    pending = list(PromptdError.__subclasses__())
    while pending:
        cls = pending.pop(0)
        found.append(cls)
        pending.extend(cls.__subclasses__())
    return sorted(found, key=lambda cls: -cls.code)


def _camel(kind: str) -> str:
    return "".join(part.capitalize() for part in kind.split("_"))


def catalogue() -> tuple[WireError, ...]:
    """Every code on the wire with its kinds: the transport's, then the application's (one per
    PromptdError subclass, named after its kind), ordered by code within each group. A subclass
    with a transport code (ValueTooLarge: -32602) adds its kind to that code's entry."""
    transport_codes = {error.code for error in TRANSPORT_ERRORS}
    errors = _application_errors()
    added = {code: tuple((cls.kind, (cls.__doc__ or "").strip()) for cls in errors if cls.code == code) for code in transport_codes}
    transport = [error._replace(kinds=error.kinds + added[error.code]) for error in TRANSPORT_ERRORS]
    application = [
        WireError(cls.code, _camel(cls.kind), (cls.__doc__ or cls.kind).strip().split("\n")[0], ((cls.kind, (cls.__doc__ or "").strip()),)) for cls in errors if cls.code not in transport_codes
    ]
    entries = (*transport, *application)
    codes = [e.code for e in entries]
    kinds = [k for e in entries for k, _ in e.kinds]
    names = [e.name for e in entries]
    for what, values in (("code", codes), ("kind", kinds), ("name", names)):
        repeated = sorted(str(value) for value, count in Counter[object](values).items() if count > 1)
        if repeated:
            raise RuntimeError(f"an error {what} is declared twice: {repeated}")
    return entries
