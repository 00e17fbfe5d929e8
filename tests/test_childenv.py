"""The environment of promptd's child processes (promptd.childenv): the allowlist, the names a
provider asks for, and the variables no child ever gets."""

from __future__ import annotations

from promptd.childenv import child_env, is_refused

HOST = {
    "PATH": "/usr/bin:/bin",
    "HOME": "/home/u",
    "LANG": "en_GB.UTF-8",
    "LC_ALL": "en_GB.UTF-8",
    "TZ": "Europe/London",
    "PWD": "/where/promptd/runs",
    "PROMPTD_VAULT_KEY": "k" * 64,
    "PROMPTD_REMINDERS__BUDGET_CHARS": "9000",
    "PROMPTD_BIN": "/usr/local/bin/promptd",
    "GITHUB_TOKEN": "ghp_secret",
    "SSH_AUTH_SOCK": "/run/agent.sock",
    "LD_PRELOAD": "/tmp/evil.so",
}


def test_a_child_gets_the_allowlisted_variables_and_nothing_else():
    assert child_env(environ=HOST) == {
        "PATH": "/usr/bin:/bin",
        "HOME": "/home/u",
        "LANG": "en_GB.UTF-8",
        "LC_ALL": "en_GB.UTF-8",
        "TZ": "Europe/London",
    }


def test_a_named_variable_is_passed_and_an_unset_one_is_left_out():
    env = child_env(["GITHUB_TOKEN", "NOT_SET"], environ=HOST)
    assert env["GITHUB_TOKEN"] == "ghp_secret" and "NOT_SET" not in env


def test_no_promptd_variable_reaches_a_child_even_when_named():
    env = child_env(["PROMPTD_VAULT_KEY", "PROMPTD_BIN", "promptd_vault_key"], environ={**HOST, "promptd_vault_key": "x"})
    assert not any(name.upper().startswith("PROMPTD_") for name in env)


def test_the_vault_key_copied_under_another_name_is_not_passed():
    env = child_env(["MY_KEY"], environ={**HOST, "MY_KEY": HOST["PROMPTD_VAULT_KEY"]})
    assert "MY_KEY" not in env


def test_promptd_names_are_refused_in_any_letter_case():
    assert is_refused("PROMPTD_VAULT_KEY") and is_refused("Promptd_Config") and not is_refused("MY_PROMPTD_THING")
