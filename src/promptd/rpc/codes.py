"""JSON-RPC 2.0 error codes used on the wire (spec section 5.1, plus LSP's cancel and a
shutdown code in the implementation-defined server-error range).

Declared once, in promptd.errors (with their `data.kind` values, which the protocol document and
the generated clients read); these are the names the transport uses.
"""

from promptd import errors as _errors

PARSE_ERROR = _errors.PARSE_ERROR.code
INVALID_REQUEST = _errors.INVALID_REQUEST.code
METHOD_NOT_FOUND = _errors.METHOD_NOT_FOUND.code
INVALID_PARAMS = _errors.INVALID_PARAMS.code
INTERNAL_ERROR = _errors.INTERNAL_ERROR.code
SERVER_SHUT_DOWN = _errors.SERVER_SHUT_DOWN.code
# LSP's RequestCancelled; chosen so that standard LSP-style clients recognise cancellation.
REQUEST_CANCELLED = _errors.REQUEST_CANCELLED.code

MESSAGES = {error.code: error.message for error in _errors.TRANSPORT_ERRORS}

# The `data.kind` values sent with these codes (one StrEnum, declared beside the codes).
TransportKind = _errors.TransportKind
