"""Compiled shipped templates kept on disk, so a new process skips Jinja's parse, code generation
and Python compile of the Primary and Subagent templates (docs/templates.md, "Compiled-template
cache").

Domain layer: must not import promptd.rpc or promptd.methods. Only the shipped templates come here
(the engine's `persist=True`): a sealed template's plaintext-derived code must never reach disk, and
a caller's templates are not worth a file each.

One file per template under $XDG_CACHE_HOME/promptd (else ~/.cache/promptd), named by a key that
covers everything the code depends on: the jinja2 and Python versions, the engine's own source (its
code generator and settings), strict or lenient, the template's name and the sha256 of its text.
Each file holds its key and a checksum of the code. Written atomically (a 0600 temporary file
renamed into a 0700 folder); read only when the folder and the file belong to this user, are not
group- or world-writable and are not links, since their code runs. The folder is opened without
following a link and the file relative to it under the safe-read rule (promptd.files: O_NOFOLLOW |
O_NONBLOCK | O_CLOEXEC, a regular file by lstat and fstat, never a FIFO or a device), and at most
MAX_CODE_BYTES are read, so nothing planted there can hang or exhaust a render. A file that cannot
be read, is refused, truncated, corrupt or for another key is ignored (and replaced), and said in
the log by its reason (`skipped`, below); a missing file is the ordinary miss. Any failure to read
or write only means compiling as before.
"""

from __future__ import annotations

import hashlib
import marshal
import os
import sys
import tempfile
import types
from collections.abc import Callable
from contextvars import ContextVar
from pathlib import Path

import jinja2

from promptd import files

# Bumped when the file layout changes.
FORMAT = b"promptd-code-1\n"  # then the key, a newline, the sha256 of the payload and the marshalled code
# The engine's code generator and settings, and the filters and tests it installs (Jinja checks
# filter names when it compiles), shape the code: a change to either is a new key.
ENGINE_SOURCES = tuple(Path(__file__).resolve().parent / name for name in ("engine.py", "sandbox.py", "formatters.py", "failures.py", "filters.py", "dialect.py"))
_engine_digest: str | None = None
# The compiled code of a shipped template is tens of kilobytes (Primary's about 16 KB): a file
# larger than this is not promptd's, and is not read past it.
MAX_CODE_BYTES = 4 << 20

# Told of each cache file that was there but not used: (reason, template name). Set by whoever
# logs (the Renderer, with its log) around a render; reasons are short
# machine words (files.Refusal values, "folder", "corrupt"), never a file's contents.
Skipped = Callable[[str, str], None]
skipped: ContextVar[Skipped | None] = ContextVar("promptd_codecache_skipped", default=None)


class _Miss(Exception):
    """A cache file that is there but not used, with the reason."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def directory() -> Path | None:
    """Where the cache lives; None when there is no home to put it in."""
    base = os.environ.get("XDG_CACHE_HOME")
    if base and os.path.isabs(base):
        return Path(base) / "promptd"
    try:
        return Path.home() / ".cache" / "promptd"
    except RuntimeError:  # no HOME and no passwd entry
        return None


def key(source: str, name: str, strict: bool) -> str:
    global _engine_digest
    if _engine_digest is None:
        _engine_digest = hashlib.sha256(b"".join(path.read_bytes() for path in ENGINE_SOURCES)).hexdigest()
    parts = [jinja2.__version__, sys.implementation.cache_tag or sys.version, _engine_digest, "strict" if strict else "lenient", name]
    parts.append(hashlib.sha256(source.encode("utf-8")).hexdigest())
    return hashlib.sha256("\0".join(parts).encode("utf-8")).hexdigest()


def _private(st: os.stat_result) -> bool:
    """Ours alone: code is loaded from here, so nobody else may have written it."""
    return st.st_uid == os.getuid() and not st.st_mode & 0o022


def _read_private(folder: Path, filename: str) -> bytes | None:
    """The file's bytes when the folder and the file are ours alone and neither is a link; None
    when there is no such file; raises _Miss for one that is there and refused."""
    try:
        folder_fd = os.open(folder, files.DIR_FLAGS)
    except FileNotFoundError:
        return None
    except OSError:
        raise _Miss("folder") from None  # a link (O_NOFOLLOW), not a folder, or not ours to read
    try:
        if not _private(os.fstat(folder_fd)):
            raise _Miss("folder")
        try:
            opened = files.open_member(folder_fd, filename)
        except files.Refused as exc:
            if exc.reason is files.Refusal.MISSING:
                return None
            raise _Miss(exc.reason.value) from None
    finally:
        os.close(folder_fd)
    try:
        if not _private(opened.stat):
            raise _Miss(files.Refusal.OWNER.value)  # root's file (the safe-read rule's allowance) is not ours
        try:
            return files.read_fd(opened, MAX_CODE_BYTES)
        except files.Refused as exc:
            raise _Miss(exc.reason.value) from None
    finally:
        os.close(opened.fd)


def load(source: str, name: str, strict: bool) -> types.CodeType | None:
    """The cached code object, or None (no cache, not ours alone, unreadable, corrupt, another
    key). A file that is there and not used is reported to `skipped`."""
    folder = directory()
    if folder is None:
        return None
    try:
        digest = key(source, name, strict)
        data = _read_private(folder, f"{digest}.code")
        if data is None:
            return None
        header = FORMAT + digest.encode("ascii") + b"\n"
        if not data.startswith(header):
            raise _Miss("corrupt")
        checksum, payload = data[len(header) : len(header) + 32], data[len(header) + 32 :]
        # A damaged payload can still unmarshal into a code object: it must match its checksum.
        if hashlib.sha256(payload).digest() != checksum:
            raise _Miss("corrupt")
        try:
            code = marshal.loads(payload)
        except (ValueError, EOFError, TypeError):
            raise _Miss("corrupt") from None
        if not isinstance(code, types.CodeType) or code.co_filename != name:
            raise _Miss("corrupt")
    except _Miss as miss:
        _report(miss.reason, name)
        return None
    except OSError:
        _report(files.Refusal.UNREADABLE.value, name)
        return None
    return code


def _report(reason: str, name: str) -> None:
    report = skipped.get()
    if report is not None:
        report(reason, name)


def store(source: str, name: str, strict: bool, code: types.CodeType) -> None:
    """Writes the code object for the next process; failures are ignored (the cache is optional)."""
    folder = directory()
    if folder is None:
        return
    try:
        digest = key(source, name, strict)
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".code", dir=folder)  # created 0600
        try:
            with os.fdopen(fd, "wb") as out:
                payload = marshal.dumps(code)
                out.write(FORMAT + digest.encode("ascii") + b"\n" + hashlib.sha256(payload).digest() + payload)
            os.replace(tmp, folder / f"{digest}.code")
        except BaseException:
            os.unlink(tmp)
            raise
    except (OSError, ValueError):
        return
