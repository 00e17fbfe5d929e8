"""The two doors a provenance test runs through: in-process dispatch with one runtime (one nonce,
one ledger) across calls, like one server, and a server over the wire (tests/conftest.py). Both answer `call` with
the result and `error` with (code, data.kind)."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import Served, call_in_process

from promptd.config import Config
from promptd.methods.boundary import RpcFailure
from promptd.runtime import Runtime

# Generous: a slow CI machine must not fail these; a hang or a quadratic blow-up still does.
SLOW = 120.0


class InProcess:
    session = "s"

    def __init__(self, style: str = "pua") -> None:
        self.runtime = Runtime(Config().merged({"reminders": {"style": style}}))

    def call(self, method: str, params: Any = None, timeout: float = SLOW) -> Any:
        return call_in_process(method, params, runtime=self.runtime)

    def error(self, method: str, params: Any) -> tuple[int, str | None]:
        with pytest.raises(RpcFailure) as failure:
            self.call(method, params)
        return failure.value.code, (failure.value.data or {}).get("kind")


class Wire:
    session = "s"

    def __init__(self, server: Served) -> None:
        self.server = server

    def call(self, method: str, params: Any = None, timeout: float = SLOW) -> Any:
        return self.server.call(method, params, timeout=timeout)

    def error(self, method: str, params: Any) -> tuple[int, str | None]:
        reply = self.server.request(method, params, timeout=SLOW)
        assert "error" in reply, reply
        return reply["error"]["code"], reply["error"].get("data", {}).get("kind")


def make_door(request: pytest.FixtureRequest) -> InProcess | Wire:
    """For a fixture parametrized over "in_process" and "wire": in-process, or over the module's
    shared server (started only for the wire case). Session state is kept apart by a session id of
    the test's own."""
    made = InProcess() if request.param == "in_process" else Wire(request.getfixturevalue("shared_served"))
    made.session = request.node.name
    return made
