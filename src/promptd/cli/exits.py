"""How a command ends: its exit status, its one error line, and a reader of stdout that went away.

Entry layer, imported by cli/main.py on every start, the plain `serve` a host spawns included: the
standard library only, nothing that costs a host's wait for its first answer.

Every command's errors are printed here, with one prefix, `promptd COMMAND: ` (`promptd vault
seal: `), so a script can tell which command spoke and a person reads one style everywhere.
"""

from __future__ import annotations

import errno
import os
import sys
from enum import IntEnum


class Exit(IntEnum):
    """The exit status of every command (docs/cli.md, "Exit status")."""

    OK = 0
    # The command ran and reports problems (`lint` findings, a changed snapshot, differing
    # renders, a template `vault seal` refused, a sealed file that does not open or lint clean).
    FINDINGS = 1
    # Bad arguments, an unreadable or invalid file, an invalid configuration, a refused request:
    # 2 is what argparse itself exits with on bad arguments, and what uv, ruff and gh use too.
    USAGE = 2


# The reader of stdout went away (`promptd call ... | head`): not everything was delivered, so not
# 0, but nothing was wrong with the input either.
PIPE_CLOSED = Exit.FINDINGS
# 128 + SIGINT, as a shell reports a command that Ctrl-C stopped.
INTERRUPTED = 130


class Failed(Exception):
    """A command that stops with one line on stderr: raised anywhere in a command, printed once
    (cli.main) with the command's prefix, and its status returned."""

    def __init__(self, message: str, status: Exit = Exit.USAGE) -> None:
        super().__init__(message)
        self.message = message
        self.status = status


def say(command: str | None, message: str) -> None:
    """One line on stderr: `promptd COMMAND: message` (`promptd: message` before a command is
    known)."""
    prefix = f"promptd {command}" if command else "promptd"
    print(f"{prefix}: {message}", file=sys.stderr)


def fail(command: str | None, message: str, status: Exit = Exit.USAGE) -> Exit:
    say(command, message)
    return status


def pipe_closed() -> Exit:
    """After the reader of stdout went away: point stdout at /dev/null, so nothing more is written
    and the interpreter's final flush of what is still buffered cannot raise (and print) a second
    BrokenPipeError. Quietly, with no traceback: `| head` is not a mistake."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass  # no descriptor to point elsewhere (a test's captured stdout)
    return PIPE_CLOSED


# Refusals of the named-file rule (promptd.files.Refusal) that mean "not there" or "not readable":
# said in words alone; the others also name the rule the file broke (`(not_regular)`).
PLAIN_REFUSALS = frozenset({"missing", "directory", "unreadable"})


def cannot_read(name: str, detail: str, reason: str) -> str:
    """`cannot read ctx.yaml: no such file`, `cannot read /dev/zero: not a regular file
    (not_regular)`: a file the command was named and could not read."""
    return f"cannot read {name}: {detail}" + ("" if reason in PLAIN_REFUSALS else f" ({reason})")


# promptd's own words for what the system said, instead of the C library's texts.
OS_REASONS = {
    errno.ENOENT: "no such file or folder",
    errno.ENOTDIR: "a part of the path is not a folder",
    errno.EISDIR: "a folder, not a file",
    errno.EEXIST: "already exists",
    errno.EACCES: "permission denied",
    errno.EPERM: "not permitted",
    errno.EROFS: "on a read-only filesystem",
    errno.ENOSPC: "no space left on the device",
    errno.EDQUOT: "over the disk quota",
    errno.ELOOP: "too many symlinks",
    errno.ENAMETOOLONG: "the name is too long",
}


def os_reason(exc: OSError) -> str:
    """What went wrong with a file, in a few words of promptd's (`no such file or folder`); the
    errno's name when there are none for it (`EIO`)."""
    if exc.errno in OS_REASONS:
        return OS_REASONS[exc.errno]
    name = errno.errorcode.get(exc.errno or 0)
    return f"the system refused ({name})" if name else "the system refused"
