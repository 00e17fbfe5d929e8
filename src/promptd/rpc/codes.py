"""JSON-RPC 2.0 error codes used on the wire (spec section 5.1, plus LSP's cancel and a
shutdown code in the implementation-defined server-error range)."""

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
SERVER_SHUT_DOWN = -32002
# LSP's RequestCancelled; chosen so that standard LSP-style clients recognise cancellation.
REQUEST_CANCELLED = -32800

MESSAGES = {
    PARSE_ERROR: "Parse error",
    INVALID_REQUEST: "Invalid Request",
    METHOD_NOT_FOUND: "Method not found",
    INVALID_PARAMS: "Invalid params",
    INTERNAL_ERROR: "Internal error",
    SERVER_SHUT_DOWN: "Server is shut down",
    REQUEST_CANCELLED: "Request cancelled",
}
