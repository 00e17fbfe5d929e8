"""What each kind of provider produces, and the built-in providers.

A provider gets a read-only view of the session and returns text (or None: nothing this turn).
Blocking work (file reads, under the safe-read rule of promptd.files, which never blocks on a
FIFO or a terminal) runs on the provider reader threads (promptd.assembly.readers: a few of their
own, so a read that never returns cannot take the threads the rest of promptd uses); commands run without a shell in their own
process group so a timeout can kill the whole group; the warden (warden.py) kills that group if
promptd dies first, however it dies.
"""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import Awaitable, Callable, Iterable, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import NamedTuple, Protocol

from promptd import files
from promptd.assembly.kinds import ProviderKind, Scope, SkipReason
from promptd.assembly.memory import read_project_memory
from promptd.assembly.model import ProviderSkipped, ProviderSpec
from promptd.assembly.readers import READERS
from promptd.assembly.warden import Warden, pdeathsig_prefix
from promptd.childenv import child_env
from promptd.sessions.store import digest
from promptd.sessions.todos import NUDGE_KEY, nudge_text

# An empty mapping that cannot be changed: the shared default of ProviderView's mappings.
NOTHING: Mapping[str, str] = MappingProxyType({})


class ProviderView(NamedTuple):
    """The state a provider may read. Copies: a provider cannot change the session."""

    session: str
    user_message: str
    cwd: str | None = None
    date: str | None = None
    os_name: str | None = None
    shell: str | None = None
    env: Mapping[str, str] = NOTHING
    tools: Mapping[str, str] = NOTHING
    # The digest (promptd.sessions.store.digest) of what earlier turns delivered under each key.
    last_delivered: Mapping[str, bytes] = MappingProxyType({})
    modified_files: tuple[str, ...] = ()
    turns_since_todo_write: int = 0
    turns_since_nudge: int | None = None
    project_memory_max_chars: int = 20_000
    nudge: tuple[bool, int, int] = (True, 3, 5)  # enabled, turns_since_todo_write, turns_between


class HostChannel(Protocol):
    """The host's side of `host` providers (the server's client connection)."""

    available: bool

    async def produce(self, provider: str, session: str, user_message: str, timeout_s: float) -> str | None: ...


Producer = Callable[[ProviderSpec, ProviderView, HostChannel, float], Awaitable[str | None]]
# Instant producers only read the view: no I/O, nothing to wait for, so they run without a task
# or a timer (a task per provider was most of the cost of assembling many static providers).
InstantProducer = Callable[[ProviderSpec, ProviderView], str | None]


def produce_static(spec: ProviderSpec, view: ProviderView) -> str | None:
    return spec.text or None


async def produce_file(spec: ProviderSpec, view: ProviderView, host: HostChannel, timeout_s: float) -> str | None:
    assert spec.path is not None  # ProviderSpec validation guarantees it
    path = spec.path
    # On promptd.assembly.readers' threads, never the default executor: a read a FUSE mount never
    # answers holds its thread for good, and may only ever starve other provider reads.
    return await READERS.run(lambda: read_provider_file(path, view.cwd, spec.max_bytes))


async def produce_command(spec: ProviderSpec, view: ProviderView, host: HostChannel, timeout_s: float) -> str | None:
    assert spec.argv is not None
    # The session's directory, or the root when the host gave none: never promptd's own.
    return await run_command(list(spec.argv), spec.max_bytes, cwd=view.cwd or "/", pass_env=spec.env)


async def produce_host(spec: ProviderSpec, view: ProviderView, host: HostChannel, timeout_s: float) -> str | None:
    if not host.available:
        raise ProviderSkipped(SkipReason.NO_HOST)
    return await host.produce(spec.name, view.session, view.user_message, timeout_s)


