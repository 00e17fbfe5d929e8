"""The command line's conventions, as uv, ruff and gh keep them: every command in docs/cli.md, each
command's help stating its own exit codes truly, `-V` and `promptd help COMMAND`, "did you mean"
for a misspelled command or setting, `FILE:LINE:COL:` for a context that does not parse, errors in
promptd's own words under one prefix per command, quiet logs for commands other than `serve`, and
one exit-code enum. In-process through promptd.cli.main.main where the process does not matter."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
from conftest import PROMPTD, ROOT

from promptd.cli import parser as cli_parser
from promptd.cli.exits import Exit
from promptd.cli.main import main
from promptd.prompt import vault

GOOD = "${%- if tools.by_kind.read %}Read with ${{ tools.by_kind.read }}.${%- endif %}\n"
UNGUARDED = "Track your work with `${{ tools.by_kind.plan }}`.\n"
SYNTAX = "Hello ${% if %}\n"


@pytest.fixture(autouse=True)
def plain_environment(monkeypatch):
    """No setting, vault key or log level of the developer's own."""
    for name in [n for n in os.environ if n.startswith("PROMPTD_")]:
        monkeypatch.delenv(name)


def cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def spawned(*argv: str, env: dict[str, str] | None = None, stdin: bytes = b"") -> subprocess.CompletedProcess[bytes]:
    """The installed command, with no PROMPTD_* variable but `env`'s (conftest.run_cli sets a log level)."""
    full = {k: v for k, v in os.environ.items() if not k.startswith("PROMPTD_")}
    full.update(env or {})
    return subprocess.run([*PROMPTD, *argv], input=stdin, capture_output=True, env=full, timeout=60)


def _key(path: Path) -> Path:
    path.write_text(vault.new_key().hex() + "\n")
    path.chmod(0o600)
    return path


@pytest.fixture
def workspace(tmp_path, monkeypatch) -> Path:
    """Files the representative cases name, in the current folder."""
    for name, text in {
        "ctx.yaml": "working_directory: /home/dev/project\nos_name: linux\n",
        "headless.yaml": "is_non_interactive: true\n",
        "interactive.yaml": "is_non_interactive: false\n",
        "good.jinja": GOOD,
        "unguarded.jinja": UNGUARDED,
        "syntax.jinja": SYNTAX,
        "bad.yaml": "os_name: linux\ntools: [read,\n",
        "bad.json": '{"os_name": "linux",\n  "shell_path": }\n',
        "remnders.toml": "[remnders]\nbudget_chars = 100\n",
    }.items():
        (tmp_path / name).write_text(text)
    key = _key(tmp_path / "k")
    _key(tmp_path / "other.key")
    (tmp_path / "good.sealed").write_bytes(vault.seal(GOOD.encode(), bytes.fromhex(key.read_text().strip()), "apply_patch"))
    monkeypatch.chdir(tmp_path)
    return tmp_path


# -- the command list ---------------------------------------------------------------------------


def _documented_commands() -> dict[str, set[str]]:
    """docs/cli.md's command table: each command, with the subcommands its row names
    (`promptd vault keygen\\|seal\\|verify\\|open`)."""
    text = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    table = text[text.index("| command | what it does |") :].split("\n\n", 1)[0]
    found: dict[str, set[str]] = {}
    for row in table.splitlines()[2:]:
        cell = re.match(r"\| `promptd ([a-z]+)((?: [a-z]+(?:\\\|[a-z]+)*)?)", row)
        assert cell, row
        subcommands = cell.group(2).strip()
        found[cell.group(1)] = set(subcommands.split("\\|")) if subcommands else set()
    return found


def test_cli_md_lists_every_command_and_subcommand_the_parser_has():
    parser = cli_parser.build_parser()
    commands = {name: set(cli_parser.subcommands(sub)) for name, sub in cli_parser.subcommands(parser).items()}
    assert _documented_commands() == commands


def test_every_command_and_subcommand_has_a_description_and_a_one_line_summary():
    parser = cli_parser.build_parser()
    for sub in cli_parser.command_parsers(parser):
        assert sub.description, sub.prog
    for group in [parser, *cli_parser.command_parsers(parser)]:
        for action in group._actions:
            if hasattr(action, "_choices_actions"):
                assert all(choice.help for choice in action._choices_actions), group.prog


# -- exit codes, as each command's help states them ------------------------------------------------

