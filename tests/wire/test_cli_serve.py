"""`promptd serve` (and the commands) as a process: its exit status at start-up and end of input,
its stderr, stdin from a pipe or a regular file, stdout to a reader that went away."""

from __future__ import annotations

import json
import subprocess

import pytest
from conftest import PROMPTD, run_cli


def test_an_invalid_config_file_stops_start_up_with_one_line_and_exit_code_2(tmp_path):
    toml = tmp_path / "promptd.toml"
    toml.write_text("[reminders]\nbudget_chars = 'lots'\n")
    result = run_cli("--config", str(toml), "serve")
    assert result.returncode == 2
    lines = result.stderr.decode().strip().splitlines()
    assert len(lines) == 1 and "reminders.budget_chars" in lines[0] and "Traceback" not in lines[0]


def test_a_host_variable_with_the_prefix_is_ignored_with_one_warning_naming_it():
    result = run_cli("serve", env={"PROMPTD_BIN": "/usr/local/bin/promptd", "PROMPTD_BUDGETT": "secret-value"}, stdin=b"")
    stderr = result.stderr.decode()
    assert result.returncode == 0
    assert "env_ignored" in stderr and "PROMPTD_BIN" in stderr and "PROMPTD_BUDGETT" in stderr
    assert "secret-value" not in stderr


def test_global_options_are_accepted_after_the_command(tmp_path):
    request = b'{"jsonrpc":"2.0","id":1,"method":"reminder/keys"}\n'
    after = run_cli("serve", "--log-level", "debug", stdin=request)
    assert after.returncode == 0
    assert any(json.loads(line).get("event") == "request" for line in after.stderr.splitlines())
    before = run_cli("--log-level", "debug", "serve", stdin=request)
    assert any(json.loads(line).get("event") == "request" for line in before.stderr.splitlines())
    # A value given after the command wins over one given before it.
    quiet = run_cli("--log-level", "debug", "serve", "--log-level", "error", stdin=request)
    assert quiet.stderr == b""
    toml = tmp_path / "promptd.toml"
    toml.write_text('[reminders]\nstyle = "wrong"\n')
    refused = run_cli("call", "reminder/keys", "--config", str(toml))
    assert refused.returncode == 2 and refused.stderr.decode().count("\n") == 1


def test_a_missing_config_folder_is_one_line_and_exit_2():
    result = run_cli("--config", "/no/such/folder/promptd.toml", "serve", stdin=b"")
    assert result.returncode == 2 and b"Traceback" not in result.stderr
    assert result.stderr.decode().startswith("promptd serve: cannot read config file")


@pytest.mark.parametrize("command", [["call", "rpc.discover"], ["render", "--json"], ["keys"]])
def test_a_reader_that_goes_away_ends_the_command_quietly_with_status_1(command):
    import os

    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        result = subprocess.run([*PROMPTD, *command], stdout=write_end, stderr=subprocess.PIPE, timeout=60, env=dict(os.environ, PROMPTD_LOG_LEVEL="warning"))
    finally:
        os.close(write_end)
    assert result.returncode == 1 and result.stderr == b""


def test_serve_on_stdin_eof_exits_zero_and_writes_only_frames_to_stdout():
    result = run_cli("serve", stdin=b'{"jsonrpc":"2.0","id":1,"method":"reminder/keys"}\n')
    assert result.returncode == 0
    assert [json.loads(line)["id"] for line in result.stdout.splitlines()] == [1]


def test_serve_reads_requests_from_a_regular_file_too(tmp_path):
    import os

    requests = tmp_path / "requests.jsonl"
    requests.write_bytes(b"".join(b'{"jsonrpc":"2.0","id":%d,"method":"reminder/keys"}\n' % n for n in range(3)))
    with open(requests, "rb") as stdin:
        result = subprocess.run([*PROMPTD, "serve"], stdin=stdin, capture_output=True, timeout=60, env=dict(os.environ, PROMPTD_LOG_LEVEL="warning"))
    assert result.returncode == 0
    assert sorted(json.loads(line)["id"] for line in result.stdout.splitlines()) == [0, 1, 2]
