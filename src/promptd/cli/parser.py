"""The command line's parser (argparse): every command, its options and help texts, `promptd help
COMMAND`, and "did you mean" for a misspelled command.

Entry layer, imported by cli/main.py for any command line but the plain `serve` a host spawns, which
cli.serve_options reads without it: importing argparse and building these parsers is a
measurable part of a host's wait for its first answer.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable, Sequence
from typing import Any, NoReturn

from promptd import PROTOCOL_VERSION, __version__
from promptd.cli.exits import Exit
from promptd.cli.helptext import epilog, exit_status, formatter
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
  PROMPTD_LOG_LEVEL      the stderr log level (--log-level wins)
  PROMPTD_<SETTING>      any setting; `__` between section and field, the value read as JSON
                         when it parses (PROMPTD_REMINDERS__BUDGET_CHARS=8000,
                         PROMPTD_TODO_GATE__ENABLED=true); other PROMPTD_* names are ignored
                         with one `env_ignored` warning
  PROMPTD_VAULT_KEY      the vault key (64 hex digits or base64 of 32 bytes)"""

MAIN_EPILOG = f"""\
global options (--config, --log-level) may come before or after the command:
  promptd serve --log-level debug
Commands log warnings and errors only; `serve` logs at info too (--log-level changes both).

exit status (every command; `promptd help COMMAND` says what each code means for it):
  0  ok
  1  findings: the command ran and reports problems (lint violations); also a reader
     that closed stdout early (`promptd ... | head`), quietly, with no traceback
  2  usage or input error: bad arguments, an unreadable or invalid file, an invalid
     configuration, a request the method refused

{ENVIRONMENT}

Run `promptd help COMMAND` (or `promptd COMMAND --help`) for one command. Documentation, in
{DOCS}: cli.md (this command line), agent.md (spawn promptd from your agent), protocol.md,
operations.md.
Shell completion: not built in (argparse has none; promptd adds no dependency for it)."""

SERVE_DESCRIPTION = """\
Serve line-delimited JSON-RPC 2.0 on stdin/stdout: the sidecar mode an agent host spawns.
It runs until the `exit` notification (after `shutdown`), the end of stdin, or SIGTERM."""

SERVE_STREAMS = """\
stdin   one JSON-RPC 2.0 message (or batch) per line, UTF-8, `\\n`-terminated
stdout  protocol frames only: nothing else is ever written there
stderr  JSON-lines logs, metadata only (never prompt text, reminder bodies or the nonce);
        level from --log-level or the `log_level` setting (info). On a terminal, a
        one-paragraph hint comes first."""

SERVE_MORE = f"""\
{ENVIRONMENT}

example:
  printf '%s\\n' '{{"jsonrpc":"2.0","id":1,"method":"reminder/keys"}}' | promptd serve

Documentation, in {DOCS}: agent.md (the turn sequence), protocol.md
(framing, errors, lifecycle), operations.md (settings, logs), cli.md."""

CALL_DESCRIPTION = """\
Run one method in-process, through the same validation and error boundary as `serve`, and
print its result as JSON: for scripts, and to try a method without a client."""

CALL_STREAMS = """\
PARAMS is a JSON object (default {}), `-` to read it from stdin, or @FILE to read it from
a file. `promptd call rpc.discover` prints the protocol document (every method and schema).

stdout  the result, as indented JSON
stderr  on an error answer, one JSON line {"error": {code, message, data}}, as the wire
        would send it (data.kind says what went wrong); logs as JSON lines"""

CALL_MORE = f"""\
examples:
  promptd call reminder/wrap '{{"key": "session.cwd", "body": "/tmp"}}'
  echo '{{"text": "see [1]"}}' | promptd call citation/parse -
  promptd call prompt/render @render-params.json

{ENVIRONMENT}

Documentation, in {DOCS}: cli.md, protocol.md, errors.md (every error
code and kind); the methods are listed in README.md."""


def version_line() -> str:
    return f"promptd {__version__} (protocol {PROTOCOL_VERSION})"


