"""Command line: serve | call | keys | version (and the prompt commands registered by cli_prompt).

Entry layer: parses arguments, builds the runtime, and hands over to the server or to one
in-process call through the in-process door (promptd.local), which runs the server's boundary.

Exit status, for every command (docs/cli.md): 0 ok, 1 findings (the command ran and reports
problems, as `lint` does), 2 usage or input error (bad arguments, an unreadable or invalid file, a
request the method refused). `serve` adds the protocol's own rule: 1 for `exit` without `shutdown`.
"""

from __future__ import annotations

import os
import sys
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

import orjson

from promptd import PROTOCOL_VERSION, __version__
from promptd.config import Config, ignored_env_names, load
from promptd.errors import ConfigError
from promptd.logs import Logger

if TYPE_CHECKING:
    import argparse

LOG_LEVELS = ["debug", "info", "warning", "error"]
EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_USAGE = 2
# The reader of stdout went away (`promptd call ... | head`): the output was not all delivered, so
# not 0, but nothing was wrong with the input either; the prompt commands (cli_prompt) say 1 too.
EXIT_BROKEN_PIPE = EXIT_FINDINGS

TTY_HINT = (
    "promptd speaks line-delimited JSON-RPC 2.0 on stdin/stdout; type one request per line, e.g.\n"
    '  {"jsonrpc":"2.0","id":1,"method":"reminder/wrap","params":{"key":"session.cwd","body":"/tmp"}}\n'
    "Ctrl-D ends the session. Logs are JSON lines on stderr."
)

DOCS = "docs/ in the promptd repository"  # the package installs no docs; the paths are stable

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
    import argparse

    return argparse.RawDescriptionHelpFormatter(prog, max_help_position=30)


def _add_global_options(parser: argparse.ArgumentParser, *, on_command: bool) -> None:
    # On a command the options default to SUPPRESS, so a value given before the command is
    # not overwritten by the command's own default.
    # A command that defines an option of the same name itself keeps its own.
    import argparse

    default = argparse.SUPPRESS if on_command else None
    if "--config" not in parser._option_string_actions:
        parser.add_argument("--config", metavar="FILE", default=default, help="promptd.toml to read (default: PROMPTD_CONFIG, else none)")
    if "--log-level" not in parser._option_string_actions:
        parser.add_argument("--log-level", choices=LOG_LEVELS, default=default, help="stderr log level (default: the log_level setting, info)")


