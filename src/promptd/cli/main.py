"""Command line: serve | call | keys | version (and help, and the prompt commands registered by
cli.prompt).

Entry layer: reads the arguments (the plain `serve` a host spawns here, any other command line
through cli.parser), builds the runtime, and hands over to the server or to one in-process call
through the in-process door (promptd.local), which runs the server's boundary.

Exit status, for every command (cli.exits, docs/cli.md): 0 ok, 1 findings (the command ran and
reports problems, as `lint` does), 2 usage or input error (bad arguments, an unreadable or invalid
file, a request the method refused). `serve` adds the protocol's own rule: 1 for `exit` without
`shutdown`. Every error line is printed here, once, as `promptd COMMAND: message`.
"""

from __future__ import annotations

import os
import sys
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

from promptd import exactjson
from promptd.cli import exits
from promptd.cli.exits import Exit, Failed
from promptd.config import Config, ignored_env_names, load
from promptd.errors import ConfigError
from promptd.logs import LEVELS, Logger, LogLevel

if TYPE_CHECKING:
    import argparse

TTY_HINT = (
    "promptd speaks line-delimited JSON-RPC 2.0 on stdin/stdout; type one request per line, e.g.\n"
    '  {"jsonrpc":"2.0","id":1,"method":"reminder/wrap","params":{"key":"session.cwd","body":"/tmp"}}\n'
    "Ctrl-D ends the session. Logs are JSON lines on stderr."
)


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
        if not value or (name == "--log-level" and value not in LEVELS):
            return None
        options[name] = value
    return SimpleNamespace(command="serve", command_path="serve", config=options.get("--config"), log_level=options.get("--log-level"))


def load_config(args: argparse.Namespace | SimpleNamespace) -> Config:
    config = load(getattr(args, "config", None))
    level = getattr(args, "log_level", None)
    if level:
        config = config.merged({"log_level": level})
    elif args.command != "serve" and "log_level" not in config.model_fields_set:
        # A command is run by a person or a script, who wants its output, not the runtime's
        # info-level events (`initialized`, `vault_key`); a setting of log_level (the config
        # file, PROMPTD_LOG_LEVEL) still wins. `serve` keeps the info level a host's log wants.
        config = config.model_copy(update={"log_level": LogLevel.WARNING})
    return config


# At most this many ignored names are listed in the warning (the count is always exact).
MAX_IGNORED_NAMES = 50


def warn_ignored_env(config: Config) -> None:
    """One warning line naming the host's own PROMPTD_* variables that were ignored: names only,
    never values (a host variable may hold a secret), and the setting a misspelled one was
    probably meant to be (`suggestions`, only when one is close)."""
    names = ignored_env_names()
    if not names:
        return
    from promptd.config import env_suggestions  # only on this path: it imports difflib

    fields: dict[str, Any] = {"names": names[:MAX_IGNORED_NAMES], "count": len(names)}
    meant = env_suggestions(names[:MAX_IGNORED_NAMES])
    if meant:
        fields["suggestions"] = meant
    Logger(config.log_level).warning("env_ignored", **fields)


def main(argv: list[str] | None = None) -> int:
    try:
        code = run(sys.argv[1:] if argv is None else argv)
        # What is still buffered goes now, while a reader that went away can still be caught
        # here rather than at the interpreter's final flush.
        sys.stdout.flush()
        return code
    except BrokenPipeError:
        return exits.pipe_closed()
    except KeyboardInterrupt:
        return exits.INTERRUPTED


def run(argv: list[str]) -> int:
    args: argparse.Namespace | SimpleNamespace | None = serve_options(argv)
    if args is None:
        from promptd.cli.parser import parse

        parsed = parse(argv)
        if isinstance(parsed, int):
            return parsed
        args = parsed
    command = getattr(args, "command_path", args.command)
    try:
        return dispatch(args)
    except Failed as failure:
        return exits.fail(command, failure.message, failure.status)
    except ConfigError as exc:
        # The one place a configuration error is reported, for every command: loading it here,
        # or a runtime refusing it (`serve`, the door of `call` and the prompt commands).
        return exits.fail(command, exc.message)
    except BrokenPipeError:
        raise
    except OSError as exc:
        # A file or folder no command-specific message covers: one line naming it, in promptd's
        # words, never a traceback.
        where = f"{exc.filename}: " if exc.filename else ""
        return exits.fail(command, f"{where}{exits.os_reason(exc)}")


def dispatch(args: argparse.Namespace | SimpleNamespace) -> int:
    if args.command == "version":
        from promptd.cli.parser import version_line

        print(version_line())
        return Exit.OK
    config = load_config(args)
    warn_ignored_env(config)
    if args.command == "serve":
        return serve(config)
    if args.command == "call":
        return call(config, args.method, args.params)
    if args.command == "keys":
        return call(config, "reminder/keys", "{}")
    code: int = args.handler(config, args)
    return code


def serve(config: Config) -> int:
    from promptd.runtime import Runtime
    from promptd.transport.server import serve as serve_stdio

    runtime = Runtime(config)  # a ConfigError is reported by run

    def hint() -> None:
        if os.isatty(0):
            print(TTY_HINT, file=sys.stderr)

    return serve_stdio(runtime, on_ready=hint)


def read_params(raw: str) -> Any:
    """The params argument of `call`: JSON text, `-` for stdin, or @FILE; raises Failed."""
    from promptd import files

    if raw == "-":
        # Bounded like a file: a stream that never ends is refused at the cap, never read whole.
        data = sys.stdin.buffer.read(files.MAX_NAMED_BYTES + 1)
        if len(data) > files.MAX_NAMED_BYTES:
            raise Failed(f"cannot read params from stdin: over {files.MAX_NAMED_BYTES} bytes (too_large)")
        source = "stdin"
    elif raw.startswith("@"):
        name = raw[1:]
        try:
            # The named-file rule (docs/security.md, "Safe reads"): no FIFO, device or kernel file.
            data = files.read_named(name)
        except files.Refused as exc:
            raise Failed(exits.cannot_read(name, exc.detail, exc.reason)) from None
        source = name
    else:
        data = raw.encode("utf-8", "surrogateescape")
        source = ""
    try:
        return exactjson.loads(data)  # wide integers and lone surrogates read as the wire reads them
    except (ValueError, RecursionError):
        where = f" (from {source})" if source else ""
        raise Failed(f'params{where} must be a JSON object, e.g. \'{{"key": "session.cwd", "body": "/tmp"}}\'') from None


def call(config: Config, method_name: str, raw_params: str) -> int:
    from promptd.local import Local, LocalError
    from promptd.rpc import codes
    from promptd.text import suggest

    params: Any = read_params(raw_params)
    door = Local(config)
    try:
        result = door.call(method_name, params)
    except LocalError as failure:
        if failure.code == codes.METHOD_NOT_FOUND:
            found = suggest(method_name, door.methods)
            hint = f"did you mean {' or '.join(f'`{name}`' for name in found)}?" if found else "`promptd call rpc.discover` lists the methods"
            raise Failed(f"unknown method {method_name!r}; {hint}") from None
        error = {"code": failure.code, "message": failure.message, "data": failure.data}
        sys.stderr.write(exactjson.dumps({"error": error}).decode() + "\n")
        return Exit.USAGE
    sys.stdout.write(exactjson.dumps_indented(result).decode() + "\n")
    return Exit.OK