def did_you_mean(name: str, choices: Iterable[str]) -> str:
    """`; did you mean `render`?`, or nothing when no name is close (promptd.text.suggest)."""
    from promptd.text import suggest

    found = suggest(name, choices)
    return f"; did you mean {' or '.join(f'`{f}`' for f in found)}?" if found else ""


def unknown_command(name: str, choices: Iterable[str]) -> str:
    names = list(choices)
    hint = did_you_mean(name, names)
    return f"unknown command {name!r}{hint}" + ("" if hint else f" (commands: {', '.join(names)})")


class Parser(argparse.ArgumentParser):
    """argparse's parser with promptd's error line (`promptd COMMAND: message`, then the usage
    and where the help is) and "did you mean" for a misspelled command or choice."""

    def _check_value(self, action: argparse.Action, value: Any) -> None:
        choices = action.choices
        if choices is not None and value not in choices:
            names = [str(choice) for choice in choices]
            if isinstance(action, argparse._SubParsersAction):
                raise argparse.ArgumentError(None, unknown_command(value, names))
            raise argparse.ArgumentError(action, f"invalid choice: {value!r}{did_you_mean(value, names)} (choose from {', '.join(names)})")
        super()._check_value(action, value)

    def error(self, message: str) -> NoReturn:
        sys.stderr.write(f"{self.prog}: {message}\n")
        self.print_usage(sys.stderr)
        self.exit(Exit.USAGE, f"Run `{self.prog} --help` for more.\n")


def _add_global_options(parser: argparse.ArgumentParser, *, on_command: bool) -> None:
    # On a command the options default to SUPPRESS, so a value given before the command is
    # not overwritten by the command's own default.
    # A command that defines an option of the same name itself keeps its own.
    default = argparse.SUPPRESS if on_command else None
    if "--config" not in parser._option_string_actions:
        parser.add_argument("--config", metavar="FILE", default=default, help="promptd.toml to read (default: PROMPTD_CONFIG, else none)")
    if "--log-level" not in parser._option_string_actions:
        level = "info for serve, warning for the other commands" if not on_command else ("info" if parser.prog == "promptd serve" else "warning")
        parser.add_argument("--log-level", choices=LOG_LEVELS, default=default, help=f"stderr log level (default: the log_level setting, else {level})")


def subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """The commands directly below `parser` (`serve`, `call`... below `promptd`; `seal`... below
    `promptd vault`), by name, in the order of the help."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def command_parsers(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    """Every parser below `parser` (commands, and subcommands such as `vault seal`), once each."""
    found: list[argparse.ArgumentParser] = []
    for sub in subcommands(parser).values():
        if sub not in found:
            found.append(sub)
            found.extend(p for p in command_parsers(sub) if p not in found)
    return found


def build_parser() -> Parser:
    parser = Parser(
        prog="promptd",
        description=("promptd: the sidecar that renders system prompts, assembles system reminders, runs\ntodo reminders and parses citations, for an agent host that spawns `promptd serve`."),
        epilog=MAIN_EPILOG,
        formatter_class=formatter,
    )
    parser.add_argument("-V", "--version", action="version", version=version_line(), help="print the version and exit")
    _add_global_options(parser, on_command=False)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", title="commands")
    commands.add_parser(
        "serve",
        help="serve JSON-RPC 2.0 on stdin/stdout (what a host spawns)",
        description=SERVE_DESCRIPTION,
        epilog=epilog(
            SERVE_STREAMS,
            exit_status(
                (Exit.OK, "clean end: `exit` after an answered `shutdown`, end of stdin, or SIGTERM"),
                (Exit.FINDINGS, "`exit` without an answered `shutdown` (the protocol's rule, as in LSP)"),
                (Exit.USAGE, "start-up refused: bad arguments, an invalid configuration or vault key file"),
                pipe=False,
            ),
            SERVE_MORE,
        ),
        formatter_class=formatter,
    )
    call = commands.add_parser(
        "call",
        help="run one method in-process and print its result as JSON",
        description=CALL_DESCRIPTION,
        epilog=epilog(
            CALL_STREAMS,
            exit_status(
                (Exit.OK, "the method answered with a result"),
                (
                    Exit.USAGE,
                    "usage or input error: bad arguments, an unknown method, params that are not JSON "
                    "or not readable, an invalid configuration, or any error answer (invalid params, a "
                    "domain error such as invalid_key)",
                ),
            ),
            CALL_MORE,
        ),
        formatter_class=formatter,
    )
    call.add_argument("method", help="the method name, e.g. reminder/wrap")
    call.add_argument("params", nargs="?", default="{}", help="a JSON object, - for stdin, or @FILE (default {})")
    commands.add_parser(
        "keys",
        help="list the reserved reminder keys (as JSON)",
        description="List the reserved reminder keys, as JSON: `promptd call reminder/keys`.",
        epilog=exit_status((Exit.OK, "the keys were printed"), (Exit.USAGE, "bad arguments or an invalid configuration")),
        formatter_class=formatter,
    )
    commands.add_parser(
        "version",
        help="print the version",
        description="Print the version of promptd and of its protocol (as --version and -V do).",
        epilog=exit_status((Exit.OK, "the version was printed"), (Exit.USAGE, "bad arguments")),
        formatter_class=formatter,
    )
    helper = commands.add_parser(
        "help",
        help="show the help of a command (`promptd help vault seal`)",
        description="Show the help of COMMAND, as `promptd COMMAND --help` does; `promptd help` alone is `promptd --help`.",
        epilog=exit_status((Exit.OK, "the help was printed"), (Exit.USAGE, "no such command")),
        formatter_class=formatter,
    )
    helper.add_argument("topic", nargs="*", metavar="COMMAND", help="a command, and a subcommand (`vault seal`)")
    from promptd.cli import prompt as cli_prompt

    cli_prompt.add_commands(commands)
    for sub in command_parsers(parser):
        _add_global_options(sub, on_command=True)
        # The name errors are printed under: `promptd vault seal: ...`.
        sub.set_defaults(command_path=sub.prog.removeprefix(f"{parser.prog} "))
    return parser


def parse(argv: Sequence[str]) -> argparse.Namespace | int:
    """The command line read, or the exit status when reading it was all there was to do (the
    help, the version, an error argparse reported)."""
    parser = build_parser()
    try:
        args, extras = parser.parse_known_args(argv)
        if extras:
            # Reported by the command they were given to (`promptd render: unrecognized
            # arguments: --contxt; did you mean `--context`?`), not by promptd's own parser.
            unrecognized(command_parser(parser, getattr(args, "command_path", "")), extras)
        if args.command is None:
            # A bare `promptd` asked for nothing wrong: it gets the help, on stdout, and exit 0.
            parser.print_help()
            return Exit.OK
        if args.command == "help":
            show_help(parser, args.topic)
            return Exit.OK
    except SystemExit as exc:
        # argparse's own ending (--help, --version, a usage error), as a status the caller returns.
        return exc.code if isinstance(exc.code, int) else Exit.USAGE
    return args


def command_parser(parser: argparse.ArgumentParser, path: str) -> argparse.ArgumentParser:
    """The parser of the command `path` (`vault seal`) below `parser`; `parser` itself for ``."""
    for name in path.split():
        parser = subcommands(parser)[name]
    return parser


def unrecognized(parser: argparse.ArgumentParser, extras: Sequence[str]) -> NoReturn:
    options = [name for name in parser._option_string_actions if name.startswith("--")]
    hints = [did_you_mean(extra.partition("=")[0], options) for extra in extras if extra.startswith("--")]
    parser.error(f"unrecognized arguments: {' '.join(extras)}" + next((hint for hint in hints if hint), ""))


def show_help(parser: argparse.ArgumentParser, topic: Sequence[str]) -> None:
    """`promptd help vault seal` prints what `promptd vault seal --help` does."""
    helper = subcommands(parser)["help"]
    target = parser
    for name in topic:
        below = subcommands(target)
        if name not in below:
            helper.error(unknown_command(name, below) if below else f"{target.prog} has no subcommands")
        target = below[name]
    target.print_help()
