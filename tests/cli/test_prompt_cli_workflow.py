"""The prompt owner's command line: render / diff / vars / lint, their exit codes (0 ok, 1 findings,
2 usage or input error), snapshots, JSON output, and prompt/vars on the wire."""

from __future__ import annotations

import hashlib
import json
import os

import pytest
from conftest import call_in_process, run_cli

from promptd.prompt import vault

CUSTOM = "You are ${{ system_prompt_label }}.\n${%- if is_non_interactive %}\nNobody is watching.\n${%- else %}\nAsk before publishing.\n${%- endif %}\n"


@pytest.fixture
def project(tmp_path):
    (tmp_path / "custom.jinja").write_text(CUSTOM)
    (tmp_path / "headless.yaml").write_text("is_non_interactive: true\n")
    (tmp_path / "interactive.yaml").write_text("is_non_interactive: false\n")
    return tmp_path


# -- exit codes and errors ------------------------------------------------------------------------


def test_lint_exits_0_clean_1_findings_2_unreadable(project, cli):
    (project / "bad.jinja").write_text("${{ tools.by_kind.read }}")
    assert cli("lint", "custom.jinja", cwd=project).returncode == 0
    assert cli("lint", "custom.jinja", "bad.jinja", cwd=project).returncode == 1
    missing = cli("lint", "bad.jinja", "missing.jinja", cwd=project)
    assert missing.returncode == 2 and b"missing.jinja" in missing.stderr and b"Traceback" not in missing.stderr


def test_lint_warnings_alone_do_not_fail(project, cli):
    (project / "py.jinja").write_text("${% if os_name.startswith('win') %}w${% endif %}")
    result = cli("lint", "py.jinja", cwd=project)
    assert result.returncode == 0 and b"warning: not_portable" in result.stdout


def test_lint_refuses_a_sealed_file_with_a_message_and_exit_2(project, cli):
    (project / "my.sealed").write_bytes(vault.seal(CUSTOM.encode(), vault.DEFAULT_KEY, "mytpl"))
    result = cli("lint", "my.sealed", cwd=project)
    assert result.returncode == 2 and b"sealed template" in result.stderr and b"promptd vault open" in result.stderr


def test_lint_json_lists_findings_with_their_file_and_errors_apart(project, cli):
    (project / "bad.jinja").write_text("ok\n${{ working_dir }}")
    result = cli("lint", "--json", "bad.jinja", "missing.jinja", cwd=project)
    parsed = json.loads(result.stdout)
    assert result.returncode == 2
    assert [(f["file"], f["line"], f["column"], f["kind"], f["severity"]) for f in parsed["findings"]] == [("bad.jinja", 2, 5, "undefined_variable", "error")]
    assert [(e["file"], e["error"]) for e in parsed["errors"]] == [("missing.jinja", "unreadable")]


def test_lint_reads_stdin_and_knows_the_flags_the_host_declares(project, cli):
    source = b"${% if host_flag %}x${% endif %}"
    assert cli("lint", "-", stdin=source, cwd=project).returncode == 1
    assert cli("lint", "--flag", "host_flag", "-", stdin=source, cwd=project).returncode == 0


def test_render_errors_name_the_file_line_and_column(project, cli):
    (project / "bad.jinja").write_text("Intro\nDir: ${{ working_dir }}\n")
    result = cli("render", "--override", "custom:bad.jinja", cwd=project)
    assert result.returncode == 2
    assert result.stderr.decode().startswith("promptd render: bad.jinja:2:10: `working_dir` is undefined")
    assert b"did you mean `working_directory`?" in result.stderr and b"template 'custom'" not in result.stderr


def test_an_unquoted_yaml_date_gets_a_hint(project, cli):
    (project / "dated.yaml").write_text("current_date: 2025-07-16\n")
    result = cli("render", "--context", "dated.yaml", cwd=project)
    assert result.returncode == 2 and b'quote it (current_date: "2025-07-16")' in result.stderr


@pytest.mark.parametrize("flag", ["is_windows=yes", "is_windows=1", "is_windows=0.0", "is_windos"])
def test_flag_values_are_true_or_false_and_flag_names_must_be_read_by_a_template(project, flag, cli):
    result = cli("render", "--flag", flag, cwd=project)
    assert result.returncode == 2 and b"Traceback" not in result.stderr


