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
- A child that leaves the group (setsid, a daemon's double fork) is still found on Linux: the
  leash is a child subreaper (PR_SET_CHILD_SUBREAPER), so such orphans become its children, and
  whenever the leash ends (the command exited, SIGTERM from promptd at a timeout or cancellation,
  or promptd's death) it kills every descendant it has, then the group.

Exit status: the command's, 128+N when signal N ended it; 127 when the command could not be
found and 126 when it could not be executed (as a shell reports them).
"""

import os
import signal
import sys

PR_SET_PDEATHSIG = 1  # <sys/prctl.h>
PR_SET_CHILD_SUBREAPER = 36
# Rounds of killing descendants: a process forking as fast as it can may add some while a round
# runs; SIGKILL'd processes cannot fork, so a few rounds end it.
KILL_ROUNDS = 8
# How often the leash looks for its parent where the kernel will not tell it (not Linux).
POLL_S = 0.1
CHILD = 0  # the command's pid, once forked


def prctl(option, value):
    """prctl(2) on Linux; False where it is not available or fails."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(option, value, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def pdeathsig(signum):
    """Asks the kernel for `signum` when the parent dies."""
    return prctl(PR_SET_PDEATHSIG, signum)


def descendants(root):
    """Every live process below `root`, from /proc (empty where there is no /proc)."""
    parents = {}
    try:
        names = os.listdir("/proc")
    except OSError:
        return []
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as handle:
                fields = handle.read().rpartition(b")")[2].split()
        except OSError:
            continue
        if fields and fields[0] not in (b"Z", b"X"):
            parents.setdefault(int(fields[1]), []).append(int(name))
    found, pending = [], [root]
    while pending:
        for child in parents.get(pending.pop(), ()):
            found.append(child)
            pending.append(child)
    return found


def kill_descendants():
    me = os.getpid()
    for _ in range(KILL_ROUNDS):
        below = descendants(me)
        if not below:
            break
        for pid in below:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        reap()


def reap():
    """Collects the leash's dead children (its own and adopted orphans) without waiting."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def end_group(*_):
    # SIGKILL: whatever runs below gets no say. The leash is in the group and dies with it.
    # Only a leash that leads its own group kills it: run by hand inside a shell's group, it must
    # not take the shell down.
    try:
        kill_descendants()
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
    prctl(PR_SET_CHILD_SUBREAPER, 1)
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
    # The command is done; nothing it started may stay (whatever still holds its stdout would
    # otherwise keep promptd reading until the provider's timeout).
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    kill_descendants()
    os._exit(exit_status(status))


if __name__ == "__main__":
    main()
