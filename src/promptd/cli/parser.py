"""The command line's parser (argparse): every command, its options and help texts.

Entry layer, imported by cli/main.py for any command line but the plain `serve` a host spawns, which
cli.serve_options reads without it: importing argparse and building these parsers is a
measurable part of a host's wait for its first answer.
"""

from __future__ import annotations

import argparse

from promptd import PROTOCOL_VERSION, __version__
from promptd.logs import LogLevel

# The levels the command line accepts, as the `log_level` setting does.
LOG_LEVELS = [level.value for level in LogLevel]

# Where the documentation is: the repository's docs/ (also in the sdist). pyproject.toml's
# Documentation URL is the same (tests/test_packaging.py).
DOCS_URL = "https://github.com/promptd/promptd/tree/main/docs"
DOCS = DOCS_URL

ENVIRONMENT = """\
environment:
  PROMPTD_CONFIG         promptd.toml to read (--config wins)
  PROMPTD_<SETTING>      any setting; `__` between section and field, the value read as JSON
                         when it parses (PROMPTD_REMINDERS__BUDGET_CHARS=8000,
                         PROMPTD_TODO_GATE__ENABLED=true); other PROMPTD_* names are ignored
                         with one `env_ignored` warning
  PROMPTD_VAULT_KEY      the vault key (64 hex digits or base64 of 32 bytes)"""

MAIN_EPILOG = f"""\
global options (--config, --log-level) may come before or after the command:
  promptd serve --log-level debug

exit status (every command):
  0  ok
  1  findings: the command ran and reports problems (lint violations); also a reader
     that closed stdout early (`promptd ... | head`), quietly, with no traceback
  2  usage or input error: bad arguments, an unreadable or invalid file, an invalid
     configuration, a request the method refused

{ENVIRONMENT}

Run `promptd COMMAND --help` for one command. Documentation, in {DOCS}:
cli.md (this command line), agent.md (spawn promptd from your agent), protocol.md,
operations.md.
Shell completion: not built in (argparse has none; promptd adds no dependency for it)."""

SERVE_DESCRIPTION = """\
Serve line-delimited JSON-RPC 2.0 on stdin/stdout: the sidecar mode an agent host spawns.
It runs until the `exit` notification (after `shutdown`), the end of stdin, or SIGTERM."""

SERVE_EPILOG = f"""\
stdin   one JSON-RPC 2.0 message (or batch) per line, UTF-8, `\\n`-terminated
stdout  protocol frames only: nothing else is ever written there
stderr  JSON-lines logs, metadata only (never prompt text, reminder bodies or the nonce);
        level from --log-level or the `log_level` setting. On a terminal, a one-paragraph
        hint comes first.

exit status:
  0  clean end: `exit` after an answered `shutdown`, end of stdin, or SIGTERM
  1  `exit` without an answered `shutdown` (the protocol's rule, as in LSP)
  2  start-up refused: bad arguments, an invalid configuration or vault key file

{ENVIRONMENT}

example:
  printf '%s\\n' '{{"jsonrpc":"2.0","id":1,"method":"reminder/keys"}}' | promptd serve

Documentation, in {DOCS}: agent.md (the turn sequence), protocol.md
(framing, errors, lifecycle), operations.md (settings, logs), cli.md."""

CALL_DESCRIPTION = """\
Run one method in-process, through the same validation and error boundary as `serve`, and
print its result as JSON: for scripts, and to try a method without a client."""

CALL_EPILOG = f"""\
PARAMS is a JSON object (default {{}}), `-` to read it from stdin, or @FILE to read it from
a file. `promptd call rpc.discover` prints the protocol document (every method and schema).

stdout  the result, as indented JSON
stderr  on failure, one JSON line {{"error": {{code, message, data}}}}, as the wire would
        send it (data.kind says what went wrong); logs as JSON lines

exit status:
  0  the method answered with a result
  2  usage or input error: unknown method, params that are not JSON or not readable, or
     any error answer (invalid params, a domain error such as invalid_key)

examples:
  promptd call reminder/wrap '{{"key": "session.cwd", "body": "/tmp"}}'
  echo '{{"text": "see [1]"}}' | promptd call citation/parse -
  promptd call prompt/render @render-params.json

{ENVIRONMENT}

Documentation, in {DOCS}: cli.md, protocol.md, errors.md (every error
code and kind); the methods are listed in README.md."""


def version_line() -> str:
    return f"promptd {__version__} (protocol {PROTOCOL_VERSION})"


def _formatter(prog: str) -> argparse.HelpFormatter:
    return argparse.RawDescriptionHelpFormatter(prog, max_help_position=30)


def _add_global_options(parser: argparse.ArgumentParser, *, on_command: bool) -> None:
    # On a command the options default to SUPPRESS, so a value given before the command is
    # not overwritten by the command's own default.
    # A command that defines an option of the same name itself keeps its own.
    default = argparse.SUPPRESS if on_command else None
    if "--config" not in parser._option_string_actions:
        parser.add_argument("--config", metavar="FILE", default=default, help="promptd.toml to read (default: PROMPTD_CONFIG, else none)")
    if "--log-level" not in parser._option_string_actions:
        parser.add_argument("--log-level", choices=LOG_LEVELS, default=default, help="stderr log level (default: the log_level setting, info)")


def _command_parsers(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    """Every parser below `parser` (commands, and subcommands such as `vault seal`), once each."""
    found: list[argparse.ArgumentParser] = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                if sub not in found:
                    found.append(sub)
                    found.extend(p for p in _command_parsers(sub) if p not in found)
    return found


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="promptd",
        description=(
            "promptd: the sidecar that renders system prompts, assembles system reminders, runs\n"
            "todo reminders and parses citations, for an agent host that spawns `promptd serve`."
        ),
        epilog=MAIN_EPILOG,
        formatter_class=_formatter,
    )
    parser.add_argument("--version", action="version", version=version_line(), help="print the version and exit")
    _add_global_options(parser, on_command=False)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", title="commands")
    commands.add_parser(
        "serve", help="serve JSON-RPC 2.0 on stdin/stdout (what a host spawns)", description=SERVE_DESCRIPTION, epilog=SERVE_EPILOG, formatter_class=_formatter
    )
    call = commands.add_parser(
        "call", help="run one method in-process and print its result as JSON", description=CALL_DESCRIPTION, epilog=CALL_EPILOG, formatter_class=_formatter
    )
    call.add_argument("method", help="the method name, e.g. reminder/wrap")
    call.add_argument("params", nargs="?", default="{}", help="a JSON object, - for stdin, or @FILE (default {})")
    commands.add_parser("keys", help="list the reserved reminder keys (as JSON)", description="List the reserved reminder keys: `promptd call reminder/keys`.")
    commands.add_parser("version", help="print the version", description="Print the version of promptd and of its protocol (as --version does).")
    from promptd.cli import prompt as cli_prompt

    cli_prompt.add_commands(commands)
    for sub in _command_parsers(parser):
        _add_global_options(sub, on_command=True)
    return parser
