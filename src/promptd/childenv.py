"""The environment promptd gives the processes it starts: command providers, render workers and
the warden.

Beside promptd.keyfile, whose reading of keys it uses: imports only it and the standard
library. A child never inherits promptd's environment whole: that environment is the host's, and holds the vault key (`PROMPTD_VAULT_KEY`) and whatever
secrets the host had (API tokens, `SSH_AUTH_SOCK`, cloud credentials). A command provider's
output becomes reminder text (`env` would print them all), and a command run in an untrusted
repository runs that repository's code (`git status` with a repository-set `core.fsmonitor`). So
a child starts from the short list below, plus the names its provider asks for, and never gets a
`PROMPTD_*` variable, whatever it asks for, nor any variable whose value is a key promptd holds
in any form a key is written (promptd.keyfile.parse_key: hex in either case, base64, raw bytes,
surrounding whitespace): the vault key in PROMPTD_VAULT_KEY, a key promptd read from a key file
(promptd.keyfile.withhold), under whatever name it was copied to. Keys are compared by digest.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Mapping

from promptd import keyfile

# Passed when set. What ordinary command-line programs need to find programs and their own
# configuration and to print text the way the user reads it; none of it is a credential:
# - PATH: the command is looked up through it (the gate's `exec "$@"`), as are the programs it runs.
# - HOME, USER, LOGNAME: where tools read their configuration (~/.gitconfig) and whose it is.
# - SHELL: programs that start a subshell use the user's own.
# - LANG, LANGUAGE and the locale categories (LOCALE_CATEGORIES, by name: POSIX's and glibc's,
#   never "any LC_*", which would pass LC_API_TOKEN): without them tools fall back to ASCII "C"
#   output, which mangles non-ASCII file names and messages in a reminder.
# - TZ: dates in the user's zone (`git log`, `date`), as the user's terminal shows them.
# - TERM: some tools decide on paging and colour from it (stdout is a pipe either way).
# - TMPDIR: where a sandbox or the user wants temporary files.
# - XDG_*_HOME, XDG_RUNTIME_DIR: the base directories programs read their configuration, cache
#   and state from (git reads $XDG_CONFIG_HOME/git/config).
# Left out on purpose: PWD (promptd's own directory, never a session's: the command runs in the
# session's cwd), LD_* (code injected into every program), PYTHON* and GIT_* (they redirect what a
# program loads or which repository it acts on), SSH_AUTH_SOCK, DISPLAY and DBUS_* (authority over
# the user's agents and desktop), and every token or key. A provider that needs one names it
# (`env` in providers/register).
LOCALE_CATEGORIES = frozenset(
    {
        "LC_ALL",
        "LC_CTYPE",
        "LC_COLLATE",
        "LC_MESSAGES",
        "LC_MONETARY",
        "LC_NUMERIC",
        "LC_TIME",
        "LC_ADDRESS",
        "LC_IDENTIFICATION",
        "LC_MEASUREMENT",
        "LC_NAME",
        "LC_PAPER",
        "LC_TELEPHONE",
    }
)
ALLOWED = LOCALE_CATEGORIES | frozenset(
    {
        "PATH",
        "HOME",
        "USER",
        "LOGNAME",
        "SHELL",
        "LANG",
        "LANGUAGE",
        "TZ",
        "TERM",
        "TMPDIR",
        "XDG_CONFIG_HOME",
        "XDG_CACHE_HOME",
        "XDG_DATA_HOME",
        "XDG_STATE_HOME",
        "XDG_RUNTIME_DIR",
    }
)
# promptd's own variables (its settings, PROMPTD_CONFIG, the vault key), the host's under the same
# prefix: never a child's. Compared case-insensitively, so no spelling of the name gets through.
# Named here, where children are kept from them; promptd.config reads both names from here.
REFUSED_PREFIX = "PROMPTD_"
# The variable holding the vault key.
VAULT_KEY_ENV = "PROMPTD_VAULT_KEY"


def is_refused(name: str) -> bool:
    """A name no child ever gets, whoever asks for it."""
    return name.upper().startswith(REFUSED_PREFIX)


def is_allowed(name: str) -> bool:
    return name in ALLOWED


# <linux/prctl.h>
PR_SET_DUMPABLE = 4
PR_GET_DUMPABLE = 3
_closed = False


def close_to_children() -> None:
    """Makes promptd non-dumpable (Linux: prctl(PR_SET_DUMPABLE, 0)), once, before its first
    child starts. A process of the same user may otherwise open /proc/<promptd>/fd/* (write frames
    into promptd's protocol output, read its input), read /proc/<promptd>/environ (the vault key)
    and ptrace it; a command provider is such a process, and it runs a repository's code. A
    non-dumpable process's /proc files belong to root and ptrace needs CAP_SYS_PTRACE, so only
    root can. The cost (docs/security.md): no core dumps, and a debugger needs root. Done here,
    lazily, so a `serve` that never starts a command or a render worker is left as it was. The
    flag is the process's and is not inherited across exec: children are dumpable as usual."""
    global _closed
    if _closed or not sys.platform.startswith("linux"):
        return
    import ctypes

    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return
    prctl.restype = ctypes.c_int
    if prctl(PR_SET_DUMPABLE, ctypes.c_ulong(0), ctypes.c_ulong(0), ctypes.c_ulong(0), ctypes.c_ulong(0)) == 0:
        _closed = True


def dumpable() -> bool | None:
    """Whether promptd is dumpable now (Linux's PR_GET_DUMPABLE); None where it cannot be had."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes

    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    prctl.restype = ctypes.c_int
    flag = prctl(PR_GET_DUMPABLE, ctypes.c_ulong(0), ctypes.c_ulong(0), ctypes.c_ulong(0), ctypes.c_ulong(0))
    return None if flag < 0 else flag != 0


def child_env(extra: Iterable[str] = (), environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The allowlist's variables and those named in `extra`, with their values in `environ`
    (promptd's own environment by default); unset names are left out, and so is every variable
    whose value is a key promptd holds (module docstring). Every child promptd starts (command,
    render worker, warden) gets its environment here, right before it starts: so this is also
    where promptd closes its /proc files to its children (close_to_children)."""
    close_to_children()
    source = os.environ if environ is None else environ
    wanted = set(extra)
    vault_key = source.get(VAULT_KEY_ENV)
    digests = set(keyfile.withheld())
    if vault_key:
        # PROMPTD_VAULT_KEY's key, read as the vault reads it. Its digest only lives for this
        # call; a value that is no key at all is still compared as it is written.
        digests.update(keyfile.key_digest(key) for key in keyfile.keys_in(vault_key))
    env = {}
    for name, value in source.items():
        if is_refused(name) or not (is_allowed(name) or name in wanted):
            continue
        # The key copied under another name (MY_KEY=$PROMPTD_VAULT_KEY), re-encoded (upper-case
        # hex, base64) or padded with whitespace is still the key.
        if (vault_key and value == vault_key) or keyfile.holds_key(value, digests):
            continue
        env[name] = value
    return env