def test_a_flag_the_custom_template_reads_is_accepted(project, cli):
    (project / "flagged.jinja").write_text("${% if beta_host %}beta${% else %}stable${% endif %}")
    result = cli("render", "--override", "custom:flagged.jinja", "--flag", "beta_host=true", cwd=project)
    assert (result.returncode, result.stdout) == (0, b"beta")
    typo = cli("render", "--override", "custom:flagged.jinja", "--flag", "beta_hots", cwd=project)
    assert typo.returncode == 2 and b"did you mean beta_host?" in typo.stderr


def test_a_missing_output_folder_is_an_input_error_not_a_traceback(project, cli):
    result = cli("render", "-o", "no/such/folder/out.txt", cwd=project)
    assert result.returncode == 2 and b"Traceback" not in result.stderr


# -- output -------------------------------------------------------------------------------------


def test_render_json_reports_characters_and_utf8_bytes(project, cli):
    (project / "wide.jinja").write_text("Grüße ${{ system_prompt_label }} ✓")
    parsed = json.loads(cli("render", "--override", "custom:wide.jinja", "--json", cwd=project).stdout)
    assert (parsed["chars"], parsed["bytes"]) == (len(parsed["text"]), len(parsed["text"].encode("utf-8")))
    assert parsed["bytes"] > parsed["chars"]


def test_cli_and_wire_read_a_crlf_template_with_a_bom_the_same_way(project, cli):
    raw = "\ufeffLine one ${{ system_prompt_label }}\r\nLine two\r\n"
    (project / "crlf.jinja").write_bytes(raw.encode("utf-8"))
    printed = cli("render", "--override", "custom:crlf.jinja", cwd=project)
    wire = call_in_process("prompt/render", {"context": {"system_prompt": {"custom": raw}}})
    assert printed.stdout == wire["text"].encode() == b"Line one Grok\nLine two"
    assert hashlib.sha256(printed.stdout).hexdigest() == wire["sha256"]


def test_snapshots_are_missing_then_written_then_the_same_then_changed(project, cli):
    args = ["render", "--override", "custom:custom.jinja", "--context", "headless.yaml", "--context", "interactive.yaml", "--snapshot", "snaps"]
    first = cli(*args, cwd=project)
    assert first.returncode == 1 and [line.split()[0] for line in first.stdout.decode().splitlines()[:2]] == ["missing", "missing"]
    written = cli(*args, "--update", cwd=project)
    assert written.returncode == 0 and (project / "snaps" / "headless.txt").read_text() == "You are Grok.\nNobody is watching."
    same = cli(*args, cwd=project)
    assert same.returncode == 0 and same.stdout.decode().splitlines()[0].startswith("same")
    assert "chars" in same.stdout.decode() and "bytes" in same.stdout.decode()
    (project / "custom.jinja").write_text(CUSTOM.replace("Nobody is watching.", "Run unattended."))
    changed = cli(*args, cwd=project)
    out = changed.stdout.decode()
    assert changed.returncode == 1 and "-Nobody is watching." in out and "+Run unattended." in out
    assert "changed" in out.splitlines()[0] and out.splitlines()[-1].startswith("1 of 2 snapshots differ")


SNAPSHOT_ARGS = ["render", "--override", "custom:custom.jinja", "--context", "headless.yaml", "--snapshot", "snaps"]


def test_a_snapshot_that_is_a_symlink_is_neither_shown_nor_overwritten(project, cli):
    (project / "victim").mkdir()
    precious = project / "victim" / "precious.txt"
    precious.write_text("SECRET-VICTIM-CONTENT\n")
    (project / "snaps").mkdir()
    (project / "snaps" / "headless.txt").symlink_to("../victim/precious.txt")
    for extra in ([], ["--update"]):
        done = cli(*SNAPSHOT_ARGS, *extra, cwd=project)
        assert done.returncode == 2, done.stderr
        assert b"SECRET-VICTIM-CONTENT" not in done.stdout + done.stderr
        assert b"snaps/headless.txt: symlink" in done.stderr
    assert precious.read_text() == "SECRET-VICTIM-CONTENT\n" and (project / "snaps" / "headless.txt").is_symlink()


def test_a_dangling_snapshot_link_is_refused_and_its_target_never_created(project, cli):
    (project / "snaps").mkdir()
    (project / "snaps" / "headless.txt").symlink_to("../planted.txt")
    assert cli(*SNAPSHOT_ARGS, "--update", cwd=project).returncode == 2
    assert not (project / "planted.txt").exists()


