"""The in-process door (promptd.local.Local): the server's method table and boundary, no process.
Its answers are compared with the wire's where the two must agree."""

from __future__ import annotations

import asyncio
import subprocess
import sys

import pytest

import promptd
from promptd.errors import ConfigError
from promptd.local import Local, LocalError
from promptd.methods.boundary import RpcFailure

WRAP = {"key": "session.cwd", "body": "/tmp"}


def quiet() -> Local:
    return Local({"log_level": "error"})


def test_a_sync_method_answers_what_the_server_answers(served):
    assert quiet().call("reminder/wrap", WRAP) == served.call("reminder/wrap", WRAP)


def test_an_async_method_is_awaited_with_acall_and_run_to_completion_by_call():
    door = quiet()
    params = {"session": "s", "user_message": "hello", "directives": ["Be brief."]}
    composed = asyncio.run(door.acall("turn/compose", params))
    assert composed["content"].startswith("hello\n\n") and "Be brief." in composed["content"]
    assert "Be brief." in door.call("reminder/assemble", {"session": "s", "directives": ["Be brief."]})["text"]


def test_call_inside_a_running_loop_points_to_acall_for_a_method_that_waits():
    door = quiet()

    async def inside() -> None:
        assert door.call("reminder/wrap", WRAP)["text"]  # answered at once: fine in a loop
        with pytest.raises(RuntimeError, match="acall"):
            door.call("reminder/assemble", {"session": "s"})

    asyncio.run(inside())


def test_a_domain_error_carries_the_wires_code_and_kind(served):
    params = {"key": "", "body": "x"}
    with pytest.raises(LocalError) as caught:
        quiet().call("reminder/wrap", params)
    wire = served.request("reminder/wrap", params)["error"]
    assert caught.value.to_error() == wire
    assert caught.value.kind == "invalid_key" and caught.value.code == wire["code"]
    assert isinstance(caught.value, RpcFailure)


def test_invalid_params_and_unknown_methods_are_refused_as_on_the_wire(served):
    door = quiet()
    for method, params in [("reminder/wrap", {"key": 3}), ("reminder/wrap", ["session.cwd", "x"]), ("no/such", {}), ("exit", {})]:
        with pytest.raises(LocalError) as caught:
            door.call(method, params)
        assert caught.value.to_error() == served.request(method, params)["error"], method


def test_initialize_applies_config_and_a_second_one_is_refused():
    door = quiet()
    result = door.call("initialize", {"config": {"max_message_bytes": 4096, "reminders": {"provider_timeout_ms": 750}}})
    assert result["limits"] == {"max_message_bytes": 4096, "provider_timeout_ms": 750}
    assert set(result["methods"]) >= set(door.methods)
    assert door.runtime.config.max_message_bytes == 4096
    with pytest.raises(LocalError) as caught:
        door.call("initialize", {})
    assert caught.value.kind == "already_initialized"


def test_a_bad_config_in_initialize_is_a_config_error_and_changes_nothing():
    door = quiet()
    with pytest.raises(LocalError) as caught:
        door.call("initialize", {"config": {"reminders": {"budget_chars": -1}}})
    assert caught.value.kind == "invalid_config"
    assert door.runtime.config.reminders.budget_chars > 0


def test_the_constructor_takes_a_mapping_of_settings_and_refuses_a_bad_one():
    assert Local({"log_level": "error", "max_message_bytes": 2048}).runtime.config.max_message_bytes == 2048
    with pytest.raises(ConfigError):
        Local({"max_message_bytes": 1})


def test_events_go_to_on_event_once_initialize_subscribed():
    seen: list[tuple[str, dict]] = []
    door = Local({"log_level": "error"}, on_event=lambda method, params: seen.append((method, params)))
    door.call("initialize", {"config": {"todo_gate": {"enabled": True, "max_fires_per_prompt": 1}}, "capabilities": {"events": True}})
    gate = {"session": "s", "prompt_id": "p", "todos": [{"id": "1", "content": "x", "status": "pending"}], "tool_called": False}
    assert door.call("todo/gate", gate)["decision"] == "nudge"
    assert door.call("todo/gate", gate)["exhausted"]
    door.call("todo/gate", gate)
    assert [method for method, _ in seen] == ["event/gate_fired", "event/gate_exhausted"]


def test_after_shutdown_every_call_is_refused_as_shut_down():
    door = quiet()
    assert door.call("shutdown") == {}
    with pytest.raises(LocalError) as caught:
        door.call("reminder/wrap", WRAP)
    assert caught.value.kind == "shut_down"


def test_promptd_local_is_re_exported_without_making_import_promptd_heavy():
    assert promptd.Local is Local and promptd.LocalError is LocalError
    probe = "import sys, promptd; print(any(m.startswith(('pydantic', 'promptd.methods')) for m in sys.modules))"
    assert subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout.strip() == "False"


def test_a_call_of_an_offloaded_method_starts_no_event_loop_and_no_thread(monkeypatch):
    import asyncio
    import threading

    from promptd.local import Local

    door = Local()

    def refuse(*args, **kwargs):
        raise AssertionError("Local.call started an event loop or a thread for an offloaded method")

    monkeypatch.setattr(asyncio, "run", refuse)
    monkeypatch.setattr(threading.Thread, "start", refuse)
    assert door.call("content/sanitize", {"text": "<system-reminder>x"})["neutralized"] == 1
    assert door.call("citation/strip", {"text": "plain"})["text"] == "plain"


def test_keys_and_provider_names_hold_at_most_128_characters():
    door = quiet()
    assert door.call("reminder/wrap", {"key": "k" * 128, "body": "x"})["text"]
    with pytest.raises(LocalError) as caught:
        door.call("reminder/wrap", {"key": "k" * 129, "body": "x"})
    assert caught.value.kind == "invalid_key" and caught.value.data["limit"] == 128
    with pytest.raises(LocalError) as caught:
        door.call("providers/register", {"name": "n" * 129, "kind": "static", "key": "k", "text": "x"})
    assert caught.value.kind == "invalid_provider"
    with pytest.raises(LocalError) as caught:
        door.call("providers/register", {"name": "n", "kind": "static", "key": "k" * 129, "text": "x"})
    assert caught.value.kind == "invalid_key"
