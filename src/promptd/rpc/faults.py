"""The one rule for a fault nobody expected, wherever it is caught (reading a line, acting on an
event, running a handler): the log gets the method, the exception's type and its traceback, never
the input; the peer gets -32603 with `data.kind` internal and nothing more."""

from __future__ import annotations

import traceback
from typing import Any

from promptd.rpc.codes import TransportKind

LOG_EVENT = "internal_error"


def fault_fields(exc: BaseException, method: str | None) -> dict[str, Any]:
    """What the log line of an unexpected fault says."""
    return {"method": method, "exception": type(exc).__name__, "traceback": "".join(traceback.format_exception(exc))}


def internal_data() -> dict[str, Any]:
    """The `data` of the -32603 answer: the kind alone, so nothing of the fault reaches the peer."""
    return {"kind": TransportKind.INTERNAL}