# For each command, a case for every code its help lists: (argv, a word that code's row must say).
# `serve` is spawned (its end is the process's end); the others run in-process.
CASES: dict[str, dict[int, tuple[list[str], str]]] = {
    "serve": {
        0: (["serve"], "end of stdin"),
        1: (["serve"], "shutdown"),
        2: (["--config", "missing.toml", "serve"], "configuration"),
    },
    "call": {
        0: (["call", "reminder/keys"], "result"),
        2: (["call", "reminder/wrap", '{"key": "", "body": "x"}'], "error answer"),
    },
    "keys": {0: (["keys"], "printed"), 2: (["--config", "missing.toml", "keys"], "configuration")},
    "version": {0: (["version"], "printed"), 2: (["version", "--verbose"], "bad arguments")},
    "help": {0: (["help", "render"], "printed"), 2: (["help", "rendr"], "no such command")},
    "render": {
        0: (["render", "--context", "ctx.yaml"], "rendered"),
        1: (["render", "--context", "ctx.yaml", "--snapshot", "snapshots"], "has none"),
        2: (["render", "--override", "custom:syntax.jinja"], "syntax"),
    },
    "diff": {
        0: (["diff", "headless.yaml", "headless.yaml"], "identical"),
        1: (["diff", "headless.yaml", "interactive.yaml"], "differ"),
        2: (["diff", "missing.yaml", "headless.yaml"], "cannot be read"),
    },
    "vars": {0: (["vars", "--context", "ctx.yaml"], "listed"), 2: (["vars", "--flag", "no_such_flag"], "--flag")},
    "lint": {
        0: (["lint", "good.jinja"], "no findings"),
        1: (["lint", "syntax.jinja"], "syntax"),
        2: (["lint", "missing.jinja"], "cannot be read"),
    },
    "vault seal": {
        0: (["vault", "seal", "good.jinja", "-o", "out.sealed", "--key-file", "k"], "sealed"),
        1: (["vault", "seal", "unguarded.jinja", "-o", "out.sealed", "--key-file", "k"], "findings"),
        2: (["vault", "seal", "missing.jinja", "--key-file", "k"], "cannot be read"),
    },
    "vault verify": {
        0: (["vault", "verify", "good.sealed", "--key-file", "k"], "lints clean"),
        1: (["vault", "verify", "good.sealed", "--key-file", "other.key"], "key cannot open"),
        2: (["vault", "verify"], "bad arguments"),
    },
    "vault open": {
        0: (["vault", "open", "good.sealed", "--key-file", "k", "-o", "plain.jinja"], "written"),
        1: (["vault", "open", "good.sealed", "--key-file", "other.key"], "key cannot open"),
        2: (["vault", "open", "good.sealed", "--key-file", "k", "-o", "no/such/folder/plain.jinja"], "cannot be written"),
    },
    "vault keygen": {0: (["vault", "keygen", "new/vault.key"], "written"), 2: (["vault", "keygen", "k"], "exists")},
    "keygen": {0: (["keygen", "new/provenance.key"], "written"), 2: (["keygen", "k"], "exists")},
}


def _documented_codes(help_text: str) -> dict[int, str]:
    """The rows of a help's `exit status:` block: code -> what it means (continuations joined)."""
    block = help_text[help_text.index("exit status:") :].split("\n\n", 1)[0]
    rows: dict[int, str] = {}
    last = None
    for line in block.splitlines()[1:]:
        row = re.match(r"^  (\d)  (.*)$", line)
        if row:
            last = int(row.group(1))
            rows[last] = row.group(2)
        elif line.startswith("     ") and last is not None:
            rows[last] += " " + line.strip()
        else:
            last = None
    return rows


def _leaf_commands() -> list[str]:
    parser = cli_parser.build_parser()
    return [sub.prog.removeprefix("promptd ") for sub in cli_parser.command_parsers(parser) if not cli_parser.subcommands(sub)]


def test_every_command_has_cases_for_its_exit_codes():
    assert sorted(CASES) == sorted(_leaf_commands())


