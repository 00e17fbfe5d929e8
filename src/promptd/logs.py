"""JSON-lines logging to stderr, metadata only.

Callers pass names, sizes, durations and outcomes as fields. There is deliberately no way to log a
message body: fields whose values are long strings are cut, so an accidental body cannot leak whole.
"""

from __future__ import annotations

import sys
import time
from enum import StrEnum
from typing import Any, TextIO

import orjson

from promptd import exactjson


class LogLevel(StrEnum):
    DEBUG = "debug"
    INFO = "info"
    WARNING = "warning"
    ERROR = "error"


LEVELS: dict[str, int] = {LogLevel.DEBUG: 10, LogLevel.INFO: 20, LogLevel.WARNING: 30, LogLevel.ERROR: 40}
# A field value longer than this is replaced by its length: names and ids are short, bodies are not.
MAX_FIELD_CHARS = 200
# Internal errors keep their traceback: the design sends it to stderr (and only there).
UNCUT_FIELDS = frozenset({"traceback"})


def _line(record: dict[str, Any]) -> str:
    try:
        return orjson.dumps(record, default=str).decode()
    except TypeError:
        # A wide integer or a lone surrogate in a field (a host's method name, say): written as the
        # wire writes them. Whatever else orjson refused is written as its str().
        plain = {name: value if isinstance(value, (str, int, float, bool, type(None))) else str(value) for name, value in record.items()}
        return exactjson.dumps(plain).decode()


class Logger:
    def __init__(self, level: LogLevel | str = LogLevel.INFO, stream: TextIO | None = None) -> None:
        self.threshold = LEVELS[level]
        self.stream = stream

    def set_level(self, level: LogLevel | str) -> None:
        self.threshold = LEVELS[level]

    def enabled(self, level: LogLevel | str) -> bool:
        return LEVELS[level] >= self.threshold

    def log(self, level: str, event: str, **fields: Any) -> None:
        if LEVELS[level] < self.threshold:
            return
        record = {"ts": round(time.time(), 3), "level": level, "event": event}
        for name, value in fields.items():
            if isinstance(value, str) and len(value) > MAX_FIELD_CHARS and name not in UNCUT_FIELDS:
                value = f"<{len(value)} chars>"
            record[name] = value
        stream = self.stream or sys.stderr
        try:
            stream.write(_line(record) + "\n")
            stream.flush()
        except (OSError, ValueError):
            pass  # a closed stderr must never take the server down

    def debug(self, event: str, **fields: Any) -> None:
        self.log("debug", event, **fields)

    def info(self, event: str, **fields: Any) -> None:
        self.log("info", event, **fields)

    def warning(self, event: str, **fields: Any) -> None:
        self.log("warning", event, **fields)

    def error(self, event: str, **fields: Any) -> None:
        self.log("error", event, **fields)
