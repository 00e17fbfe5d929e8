"""todo/gate's contract (docs/todos.md): the reason every answer carries, a disabled gate saying so,
the renamed params (`last_step_called_tool`, turn/complete's `tools_called`) with the 0.1 names
still accepted, and the nudged continuation of one prompt. In-process and over the wire."""

from __future__ import annotations

import json

import pytest
from conftest import Served, call_in_process

from promptd.config import Config
from promptd.methods.boundary import RpcFailure
from promptd.runtime import Runtime
from promptd.sessions.todos import Reason, Todo, decide

PENDING = [{"id": "1", "content": "Write the tests", "status": "pending"}]
IN_PROGRESS = [{"id": "2", "content": "Build", "status": "in_progress"}]
DONE = [{"id": "3", "content": "Plan", "status": "completed"}]


class InProcess:
    def __init__(self, config: dict | None = None) -> None:
        self.runtime = Runtime(Config().merged(config or {}))

    def call(self, method, params):
        return call_in_process(method, params, self.runtime)

    def error(self, method, params):
        with pytest.raises(RpcFailure) as failure:
            self.call(method, params)
        return failure.value.code, (failure.value.data or {}).get("kind")


class OverTheWire:
    def __init__(self, server: Served, config: dict | None = None) -> None:
        self.server = server
        if config and not hasattr(server, "initialized"):
            server.initialized = server.call("initialize", {"config": config})

    def call(self, method, params):
        return self.server.call(method, params)

    def error(self, method, params):
        reply = self.server.request(method, params)
        return reply["error"]["code"], reply["error"].get("data", {}).get("kind")


@pytest.fixture(params=["in_process", "wire"])
def door_for(request):
    """In-process, or over a server shared by the module's tests of the same config (initialized
    once, when new; started only for the wire case). Gate state is per session: each test has a
    session id of its own."""

    def make(config: dict | None = None):
        if request.param == "in_process":
            door = InProcess(config)
        else:
            server = request.getfixturevalue("shared_spawn")(tag=json.dumps(config, sort_keys=True))
            door = OverTheWire(server, config)
        door.session = request.node.name
        return door

    return make


ON = {"todo_gate": {"enabled": True}}


def gate(door, todos, called=False, prompt_id="p", **extra):
    params = {"session": door.session, "prompt_id": prompt_id, "todos": todos, "last_step_called_tool": called, **extra}
    return door.call("todo/gate", params)


# ---- reasons -------------------------------------------------------------------------------------


def test_a_disabled_gate_says_so(door_for):
    result = gate(door_for(), PENDING)
    assert result["decision"] == "continue" and result["reason"] == "disabled"
    assert result["fires"] == 0 and not result["exhausted"] and result["reminder"] is None
    # The partition is still reported, so a host can see what the gate would have acted on.
    assert result["pending"] == 1


def test_the_gate_is_off_by_default():
    assert Config().todo_gate.enabled is False


@pytest.mark.parametrize(
    "todos,called,backing,cap,reason",
    [
        (PENDING, True, 0, 2, "tool_call"),
        (DONE, False, 0, 2, "no_open_todos"),
        (IN_PROGRESS, False, 1, 2, "no_open_todos"),
        (PENDING, False, 0, 0, "no_fires_allowed"),
        (PENDING, False, 0, 2, "open_todos"),
    ],
)
def test_each_decision_carries_its_reason(door_for, todos, called, backing, cap, reason):
    door = door_for({"todo_gate": {"enabled": True, "max_fires_per_prompt": cap}})
    result = gate(door, todos, called, backing_task_count=backing)
    assert result["reason"] == reason
    assert result["decision"] == ("nudge" if reason == "open_todos" else "continue")