@pytest.mark.parametrize("command", sorted(CASES))
def test_each_command_help_states_its_exit_codes_and_a_representative_case_exits_with_each(command, workspace, capsys):
    code, help_text, _ = cli(capsys, *command.split(), "--help")
    assert code == Exit.OK
    documented = _documented_codes(help_text)
    assert sorted(documented) == sorted(CASES[command]), documented
    for expected, (argv, word) in CASES[command].items():
        assert word in documented[expected], (expected, documented[expected])
        if command == "serve":
            stdin = b'{"jsonrpc":"2.0","method":"exit"}\n' if expected == 1 else b""
            status = spawned(*argv, stdin=stdin).returncode
        else:
            status, _, err = cli(capsys, *argv)
            assert "Traceback" not in err
        assert status == expected, (argv, status)


def test_lint_exits_1_on_a_syntax_finding_as_its_help_says_not_2(workspace, capsys):
    code, out, _ = cli(capsys, "lint", "syntax.jinja")
    assert code == Exit.FINDINGS and ": syntax: " in out


# -- -V and promptd help --------------------------------------------------------------------------


def test_dash_v_is_the_version(capsys):
    short, long, command = cli(capsys, "-V"), cli(capsys, "--version"), cli(capsys, "version")
    assert short[0] == long[0] == command[0] == Exit.OK
    assert short[1] == long[1] == command[1] and short[1].startswith("promptd ")


@pytest.mark.parametrize("topic", [[], ["render"], ["serve"], ["vault"], ["vault", "seal"]], ids=lambda t: " ".join(t) or "promptd")
def test_promptd_help_command_is_the_command_s_help(capsys, topic):
    code, out, err = cli(capsys, "help", *topic)
    assert code == Exit.OK and err == ""
    assert (code, out) == cli(capsys, *topic, "--help")[:2]


def test_a_bare_promptd_and_promptd_help_print_the_same(capsys):
    assert cli(capsys)[:2] == cli(capsys, "help")[:2]


# -- did you mean ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "prefix", "meant"),
    [
        (["rendr"], "promptd: ", "`render`"),
        (["help", "rendr"], "promptd help: ", "`render`"),
        (["vault", "sael", "x"], "promptd vault: ", "`seal`"),
        (["help", "vault", "verfy"], "promptd help: ", "`verify`"),
        (["call", "reminder/wrp"], "promptd call: ", "`reminder/wrap`"),
    ],
)
def test_a_misspelled_command_or_method_gets_a_suggestion(capsys, argv, prefix, meant):
    code, out, err = cli(capsys, *argv)
    assert code == Exit.USAGE and out == ""
    first = err.splitlines()[0]
    assert first.startswith(prefix) and "did you mean" in first and meant in first


def test_a_command_with_no_near_name_lists_the_commands(capsys):
    code, _, err = cli(capsys, "frobnicate")
    assert code == Exit.USAGE and "did you mean" not in err and "render" in err.splitlines()[0]


def test_a_misspelled_section_in_a_config_file_gets_a_suggestion(workspace, capsys):
    code, _, err = cli(capsys, "--config", "remnders.toml", "keys")
    assert code == Exit.USAGE
    assert err.startswith("promptd keys: invalid config at remnders: ") and "did you mean `reminders`?" in err


def test_a_misspelled_setting_in_initialize_gets_a_suggestion():
    from promptd import Local
    from promptd.local import LocalError

    door = Local({"log_level": "error"})
    with pytest.raises(LocalError) as caught:
        door.call("initialize", {"config": {"remnders": {"budget_chars": 100}}})
    assert caught.value.kind == "invalid_config"
    assert caught.value.data["suggestions"] == ["reminders"] and "did you mean `reminders`?" in caught.value.message
    with pytest.raises(LocalError) as caught:
        Local({"log_level": "error"}).call("initialize", {"config": {"reminders": {"budget_char": 100}}})
    assert caught.value.data["suggestions"] == ["reminders.budget_chars"]


def test_a_misspelled_setting_variable_is_ignored_with_a_suggestion(capsys, monkeypatch):
    monkeypatch.setenv("PROMPTD_REMNDERS__BUDGET_CHARS", "100")
    monkeypatch.setenv("PROMPTD_BIN", "/usr/local/bin/promptd")
    code, _, err = cli(capsys, "keys")
    assert code == Exit.OK
    warning = json.loads(err)
    assert warning["event"] == "env_ignored" and warning["count"] == 2
    # Only the name close to a setting gets one; the host's own variable none.
    assert warning["suggestions"] == {"PROMPTD_REMNDERS__BUDGET_CHARS": ["PROMPTD_REMINDERS__BUDGET_CHARS"]}


