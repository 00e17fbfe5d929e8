"""The warden: one small process per promptd that kills the process groups of running `command`
providers when promptd dies, however it dies (SIGKILL, an OOM kill, a crash).

Domain layer (assembly); imports only the standard library at module level, because the same
file is the warden's own program (`python -I -S warden.py`: no site, no promptd package, a fast
start). promptd's side imports promptd.childenv where it starts the warden.

promptd runs each command in a new process group and tells the warden its id before the command
can do much ("+PGID") and again once the group is ended ("-PGID"). The warden learns that
promptd is gone from end of input on that pipe: the kernel closes promptd's end when the process
ends, for any reason. Then it sends SIGKILL to every group still listed. It leads a session of
its own, so a host killing promptd's process group does not take it down first.

The command itself also gets PR_SET_PDEATHSIG (SIGKILL) where setpriv can set it (below), so it
dies with promptd even if the warden is gone too. Its own children do not inherit that; the
warden covers them. Why one warden and not a wrapper process per command: a Python wrapper
costs an interpreter start (about 20 ms of CPU) per command; eight commands at once went from
140 to 290 ms on a loaded machine.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from typing import Any

PR_SET_PDEATHSIG = 1  # <sys/prctl.h>


def pdeathsig_prefix() -> list[str]:
    """The argv prefix that gives a command PR_SET_PDEATHSIG (SIGKILL), or [] where none exists.

    util-linux's setpriv (2.33+, on nearly every Linux) sets it and then execs the command, which
    keeps it: a C program, about 2 ms per command. Not `preexec_fn` with ctypes: it is documented
    as unsafe in a threaded process (promptd is one), and it forces a full fork of promptd plus
    Python's after-fork work in the child: about 15 ms per command on a loaded machine, as much
    as a Python exec wrapper."""
    if not sys.platform.startswith("linux"):
        return []
    from promptd.childenv import child_env  # promptd's side only, as in Warden._start

    for folder in ("/usr/bin", "/bin", "/usr/sbin", "/sbin"):
        path = os.path.join(folder, "setpriv")
        if os.access(path, os.X_OK):
            try:
                probe = subprocess.run([path, "--pdeathsig", "KILL", "--", "true"], capture_output=True, timeout=5, env=child_env())
            except (OSError, subprocess.SubprocessError):
                return []
            return [path, "--pdeathsig", "KILL", "--"] if probe.returncode == 0 else []
    return []


class Warden:
    """promptd's side: starts the warden on first use and keeps it told."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[bytes] | None = None

    def watch(self, pgid: int) -> None:
        self._tell(f"+{pgid}\n")

    def release(self, pgid: int) -> None:
        self._tell(f"-{pgid}\n")

    def _tell(self, line: str) -> None:
        with self._lock:
            for _ in range(2):
                if self._proc is None or self._proc.poll() is not None:
                    self._proc = self._start()
                    if self._proc is None:
                        return
                try:
                    assert self._proc.stdin is not None  # started with stdin=PIPE
                    self._proc.stdin.write(line.encode())
                    self._proc.stdin.flush()
                    return
                except (BrokenPipeError, OSError, ValueError):
                    self._proc = None  # killed from outside: a fresh one, told again

    @staticmethod
    def _start() -> subprocess.Popen[bytes] | None:
        # Imported here: the warden's own program (this file, run with -I -S) has no promptd.
        from promptd.childenv import child_env

        try:
            return subprocess.Popen(
                [sys.executable, "-I", "-S", os.path.abspath(__file__)],
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                # It needs nothing of the environment; it still must not hold the vault key.
                env=child_env(),
                start_new_session=True,
                close_fds=True,
            )
        except OSError:
            return None


def main() -> None:
    # Killing the warden itself (a terminal's SIGINT, SIGTERM) should not leave the groups alive.
    groups: set[int] = set()

    def end(*_: Any) -> None:
        for pgid in groups:
            try:
                os.killpg(pgid, signal.SIGKILL)
            except OSError:
                pass
        os._exit(0)

    for signum in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(signum, end)
    for line in sys.stdin.buffer:
        try:
            pgid = int(line[1:])
        except ValueError:
            continue
        if line.startswith(b"+"):
            groups.add(pgid)
        elif line.startswith(b"-"):
            groups.discard(pgid)
    end()


if __name__ == "__main__":
    main()
