"""The leash: a tiny exec wrapper that keeps a `command` provider from outliving promptd.

Run as a script (`python -I -S leash.py PARENT_PID ARGV...`), never imported by promptd itself: it
must start fast (no site, no promptd package) and use only the standard library's builtin modules.
promptd starts it as the leader of a new process group; it forks the command into that group and
waits for it.

Why a wrapper and not `preexec_fn`: promptd runs threads, and Python documents preexec_fn as
unsafe with threads (the child may deadlock on a lock another thread held at fork). This process
is single-threaded, so it may run code between fork and exec.

- Linux: the leash asks for SIGTERM when promptd dies (PR_SET_PDEATHSIG) and answers it by killing
  its whole group (the command and anything the command put in the background), then itself. The
  command gets PR_SET_PDEATHSIG SIGKILL too, so it dies with the leash even if the leash is
  killed outright.
- Elsewhere (macOS has no PDEATHSIG) the leash polls its parent id and does the same when it
  changes (promptd died and the leash was reparented).

Exit status: the command's, 128+N when signal N ended it; 127 when the command could not be
found and 126 when it could not be executed (as a shell reports them).
"""

import os
import signal
import sys

PR_SET_PDEATHSIG = 1  # <sys/prctl.h>
# How often the leash looks for its parent where the kernel will not tell it (not Linux).
POLL_S = 0.1
CHILD = 0  # the command's pid, once forked


def pdeathsig(signum):
    """Asks the kernel for `signum` when the parent dies; False where that is not available."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(PR_SET_PDEATHSIG, signum, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def end_group(*_):
    # SIGKILL: whatever runs in the group gets no say. The leash is in the group and dies with it.
    # Only a leash that leads its own group kills it: run by hand inside a shell's group, it must
    # not take the shell down.
    try:
        if os.getpgrp() == os.getpid():
            os.killpg(0, signal.SIGKILL)
        elif CHILD:
            os.kill(CHILD, signal.SIGKILL)
    finally:
        os._exit(128 + signal.SIGKILL)


def run_child(argv):
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGHUP, signal.SIG_DFL)
    pdeathsig(signal.SIGKILL)
    try:
        os.execvp(argv[0], argv)
    except FileNotFoundError:
        os._exit(127)
    except OSError:
        os._exit(126)


def exit_status(status):
    code = os.waitstatus_to_exitcode(status)
    return 128 - code if code < 0 else code


def main():
    parent = int(sys.argv[1])
    argv = sys.argv[2:]
    signal.signal(signal.SIGTERM, end_group)
    signal.signal(signal.SIGHUP, end_group)
    watched = pdeathsig(signal.SIGTERM)
    # promptd may have died before the request above reached the kernel.
    if os.getppid() != parent:
        end_group()
    global CHILD
    pid = os.fork()
    if pid == 0:
        run_child(argv)
    CHILD = pid
    # The command owns stdout now: the leash's copy must not keep the pipe open after it exits.
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    os.close(null)
    if watched:
        _, status = os.waitpid(pid, 0)
    else:
        import time

        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                break
            if os.getppid() != parent:
                end_group()
            time.sleep(POLL_S)
    os._exit(exit_status(status))


if __name__ == "__main__":
    main()