def test_serve_imports_neither_argparse_nor_difflib():
    # The suggestions are found on the error path only; a host's plain `promptd serve` pays for
    # neither the full parser nor difflib.
    result = spawned("serve", env={"PYTHONPROFILEIMPORTTIME": "1"})
    assert result.returncode == 0
    imported = {line.rsplit("|", 1)[1].strip() for line in result.stderr.decode().splitlines() if line.startswith("import time:")}
    assert "promptd.cli.main" in imported
    assert not imported & {"argparse", "difflib", "promptd.cli.parser", "promptd.cli.helptext"}


# -- positions and promptd's own words --------------------------------------------------------------


@pytest.mark.parametrize(("name", "where", "what"), [("bad.yaml", "bad.yaml:3:1:", "not valid YAML"), ("bad.json", "bad.json:2:17:", "not valid JSON")])
def test_a_context_that_does_not_parse_is_named_with_its_line_and_column(workspace, capsys, name, where, what):
    for command in ("render", "vars"):
        code, _, err = cli(capsys, command, "--context", name)
        assert code == Exit.USAGE
        assert err.startswith(f"promptd {command}: {where} {what}") and err.rstrip().endswith("(invalid_context)")


def test_a_tools_file_that_does_not_parse_is_named_with_its_line_and_column(workspace, capsys):
    code, _, err = cli(capsys, "render", "--tools", "bad.yaml")
    assert code == Exit.USAGE and err.startswith("promptd render: bad.yaml:3:1: not valid YAML")


PYTHON_TEXTS = ("Errno", "No such file or directory", "codec can't decode", "Traceback", "Is a directory", "Permission denied")


@pytest.mark.parametrize(
    ("argv", "line"),
    [
        (["render", "--context", "ctx.yml"], "promptd render: cannot read ctx.yml: no such file"),
        (["diff", "ctx.yaml", "nope.yaml"], "promptd diff: cannot read nope.yaml: no such file"),
        (["vars", "--context", "nope.yaml"], "promptd vars: cannot read nope.yaml: no such file"),
        (["render", "--body", "nope.md"], "promptd render: cannot read nope.md: no such file"),
        (["render", "--tools", "nope.json"], "promptd render: cannot read nope.json: no such file"),
        (["render", "--override", "custom:nope.jinja"], "promptd render: cannot read nope.jinja: no such file"),
        (["render", "-o", "no/such/folder/out.txt"], "promptd render: cannot write no/such/folder/out.txt: no such file or folder"),
        (["lint", "nope.jinja"], "promptd lint: cannot read nope.jinja: no such file"),
        (["vault", "seal", "nope.jinja", "--key-file", "k"], "promptd vault seal: cannot read nope.jinja: no such file"),
        (["call", "reminder/wrap", "@nope.json"], "promptd call: cannot read nope.json: no such file"),
        (["--config", "nope.toml", "keys"], "promptd keys: cannot read config file nope.toml: no such file (missing)"),
        (["render", "--context", "."], "promptd render: cannot read .: a folder, not a file"),
        (["lint", "bin.jinja"], "promptd lint: cannot read bin.jinja: not UTF-8 text"),
        (["render", "--body", "bin.jinja"], "promptd render: cannot read bin.jinja: not UTF-8 text"),
    ],
)
def test_a_file_that_cannot_be_read_or_written_is_said_in_promptds_words(workspace, capsys, argv, line):
    (workspace / "bin.jinja").write_bytes(b"\xff\xfe not text")
    code, out, err = cli(capsys, *argv)
    assert code == Exit.USAGE and out == ""
    assert err.splitlines() == [line]
    assert not [text for text in PYTHON_TEXTS if text in err]


def test_a_snapshot_folder_that_cannot_be_made_is_said_in_promptds_words(workspace, capsys):
    (workspace / "taken").write_text("a file, not a folder")
    code, _, err = cli(capsys, "render", "--context", "ctx.yaml", "--snapshot", "taken/snaps", "--update")
    assert code == Exit.USAGE and err.startswith("promptd render: cannot create taken/snaps: ")
    assert not [text for text in PYTHON_TEXTS if text in err]