def read_provider_file(path: str, cwd: str | None, max_bytes: int) -> str | None:
    """A file provider's text, read by the safe-read rule (promptd.files): a relative path from the
    session's directory with no symlink below it, an absolute one walked from `/`. Without a
    session directory a relative path is missing, never read against promptd's own."""
    candidate = os.path.expanduser(path)
    if not os.path.isabs(candidate) and not cwd:
        raise ProviderSkipped(SkipReason.MISSING, "relative path and no session cwd")
    try:
        data = files.read_safe(candidate, max_bytes, root=cwd)
    except files.Refused as exc:
        raise ProviderSkipped(SKIPS.get(exc.reason, SkipReason.UNSAFE), exc.detail) from None
    return data.decode("utf-8", "replace") or None


# How a refused read is reported; every other refusal (symlink, not_regular, special_filesystem,
# owner, permissions, replaced) is `unsafe`, its detail naming the rule, never the contents.
SKIPS = {
    files.Refusal.MISSING: SkipReason.MISSING,
    files.Refusal.DIRECTORY: SkipReason.MISSING,
    files.Refusal.TOO_LARGE: SkipReason.TOO_LARGE,
    files.Refusal.UNREADABLE: SkipReason.ERROR,
}


# Put before a command's argv: it gets SIGKILL when promptd dies (Linux with setpriv; else []).
PDEATHSIG: list[str] | None = None
# Exit statuses the gate's shell gives when it cannot run the command.
NOT_FOUND, NOT_EXECUTABLE = 127, 126
# The command waits at this gate until the warden knows its group: reading one line from stdin
# (the gate pipe) before exec. If promptd dies first, the read ends without a line and the
# command never starts, so there is no instant in which it could leave a child nobody tracks.
GATE = 'read -r _ || exit 125; exec "$@" </dev/null'
GATE_ARGV = ["/bin/sh", "-c", GATE, "promptd-command"]
# Told of every running command's group; created on first use.
WARDEN = Warden()


async def run_command(argv: list[str], max_bytes: int, cwd: str, pass_env: Iterable[str] = ()) -> str | None:
    """Runs argv (no shell parses it: the gate passes it on as "$@") in a new process group, with
    the allowlisted environment plus the variables named in `pass_env` (promptd.childenv: never
    promptd's own variables or the vault key); stdout is the result. However it ends (output,
    oversize, error, the caller's timeout or cancellation, shutdown), the whole group is killed and
    the command reaped, so neither it nor a child it left in the background outlives the provider;
    when promptd itself is killed, the warden does, and the command dies with promptd anyway."""
    global PDEATHSIG
    if PDEATHSIG is None:
        PDEATHSIG = await asyncio.to_thread(pdeathsig_prefix)  # found once, off the loop
    prefix: list[str] = PDEATHSIG
    gate, opener = os.pipe()
    try:
        proc = await asyncio.create_subprocess_exec(
            *prefix,
            *GATE_ARGV,
            *argv,
            stdin=gate,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            cwd=cwd,
            env=child_env(pass_env),
            start_new_session=True,
        )
    except BaseException as exc:
        os.close(opener)  # also when cancelled here: a command already started ends at its gate
        if isinstance(exc, (FileNotFoundError, NotADirectoryError, PermissionError)):
            raise ProviderSkipped(SkipReason.MISSING, type(exc).__name__) from exc
        raise
    finally:
        os.close(gate)
    try:
        WARDEN.watch(proc.pid)
        os.write(opener, b"\n")  # the warden knows the group: the command may start
    except OSError:
        pass  # the gate's shell is already gone: its exit status says why
    finally:
        os.close(opener)
    assert proc.stdout is not None
    chunks: list[bytes] = []
    size = 0
    try:
        while chunk := await proc.stdout.read(65536):
            size += len(chunk)
            if size > max_bytes:
                raise ProviderSkipped(SkipReason.TOO_LARGE, f"over {max_bytes} bytes")
            chunks.append(chunk)
        code = await proc.wait()
    finally:
        await end_group(proc)
    if code in (NOT_FOUND, NOT_EXECUTABLE):
        raise ProviderSkipped(SkipReason.MISSING, "not found" if code == NOT_FOUND else "not executable")
    if code != 0:
        raise ProviderSkipped(SkipReason.ERROR, f"exit status {code}")
    return b"".join(chunks).decode("utf-8", "replace") or None