def _command_parsers(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    """Every parser below `parser` (commands, and subcommands such as `vault seal`), once each."""
    import argparse

    found: list[argparse.ArgumentParser] = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                if sub not in found:
                    found.append(sub)
                    found.extend(p for p in _command_parsers(sub) if p not in found)
    return found


def build_parser() -> argparse.ArgumentParser:
    import argparse

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
    from promptd import cli_prompt

    cli_prompt.add_commands(commands)
    for sub in _command_parsers(parser):
        _add_global_options(sub, on_command=True)
    return parser


def serve_options(argv: list[str]) -> SimpleNamespace | None:
    """The options of `promptd serve [--config FILE] [--log-level LEVEL]`, the command line a host
    spawns, read without the full parser: importing argparse and building every command's parser
    is a measurable part of a host's wait for its first answer. None for any other command line,
    which the full parser reads (and reports on): the two agree on everything this accepts."""
    options: dict[str, str] = {}
    rest = list(argv)
    if "serve" not in rest:
        return None
    rest.remove("serve")
    while rest:
        name, _, value = rest.pop(0).partition("=")
        if name not in ("--config", "--log-level") or name in options:
            return None
        if not _:
            if not rest or rest[0].startswith("-"):
                return None
            value = rest.pop(0)
        if not value or (name == "--log-level" and value not in LOG_LEVELS):
            return None
        options[name] = value
    return SimpleNamespace(command="serve", config=options.get("--config"), log_level=options.get("--log-level"))


def load_config(args: argparse.Namespace | SimpleNamespace) -> Config:
    config = load(getattr(args, "config", None))
    level = getattr(args, "log_level", None)
    if level:
        config = config.merged({"log_level": level})
    return config


# At most this many ignored names are listed in the warning (the count is always exact).
MAX_IGNORED_NAMES = 50


def warn_ignored_env(config: Config) -> None:
    """One warning line naming the host's own PROMPTD_* variables that were ignored: names only,
    never values (a host variable may hold a secret)."""
    names = ignored_env_names()
    if names:
        Logger(config.log_level).warning("env_ignored", names=names[:MAX_IGNORED_NAMES], count=len(names))


def main(argv: list[str] | None = None) -> int:
    try:
        return run(argv)
    except BrokenPipeError:
        _silence_stdout()
        return EXIT_BROKEN_PIPE
    except OSError as exc:
        # A file or folder the command was pointed at (`-o /missing/dir/out`): one line naming
        # it, as for every other input error, never a traceback.
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"promptd: {where}{exc.strerror or exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        return 130  # 128 + SIGINT, as a shell reports it


def run(argv: list[str] | None = None) -> int:
    args: argparse.Namespace | SimpleNamespace | None = serve_options(sys.argv[1:] if argv is None else argv)
    if args is None:
        parser = build_parser()
        args = parser.parse_args(argv)
        if args.command is None:
            # A bare `promptd` asked for nothing wrong: it gets the help, on stdout, and exit 0.
            parser.print_help()
            return EXIT_OK
    if args.command == "version":
        print(version_line())
        return EXIT_OK
    try:
        config = load_config(args)
    except ConfigError as exc:
        print(f"promptd: {exc.message}", file=sys.stderr)
        return EXIT_USAGE
    warn_ignored_env(config)
    if args.command == "serve":
        return serve(config)
    if args.command == "call":
        return call(config, args.method, args.params)
    if args.command == "keys":
        return call(config, "reminder/keys", "{}")
    code: int = args.handler(config, args)
    return code


def _silence_stdout() -> None:
    """After the reader of stdout went away: point stdout at /dev/null, so the interpreter's final
    flush of what is still buffered cannot raise (and print) a second BrokenPipeError."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass


def serve(config: Config) -> int:
    from promptd.app import Runtime
    from promptd.server import serve as serve_stdio

    try:
        runtime = Runtime(config)
    except ConfigError as exc:
        print(f"promptd: {exc.message}", file=sys.stderr)
        return EXIT_USAGE

    def hint() -> None:
        if os.isatty(0):
            print(TTY_HINT, file=sys.stderr)

    return serve_stdio(runtime, on_ready=hint)


class _BadParams(Exception):
    pass


def read_params(raw: str) -> Any:
    """The params argument of `call`: JSON text, `-` for stdin, or @FILE."""
    if raw == "-":
        data = sys.stdin.buffer.read()
        source = "stdin"
    elif raw.startswith("@"):
        name = raw[1:]
        try:
            with open(name, "rb") as handle:
                data = handle.read()
        except OSError as exc:
            raise _BadParams(f"cannot read params file {name}: {exc.strerror}") from None
        source = name
    else:
        data = raw.encode("utf-8", "surrogateescape")
        source = ""
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        where = f" (from {source})" if source else ""
        raise _BadParams(f'params{where} must be a JSON object, e.g. \'{{"key": "session.cwd", "body": "/tmp"}}\'') from None


def call(config: Config, method_name: str, raw_params: str) -> int:
    from promptd.local import Local, LocalError
    from promptd.rpc import codes

    try:
        params: Any = read_params(raw_params)
    except _BadParams as exc:
        print(f"promptd: {exc}", file=sys.stderr)
        return EXIT_USAGE
    try:
        door = Local(config)
    except ConfigError as exc:
        print(f"promptd: {exc.message}", file=sys.stderr)
        return EXIT_USAGE
    try:
        result = door.call(method_name, params)
    except LocalError as failure:
        if failure.code == codes.METHOD_NOT_FOUND:
            print(f"promptd: unknown method {method_name!r}; see `promptd call rpc.discover`", file=sys.stderr)
            return EXIT_USAGE
        error = {"code": failure.code, "message": failure.message, "data": failure.data}
        sys.stderr.write(orjson.dumps({"error": error}).decode() + "\n")
        return EXIT_USAGE
    sys.stdout.write(orjson.dumps(result, option=orjson.OPT_INDENT_2).decode() + "\n")
    sys.stdout.flush()
    return EXIT_OK
