"""The environment of promptd's child processes (promptd.childenv): the allowlist, the names a
provider asks for, and the variables no child ever gets."""

from __future__ import annotations

import pytest
from support.projects import key_spellings as spellings

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


@pytest.fixture
def no_withheld_keys(monkeypatch):
    """A process-wide set of withheld keys of the test's own, empty at first."""
    from promptd import keyfile

    monkeypatch.setattr(keyfile, "_WITHHELD", set())
    return keyfile


KEY = bytes(range(32))


def test_the_vault_key_under_another_name_in_any_spelling_is_not_passed(no_withheld_keys):
    copies = spellings(KEY)
    env = child_env([*copies, "OTHER"], environ={**HOST, "PROMPTD_VAULT_KEY": KEY.hex(), **copies, "OTHER": "5e" * 32})
    assert [name for name in copies if name in env] == []
    assert env["OTHER"] == "5e" * 32  # a key that is not promptd's is an ordinary value


def test_a_key_promptd_read_from_a_key_file_is_withheld_though_no_variable_names_it(no_withheld_keys, tmp_path):
    key_file = tmp_path / "vault.key"
    key_file.write_text(KEY.hex() + "\n")
    key_file.chmod(0o600)
    copies = spellings(KEY)
    assert [name for name in copies if name in child_env(list(copies), environ={**HOST, **copies})] == list(copies)
    assert no_withheld_keys.read_key_file(key_file) == KEY
    assert child_env(list(copies), environ={**HOST, **copies}).keys() & copies.keys() == set()


def test_keys_are_withheld_by_digest_never_kept_as_keys(no_withheld_keys):
    no_withheld_keys.withhold(KEY)
    assert KEY not in no_withheld_keys.withheld() and len(next(iter(no_withheld_keys.withheld()))) == 32


def test_the_locale_passes_by_its_category_names_and_no_other_lc_name():
    env = child_env(environ={"LC_CTYPE": "C.UTF-8", "LC_TELEPHONE": "en_GB", "LC_API_TOKEN": "tok", "LC_": "x", "LC_ALLX": "y"})
    assert env == {"LC_CTYPE": "C.UTF-8", "LC_TELEPHONE": "en_GB"}


def test_promptd_names_are_refused_in_any_letter_case():
    assert is_refused("PROMPTD_VAULT_KEY") and is_refused("Promptd_Config") and not is_refused("MY_PROMPTD_THING")