async def end_group(proc: asyncio.subprocess.Process) -> None:
    try:
        # SIGKILL, not SIGTERM: a provider past its time gets no say (it may ignore SIGTERM). Sent
        # even when the command itself has exited: a child it put in the background is in the group.
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    WARDEN.release(proc.pid)
    if proc.returncode is None:
        await proc.wait()


# ---- built-in providers ----------------------------------------------------------------------


def changed(view: ProviderView, key: str, text: str | None) -> str | None:
    """Session facts are delivered when they differ from what an earlier turn delivered (compared
    by digest: the session keeps no delivered text)."""
    if not text or view.last_delivered.get(key) == digest(text):
        return None
    return text


def builtin_cwd(spec: ProviderSpec, view: ProviderView) -> str | None:
    return changed(view, spec.key, f"Working directory: {view.cwd}" if view.cwd else None)


def builtin_date(spec: ProviderSpec, view: ProviderView) -> str | None:
    return changed(view, spec.key, f"Today's date: {view.date}" if view.date else None)


def builtin_env(spec: ProviderSpec, view: ProviderView) -> str | None:
    lines = []
    if view.os_name:
        lines.append(f"Operating system: {view.os_name}")
    if view.shell:
        lines.append(f"Shell: {view.shell}")
    lines.extend(f"{name}: {value}" for name, value in sorted(view.env.items()))
    return changed(view, spec.key, "\n".join(lines))


async def builtin_project_memory(spec: ProviderSpec, view: ProviderView, host: HostChannel, timeout_s: float) -> str | None:
    """AGENTS.md / CLAUDE.md under the rules of promptd.assembly.memory (no symlinks, regular files
    of promptd's user or root only, bounded walk)."""
    if not view.cwd:
        return None
    cwd, max_chars = Path(view.cwd), view.project_memory_max_chars
    text = await READERS.run(lambda: read_project_memory(cwd, max_chars))
    return changed(view, spec.key, text)


def builtin_file_modified(spec: ProviderSpec, view: ProviderView) -> str | None:
    if not view.modified_files:
        return None
    listed = "\n".join(f"- {path}" for path in view.modified_files)
    return f"These files were changed outside the agent since it last read them; read them again before relying on their contents:\n{listed}"


def builtin_todo_nudge(spec: ProviderSpec, view: ProviderView) -> str | None:
    return nudge_text(view)


PRODUCERS: dict[ProviderKind, Producer | InstantProducer] = {
    ProviderKind.STATIC: produce_static,
    ProviderKind.FILE: produce_file,
    ProviderKind.COMMAND: produce_command,
    ProviderKind.HOST: produce_host,
}

# Built-in providers, in their registration order. Each yields nothing until the host has given
# it data; config can switch each off.
BUILTINS: list[tuple[ProviderSpec, Producer | InstantProducer, str]] = [
    (ProviderSpec("session.cwd", Scope.GLOBAL, ProviderKind.BUILTIN, "session.cwd"), builtin_cwd, "session_metadata"),
    (ProviderSpec("session.date", Scope.GLOBAL, ProviderKind.BUILTIN, "session.date"), builtin_date, "session_metadata"),
    (ProviderSpec("session.env", Scope.GLOBAL, ProviderKind.BUILTIN, "session.env"), builtin_env, "session_metadata"),
    (ProviderSpec("memory.project_md", Scope.GLOBAL, ProviderKind.BUILTIN, "memory.project_md"), builtin_project_memory, "project_memory"),
    (ProviderSpec("file.modified", Scope.GLOBAL, ProviderKind.BUILTIN, "file.modified"), builtin_file_modified, "file_modified"),
    (ProviderSpec(NUDGE_KEY, Scope.PER_TURN, ProviderKind.BUILTIN, NUDGE_KEY), builtin_todo_nudge, "todo_nudge"),
]
