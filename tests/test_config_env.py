"""The host's own PROMPTD_* environment variables: ignored with one warning naming them; a real
setting's invalid value still stops start-up with one line."""

from __future__ import annotations

import os
import subprocess

import pytest
from conftest import PROMPTD
from support.projects import ENV_SECRET as SECRET

from promptd import config as config_module
from promptd.errors import ConfigError


def test_names_that_are_not_settings_are_ignored_and_reported():
    environ = {
        "PROMPTD_BIN": "/usr/local/bin/promptd",
        "PROMPTD_HOME": SECRET,
        "PROMPTD_REMINDERS__NO_SUCH_FIELD": "1",  # a section's unknown field
        "PROMPTD_REMINDERS__STYLE__DEEPER": "x",  # below a field that is not a section
        "PROMPTD_": "x",
        "PROMPTD_CONFIG": "",  # promptd's own variables are not reported
        "PROMPTD_VAULT_KEY": "k",
        "OTHER": "1",
        "PROMPTD_TODO_GATE__ENABLED": "true",
    }
    loaded = config_module.load(None, environ)
    assert loaded.todo_gate.enabled is True
    assert loaded.model_dump() == config_module.Config().merged({"todo_gate": {"enabled": True}}).model_dump()
    assert config_module.ignored_env_names(environ) == sorted(["PROMPTD_", "PROMPTD_BIN", "PROMPTD_HOME", "PROMPTD_REMINDERS__NO_SUCH_FIELD", "PROMPTD_REMINDERS__STYLE__DEEPER"])


def test_settings_and_whole_sections_are_still_read():
    loaded = config_module.load(None, {"PROMPTD_REMINDERS": '{"style": "xml", "budget_chars": 10}', "PROMPTD_LOG_LEVEL": "error"})
    assert (loaded.reminders.style, loaded.reminders.budget_chars, loaded.log_level) == ("xml", 10, "error")
    assert config_module.ignored_env_names({"PROMPTD_REMINDERS": "{}", "PROMPTD_LOG_LEVEL": "error"}) == []


@pytest.mark.parametrize(
    "env,field",
    [
        ({"PROMPTD_REMINDERS__STYLE": "morse"}, "reminders.style"),
        ({"PROMPTD_TODO_GATE__MAX_FIRES_PER_PROMPT": "-1"}, "todo_gate.max_fires_per_prompt"),
        ({"PROMPTD_MAX_MESSAGE_BYTES": "lots"}, "max_message_bytes"),
        ({"PROMPTD_REMINDERS": "3"}, "reminders"),
    ],
)
def test_an_invalid_value_of_a_real_setting_is_still_refused(env, field):
    with pytest.raises(ConfigError) as caught:
        config_module.load(None, {**env, "PROMPTD_BIN": "/usr/local/bin/promptd"})
    assert caught.value.data["field"] == field


def run_serve(env: dict[str, str], stdin: bytes = b"") -> subprocess.CompletedProcess[bytes]:
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("PROMPTD_")}
    full_env.update(PROMPTD_LOG_LEVEL="warning", **env)
    return subprocess.run([*PROMPTD, "serve"], input=stdin, capture_output=True, env=full_env, timeout=60)


def test_no_warning_when_every_promptd_variable_is_a_setting():
    result = run_serve({"PROMPTD_REMINDERS__STYLE": "xml"})
    assert result.returncode == 0 and b"env_ignored" not in result.stderr


def test_an_invalid_setting_still_stops_start_up_with_one_line_naming_it():
    result = run_serve({"PROMPTD_REMINDERS__STYLE": "morse", "PROMPTD_BIN": "/usr/local/bin/promptd"})
    assert result.returncode == 2 and result.stdout == b""
    lines = result.stderr.decode().strip().splitlines()
    # The same one-line format as an invalid config file's setting.
    assert len(lines) == 1 and lines[0].startswith("promptd serve: invalid config at reminders.style: ")
    assert "morse" not in lines[0] and "Traceback" not in lines[0]


def test_a_start_with_no_settings_gets_the_defaults_unvalidated_and_equal_to_validated_ones():
    settings = config_module
    loaded = settings.load(environ={})
    assert loaded == settings.Config() and loaded.model_dump() == settings.Config().model_dump()
    assert loaded.model_fields_set == set() and loaded.reminders == settings.RemindersConfig()
    # Overrides on top of them are still validated.
    assert loaded.merged({"log_level": "debug"}).log_level.value == "debug"
    with pytest.raises(ConfigError):
        loaded.merged({"log_level": "loud"})