# -- one prefix per command ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "prefix"),
    [
        (["render", "--update"], "promptd render: "),
        (["render", "--flag", "no_such_flag"], "promptd render: "),
        (["render", "--tool", "read"], "promptd render: "),
        (["diff", "ctx.yaml", "ctx.yaml", "--override", "loud"], "promptd diff: "),
        (["vars", "--param", "x"], "promptd vars: "),
        (["vault", "seal", "good.jinja", "--id", "not an id"], "promptd vault seal: "),
        (["vault", "keygen", "k"], "promptd vault keygen: "),
        (["vault", "open", "good.sealed", "--key-file", "other.key"], "promptd vault open: "),
        (["call", "reminder/wrap", "not json"], "promptd call: "),
        (["--config", "remnders.toml", "render"], "promptd render: "),
        (["--config", "remnders.toml", "vault", "open"], "promptd vault open: "),
        (["--config", "remnders.toml", "call", "reminder/keys"], "promptd call: "),
        (["render", "--no-such-option"], "promptd render: "),
    ],
)
def test_every_error_line_of_a_command_has_its_prefix(workspace, capsys, argv, prefix):
    code, _, err = cli(capsys, *argv)
    assert code in (Exit.FINDINGS, Exit.USAGE)
    assert err.splitlines()[0].startswith(prefix), err


def test_a_refused_config_stops_serve_with_its_prefix(workspace):
    result = spawned("--config", "remnders.toml", "serve")
    assert result.returncode == Exit.USAGE
    assert result.stderr.decode().splitlines() == ["promptd serve: invalid config at remnders: unknown setting; did you mean `reminders`?"]


# -- logs -----------------------------------------------------------------------------------------


def _events(err: str) -> list[str]:
    return [json.loads(line)["event"] for line in err.splitlines() if line.startswith("{")]


def test_commands_other_than_serve_log_warnings_only_by_default(capsys, monkeypatch):
    assert cli(capsys, "call", "initialize", "{}")[2] == ""
    assert _events(cli(capsys, "--log-level", "info", "call", "initialize", "{}")[2]) == ["initialized"]
    monkeypatch.setenv("PROMPTD_LOG_LEVEL", "info")
    assert _events(cli(capsys, "call", "initialize", "{}")[2]) == ["initialized"]


def test_a_config_files_log_level_applies_to_commands_too(tmp_path, capsys):
    (tmp_path / "promptd.toml").write_text('log_level = "info"\n')
    assert _events(cli(capsys, "--config", str(tmp_path / "promptd.toml"), "call", "initialize", "{}")[2]) == ["initialized"]


def test_serve_still_logs_at_info_by_default():
    assert _events(spawned("serve").stderr.decode()) == ["started", "stopped"]


# -- one exit-code enum, one broken-pipe path --------------------------------------------------------

CLI_SOURCES = sorted((ROOT / "src" / "promptd" / "cli").glob("*.py"))


def test_exit_codes_are_stated_once_in_the_exits_module():
    stated = [f"{path.name}: {m.group(0)}" for path in CLI_SOURCES if path.name != "exits.py" for m in re.finditer(r"^\s*EXIT_\w+\s*=.*$", path.read_text(), re.M)]
    assert stated == []
    # Every command returns the enum's members, not bare numbers.
    bare = [f"{path.name}: {m.group(0)}" for path in CLI_SOURCES for m in re.finditer(r"return [0-2]\b", path.read_text())]
    assert bare == []


def test_a_closed_stdout_is_handled_in_one_place():
    assert [path.name for path in CLI_SOURCES if "exits.pipe_closed()" in path.read_text()] == ["main.py"]
    assert [path.name for path in CLI_SOURCES if "os.dup2" in path.read_text()] == ["exits.py"]


class _ClosedPipe:
    """A stdout whose reader went away."""

    def write(self, data: Any) -> int:
        raise BrokenPipeError

    def flush(self) -> None:
        raise BrokenPipeError

    @property
    def buffer(self) -> _ClosedPipe:
        return self

    def fileno(self) -> int:
        raise OSError("no descriptor")


@pytest.mark.parametrize("argv", [["keys"], ["version"], ["help"], ["lint", "good.jinja", "unguarded.jinja"], ["render", "--json"]])
def test_a_closed_stdout_ends_any_command_quietly_with_1(workspace, capsys, monkeypatch, argv):
    monkeypatch.setattr("sys.stdout", _ClosedPipe())
    code = main(argv)
    assert code == 1
    assert capsys.readouterr().err == ""
