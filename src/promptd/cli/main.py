"""Command line: serve | call | keys | version (and the prompt commands registered by cli.prompt).

Entry layer: reads the arguments (the plain `serve` a host spawns here, any other command line
through cli.parser), builds the runtime, and hands over to the server or to one in-process call
through the in-process door (promptd.local), which runs the server's boundary.

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

from promptd.config import Config, ignored_env_names, load
from promptd.errors import ConfigError
from promptd.logs import LEVELS, Logger

if TYPE_CHECKING:
    import argparse

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_USAGE = 2
# The reader of stdout went away (`promptd call ... | head`): the output was not all delivered, so
# not 0, but nothing was wrong with the input either; the prompt commands (cli.prompt) say 1 too.
EXIT_BROKEN_PIPE = EXIT_FINDINGS

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
        from promptd.cli.parser import build_parser

        parser = build_parser()
        args = parser.parse_args(argv)
        if args.command is None:
            # A bare `promptd` asked for nothing wrong: it gets the help, on stdout, and exit 0.
            parser.print_help()
            return EXIT_OK
    if args.command == "version":
        from promptd.cli.parser import version_line

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
    from promptd.runtime import Runtime
    from promptd.transport.server import serve as serve_stdio

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
    from promptd import files

    if raw == "-":
        # Bounded like a file: a stream that never ends is refused at the cap, never read whole.
        data = sys.stdin.buffer.read(files.MAX_NAMED_BYTES + 1)
        if len(data) > files.MAX_NAMED_BYTES:
            raise _BadParams(f"cannot read params from stdin: over {files.MAX_NAMED_BYTES} bytes (too_large)")
        source = "stdin"
    elif raw.startswith("@"):
        name = raw[1:]
        try:
            # The named-file rule (docs/security.md, "Safe reads"): no FIFO, device or kernel file.
            data = files.read_named(name)
        except files.Refused as exc:
            raise _BadParams(f"cannot read params file {name}: {exc}") from None
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
