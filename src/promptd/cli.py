"""Command line: serve | call | keys | version (and the prompt commands render | lint | vault).

Entry layer: parses arguments, builds the runtime, and hands over to the server or to one
in-process call through the in-process door (promptd.local), which runs the server's boundary.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

import orjson

from promptd import PROTOCOL_VERSION, __version__
from promptd.config import Config, ignored_env_names, load
from promptd.errors import ConfigError
from promptd.logs import Logger

EXIT_FAILURE = 1
EXIT_USAGE = 2

TTY_HINT = (
    "promptd speaks line-delimited JSON-RPC 2.0 on stdin/stdout; type one request per line, e.g.\n"
    '  {"jsonrpc":"2.0","id":1,"method":"reminder/wrap","params":{"key":"session.cwd","body":"/tmp"}}\n'
    "Ctrl-D ends the session. Logs are JSON lines on stderr."
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="promptd", description="The promptd sidecar.")
    parser.add_argument("--config", help="path to promptd.toml")
    parser.add_argument("--log-level", choices=["debug", "info", "warning", "error"], help="stderr log level")
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("serve", help="serve JSON-RPC on stdin/stdout")
    call = commands.add_parser("call", help="run one method in-process and print its result as JSON")
    call.add_argument("method")
    call.add_argument("params", nargs="?", default="{}", help="params as a JSON object (default {})")
    commands.add_parser("keys", help="list the reserved reminder keys")
    commands.add_parser("version", help="print the version")
    from promptd import cli_prompt

    cli_prompt.add_commands(commands)
    return parser


def load_config(args: argparse.Namespace) -> Config:
    config = load(args.config)
    if args.log_level:
        config = config.merged({"log_level": args.log_level})
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
    args = build_parser().parse_args(argv)
    if args.command == "version":
        print(f"promptd {__version__} (protocol {PROTOCOL_VERSION})")
        return 0
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
    return args.handler(config, args)


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


def call(config: Config, method_name: str, raw_params: str) -> int:
    from promptd.local import Local, LocalError
    from promptd.rpc import codes

    try:
        params: Any = orjson.loads(raw_params)
    except orjson.JSONDecodeError:
        print('promptd: params must be a JSON object, e.g. \'{"key": "session.cwd", "body": "/tmp"}\'', file=sys.stderr)
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
        return EXIT_FAILURE
    sys.stdout.write(orjson.dumps(result, option=orjson.OPT_INDENT_2).decode() + "\n")
    return 0
