"""What the children of a spawned `promptd serve` inherit: the allowlist and the variables a
provider names, never promptd's own variables, the vault key or the host's secrets; promptd's
/proc files closed to other processes once it starts a child."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from support.projects import key_spellings as spellings

VAULT_KEY = "5e" * 32
MARKER = "marker-secret-8d1f0c"
linux_only = pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="reads /proc")


def command_output(server):
    result = server.call("reminder/assemble", {"session": "s", "user_message": "hi", "budget": 200_000}, timeout=60)
    assert result["skipped"] == [], result["skipped"]
    return {f["provider"] for f in result["fragments"]}, result["body"]


def variables(text):
    return dict(line.split("=", 1) for line in text.splitlines() if "=" in line)


def children(pid):
    found = set()
    for task in Path(f"/proc/{pid}/task").iterdir():
        found.update(int(p) for p in (task / "children").read_text().split())
    return found


def environ_of(pid):
    return dict(entry.split(b"=", 1) for entry in Path(f"/proc/{pid}/environ").read_bytes().split(b"\0") if b"=" in entry)


@pytest.fixture
def secretive(spawn, tmp_path):
    """A server whose environment holds the vault key, a PROMPTD_* variable of the host's, a host
    secret and a variable one provider asks for; built-ins off."""
    env = {
        "PROMPTD_VAULT_KEY": VAULT_KEY,
        "PROMPTD_HOST_TOKEN": MARKER,
        "HOST_SECRET": MARKER,
        "WANTED_BY_PROVIDER": "wanted-value",
        "PROMPTD_REMINDERS__SESSION_METADATA": "false",
        "PROMPTD_REMINDERS__PROJECT_MEMORY": "false",
        "PROMPTD_REMINDERS__FILE_MODIFIED": "false",
        "PROMPTD_TODO_NUDGE__ENABLED": "false",
        "PROMPTD_REMINDERS__SPILL_DIR": str(tmp_path / "spill"),
    }
    return spawn(env=env)


def register(server, name, **fields):
    return server.request("providers/register", {"name": name, "kind": "command", "scope": "global", "key": "directive", **fields}, timeout=60)


def test_a_command_sees_the_allowlist_and_its_named_variables_never_promptds_own(secretive):
    assert "error" not in register(secretive, "env", argv=["/usr/bin/env"], env=["WANTED_BY_PROVIDER"])
    delivered, body = command_output(secretive)
    seen = variables(body)
    assert delivered == {"env"}
    assert "PATH" in seen and "HOME" in seen and seen["WANTED_BY_PROVIDER"] == "wanted-value"
    assert not [name for name in seen if name.upper().startswith("PROMPTD_")]
    assert VAULT_KEY not in body and MARKER not in body and "HOST_SECRET" not in seen


def test_a_command_without_env_gets_no_variable_outside_the_allowlist(secretive):
    register(secretive, "env", argv=["/usr/bin/env"])
    _, body = command_output(secretive)
    assert "WANTED_BY_PROVIDER" not in variables(body) and VAULT_KEY not in body


@pytest.mark.parametrize("name", ["PROMPTD_VAULT_KEY", "PROMPTD_HOST_TOKEN", "promptd_vault_key"])
def test_a_provider_naming_a_promptd_variable_is_refused(secretive, name):
    error = register(secretive, "env", argv=["/usr/bin/env"], env=["WANTED_BY_PROVIDER", name])["error"]
    assert (error["code"], error["data"]["kind"], error["data"]["field"]) == (-32043, "invalid_provider", "env")
    assert secretive.call("providers/list", timeout=60)["providers"] == []


def test_a_malformed_variable_name_is_invalid_params(secretive):
    error = register(secretive, "env", argv=["/usr/bin/env"], env=["A=B"])["error"]
    assert (error["code"], error["data"]["kind"], error["data"]["errors"][0]["field"]) == (-32602, "invalid_params", "env.0")


def test_providers_list_names_the_variables_a_command_is_given(secretive):
    register(secretive, "env", argv=["/usr/bin/env"], env=["WANTED_BY_PROVIDER"])
    secretive.call("providers/register", {"name": "plain", "kind": "static", "key": "directive", "text": "x"}, timeout=60)
    listed = {p["name"]: p["env"] for p in secretive.call("providers/list", timeout=60)["providers"]}
    assert listed == {"env": ["WANTED_BY_PROVIDER"], "plain": []}


def test_a_provider_declared_in_config_with_a_promptd_variable_refuses_initialize(secretive):
    declared = {"name": "env", "kind": "command", "key": "directive", "argv": ["/usr/bin/env"], "env": ["PROMPTD_VAULT_KEY"]}
    error = secretive.request("initialize", {"config": {"reminders": {"providers": [declared]}}}, timeout=60)["error"]
    assert error["data"]["kind"] == "invalid_config"


def test_a_provider_declared_in_config_passes_its_variables(secretive):
    declared = {"name": "env", "kind": "command", "scope": "global", "key": "directive", "argv": ["/usr/bin/env"], "env": ["WANTED_BY_PROVIDER"]}
    secretive.call("initialize", {"config": {"reminders": {"providers": [declared]}}}, timeout=60)
    _, body = command_output(secretive)
    assert variables(body)["WANTED_BY_PROVIDER"] == "wanted-value" and VAULT_KEY not in body


@linux_only
def test_no_child_of_promptd_holds_a_promptd_variable_or_the_hosts_secret(secretive):
    # A caller's template starts a render worker; a command starts the warden.
    rendered = secretive.call("prompt/render", {"context": {"system_prompt": {"custom": "two is ${{ 1 + 1 }}"}}}, timeout=60)
    assert rendered["text"] == "two is 2"
    register(secretive, "quick", argv=["/bin/true"])
    command_output(secretive)
    kids = children(secretive.proc.pid)
    commands = {kid: Path(f"/proc/{kid}/cmdline").read_bytes() for kid in kids}
    assert any(b"promptd.prompt.worker" in line for line in commands.values()), commands
    assert any(b"warden" in line for line in commands.values()), commands
    for kid in kids:
        env = environ_of(kid)
        assert b"PATH" in env
        assert not [name for name in env if name.upper().startswith(b"PROMPTD_")], commands[kid]
        assert MARKER.encode() not in b"".join(env.values()) and VAULT_KEY.encode() not in b"".join(env.values())


def test_a_command_never_sees_a_key_file_key_or_an_lc_variable_it_did_not_name(spawn, tmp_path):
    key = bytes(range(100, 132))
    key_file = tmp_path / "vault.key"
    key_file.write_text(key.hex())
    key_file.chmod(0o600)
    copies = {name: value for name, value in spellings(key).items() if name != "RAW"}  # exec'd env is NUL-free text
    server = spawn(
        env={
            "PROMPTD_VAULT__KEY_FILE": str(key_file),
            "PROMPTD_REMINDERS__SESSION_METADATA": "false",
            "PROMPTD_REMINDERS__PROJECT_MEMORY": "false",
            "PROMPTD_TODO_NUDGE__ENABLED": "false",
            "PROMPTD_REMINDERS__SPILL_DIR": str(tmp_path / "spill"),
            "LC_API_TOKEN": MARKER,
            "LC_CTYPE": "C.UTF-8",
            **copies,
        }
    )
    assert "error" not in register(server, "env", argv=["/usr/bin/env"], env=list(copies))
    _, body = command_output(server)
    seen = variables(body)
    assert seen.get("LC_CTYPE") == "C.UTF-8" and "LC_API_TOKEN" not in seen and MARKER not in body
    assert [name for name in copies if name in seen] == [] and key.hex() not in body.lower()


def test_promptd_becomes_non_dumpable_when_it_first_starts_a_child_and_not_before():

    probe = "from promptd import childenv as c; before = c.dumpable(); c.child_env(); print(before, c.dumpable())"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    expected = "True False" if sys.platform.startswith("linux") else "None None"
    assert out.stdout.split() == expected.split(), out.stderr


@linux_only
@pytest.mark.skipif(not Path("/usr/bin/setpriv").exists() and not Path("/bin/setpriv").exists(), reason="runs promptd as another user with setpriv")
def test_a_process_of_promptds_user_cannot_open_its_proc_files_once_a_command_ran(tmp_path):
    # Root may open any process's /proc files whatever the flag, so as root (these tests usually
    # are) promptd runs as `nobody` here, and so does the process that tries to open its files.
    import shutil

    from conftest import PROMPTD, Served

    as_user = [shutil.which("setpriv") or "setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] if os.geteuid() == 0 else []
    home = tmp_path / "home"
    home.mkdir()
    os.chmod(tmp_path, 0o755)
    if as_user:
        os.chown(home, 65534, 65534)
    env = {
        "HOME": str(home),
        "XDG_CACHE_HOME": str(home / "cache"),
        "XDG_STATE_HOME": str(home / "state"),
        "PROMPTD_REMINDERS__SESSION_METADATA": "false",
        "PROMPTD_REMINDERS__PROJECT_MEMORY": "false",
    }
    server = Served(env=env, argv=[*as_user, *PROMPTD, "serve"])
    try:
        assert server.settled(timeout=60), server.stderr_text()
        pid = server.proc.pid  # setpriv execs promptd: the same process

        def opens(path: str) -> bool:
            import subprocess

            probe = subprocess.run([*as_user, "/bin/cat", path], capture_output=True, timeout=60)
            return probe.returncode == 0

        assert opens(f"/proc/{pid}/environ")  # a serve that ran no child is left as it was
        check = "if cat /proc/$PPID/environ >/dev/null 2>&1 || ls /proc/$PPID/fd >/dev/null 2>&1; then echo open; else echo closed; fi"
        register(server, "probe", argv=["/bin/sh", "-c", check])
        _, body = command_output(server)
        assert body.strip().endswith("closed")
        assert not opens(f"/proc/{pid}/environ") and not opens(f"/proc/{pid}/fd/0")
    finally:
        server.close(timeout=60)