def test_reasons_are_checked_in_the_documented_order():
    # Disabled wins over everything; a tool call over open work; no open work over a zero cap.
    pending = [Todo("1", "x", "pending")]
    assert decide(pending, 0, True, 5, 0, enabled=False).reason is Reason.DISABLED
    assert decide(pending, 0, True, 5, 0, enabled=True).reason is Reason.TOOL_CALL
    assert decide([], 0, False, 5, 0, enabled=True).reason is Reason.NO_OPEN_TODOS
    assert decide(pending, 0, False, 5, 0, enabled=True).reason is Reason.NO_FIRES_ALLOWED
    assert decide(pending, 0, False, 2, 2, enabled=True).reason is Reason.EXHAUSTED


# ---- the nudged continuation of one prompt ------------------------------------------------------


def test_a_nudged_prompt_continues_under_the_same_prompt_id_until_the_cap(door_for):
    door = door_for({"todo_gate": {"enabled": True, "max_fires_per_prompt": 2}})
    first = gate(door, PENDING)
    assert (first["decision"], first["reason"], first["fires"]) == ("nudge", "open_todos", 1)
    # The continuation called a tool: the turn is not over, nothing is counted.
    assert gate(door, PENDING, called=True)["reason"] == "tool_call"
    second = gate(door, PENDING)
    assert (second["decision"], second["fires"]) == ("nudge", 2)
    third = gate(door, PENDING)
    assert (third["decision"], third["reason"], third["exhausted"], third["fires"]) == ("continue", "exhausted", True, 2)
    assert third["notice"] and third["reminder"] is None
    # The whole prompt is answered: one turn/complete, with every tool the prompt called.
    assert door.call("turn/complete", {"session": door.session, "tools_called": ["read_file", "todo_write"]}) == {}
    # The next user prompt has a fresh count.
    assert gate(door, PENDING, prompt_id="p2")["fires"] == 1


# ---- names ---------------------------------------------------------------------------------------


def test_the_01_names_are_still_accepted(door_for):
    door = door_for(ON)
    old = door.call("todo/gate", {"session": door.session, "prompt_id": "p", "todos": PENDING, "tool_called": True})
    assert old["reason"] == "tool_call"
    old = door.call("todo/gate", {"session": door.session, "prompt_id": "p", "todos": PENDING, "tool_called": False})
    assert old["reason"] == "open_todos"
    assert door.call("turn/complete", {"session": door.session, "tool_calls": ["read_file"]}) == {}


def test_both_spellings_at_once_are_refused(door_for):
    door = door_for(ON)
    both = {"session": door.session, "prompt_id": "p", "todos": PENDING, "tool_called": False, "last_step_called_tool": False}
    assert door.error("todo/gate", both) == (-32602, "invalid_params")
    assert door.error("turn/complete", {"session": door.session, "tool_calls": [], "tools_called": []}) == (-32602, "invalid_params")


def test_the_flag_is_required(door_for):
    door = door_for(ON)
    assert door.error("todo/gate", {"session": door.session, "prompt_id": "p", "todos": PENDING}) == (-32602, "invalid_params")


@pytest.mark.parametrize("name", ["tools_called", "tool_calls"])
def test_a_plan_tool_call_in_either_spelling_counts_as_a_todo_write(name):
    runtime = Runtime(Config())
    call_in_process("initialize", {"tools": {"by_kind": {"plan": "todo_write"}}}, runtime)
    call_in_process("session/update", {"session": "s", "cwd": "/w"}, runtime)
    for _ in range(3):
        call_in_process("turn/complete", {"session": "s"}, runtime)
    session = runtime.sessions.get("s")
    assert session.counters.turns_since_todo_write == 3
    call_in_process("turn/complete", {"session": "s", name: ["read_file", "todo_write"]}, runtime)
    assert session.counters.turns_since_todo_write == 0


def test_the_protocol_documents_the_new_names_only():
    from promptd.methods import TABLE
    from promptd.protocol import openrpc_document

    methods = {m["name"]: {p["name"] for p in m["params"]} for m in openrpc_document(TABLE)["methods"]}
    assert "last_step_called_tool" in methods["todo/gate"] and "tool_called" not in methods["todo/gate"]
    assert "tools_called" in methods["turn/complete"] and "tool_calls" not in methods["turn/complete"]