def test_a_fifo_in_place_of_a_snapshot_is_refused_without_blocking(project):
    # A process of its own, under run_cli's timeout: a regression blocks that process, not the suite.
    cli = run_cli
    (project / "snaps").mkdir()
    os.mkfifo(project / "snaps" / "headless.txt")
    for extra in ([], ["--update"]):
        done = cli(*SNAPSHOT_ARGS, *extra, cwd=project)
        assert done.returncode == 2 and b"not_regular" in done.stderr


def test_update_replaces_the_snapshot_entry_and_never_writes_into_a_hard_linked_file(project, cli):
    (project / "snaps").mkdir()
    outside = project / "outside.txt"
    outside.write_text("kept as it was\n")
    os.link(outside, project / "snaps" / "headless.txt")
    (project / "snaps" / "headless.txt").chmod(0o664)  # group-writable, as a umask 002 checkout leaves it
    done = cli(*SNAPSHOT_ARGS, "--update", cwd=project)
    assert done.returncode == 0 and done.stdout.decode().startswith("updated")
    snapshot = project / "snaps" / "headless.txt"
    assert snapshot.read_text() == "You are Grok.\nNobody is watching." and outside.read_text() == "kept as it was\n"
    assert (snapshot.stat().st_mode & 0o777) == 0o664 and sorted(p.name for p in (project / "snaps").iterdir()) == ["headless.txt"]
    assert cli(*SNAPSHOT_ARGS, cwd=project).returncode == 0  # a group-writable snapshot is still read


def test_a_snapshot_folder_that_is_a_file_is_a_usage_error(project, cli):
    (project / "snaps").write_text("not a folder")
    assert cli(*SNAPSHOT_ARGS, cwd=project).returncode == 2


def test_snapshot_needs_contexts_and_update_needs_snapshot(project, cli):
    assert cli("render", "--snapshot", "snaps", cwd=project).returncode == 2
    assert cli("render", "--update", cwd=project).returncode == 2
    assert cli("render", "--context", "headless.yaml", "--context", "interactive.yaml", cwd=project).returncode == 2


def test_diff_shows_how_two_contexts_change_the_prompt(project, cli):
    result = cli("diff", "headless.yaml", "interactive.yaml", "--override", "custom:custom.jinja", cwd=project)
    out = result.stdout.decode()
    assert result.returncode == 1
    assert out.startswith("--- headless.yaml: custom, ") and "-Nobody is watching." in out and "+Ask before publishing." in out
    same = cli("diff", "headless.yaml", "headless.yaml", cwd=project)
    assert same.returncode == 0 and same.stdout.decode().endswith("identical\n")


def test_vars_lists_every_variable_with_its_value_and_source(project, cli):
    result = cli("vars", "--context", "headless.yaml", "--tool", "read=read_file", "--param", "edit.old_string=old", cwd=project)
    lines = result.stdout.decode().splitlines()
    assert result.returncode == 0
    by_name = {line.split("=")[0].strip(): line for line in lines}
    assert by_name["tools.by_kind.read"].endswith('"read_file"  [tools]')
    assert by_name["is_non_interactive"].endswith("true  [context]")
    assert by_name["is_windows"].endswith("false  [default_flag]")
    assert by_name["reminder_style"].endswith('"pua"  [runtime]')
    assert "params.edit.old_string" in by_name
    parsed = json.loads(cli("vars", "--context", "headless.yaml", "--json", cwd=project).stdout)
    assert parsed == call_in_process("prompt/vars", {"context": {"is_non_interactive": True}})


# -- prompt/vars on the wire --------------------------------------------------------------------


def test_prompt_vars_gives_what_a_render_gives_the_template(shared_served):
    params = {
        "context": {"audience": "subagent", "role_summaries": ["lead: plans"], "os_name": "Windows"},
        "tools": {"by_kind": {"read": "cat"}},
        "flags": {"beta": True},
    }
    result = shared_served.call("prompt/vars", params)
    values = {v["name"]: (v["value"], v["source"]) for v in result["variables"]}
    assert values["tools"] == ({"by_kind": {"read": "cat"}}, "tools")
    assert values["role_summaries"] == ([], "derived")  # a subagent sees no role catalog
    assert values["os_name"] == ("Windows", "context")
    assert values["is_windows"] == (True, "default_flag")
    assert values["beta"] == (True, "flag")
    # Every name listed is one a template can read, and a render agrees with the listing.
    template = " ".join(f"${{{{ {name} is defined }}}}" for name in values)
    rendered = shared_served.call("prompt/render", {**params, "context": {**params["context"], "system_prompt": {"custom": template}}})
    assert set(rendered["text"].split()) == {"true"}
