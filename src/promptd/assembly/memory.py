"""Project memory: AGENTS.md and CLAUDE.md from the session's working directory upward.

These files come from repositories and folders promptd does not control, and what they hold goes
into the agent's context. The rules (docs/operations.md, "Project memory"):

- Where: the working directory (its real path), then its parents, up to the repository root (the
  first folder holding `.git`). Without a repository: up to the user's home directory when the
  working directory is under it, else only the working directory itself. The home directory is
  always the ceiling. A folder writable by group or others (such as /tmp), or owned by a user other
  than promptd's own or root, is not searched and ends the walk.
- What: a memory file is read only when it is a regular file (never a symlink, wherever it points;
  never a FIFO, device or socket), owned by promptd's own user or root, and not writable by group
  or others. The check is made on the open file (lstat, then open with O_NOFOLLOW | O_NONBLOCK
  relative to the folder's descriptor, then fstat and the same inode), so a swap between check and
  open cannot redirect the read, and a FIFO cannot block it.
- A refused file refuses the whole project memory for that turn: the provider is skipped
  (`error`) and the skip's detail names the file names and reasons (never content, never a full
  path); assembly logs it as `provider_skipped`. Partial memory is never delivered silently.
- Size: a file over 4x the character cap, or memory over the cap, skips it as `too_large`.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from promptd.assembly.kinds import SkipReason
from promptd.assembly.model import ProviderSkipped

MEMORY_FILES = ("AGENTS.md", "CLAUDE.md")
# The skip detail is logged; the logger replaces values over 200 characters by their length.
MAX_LISTED = 3

FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class Refused(Exception):
    """A memory file that exists but is not read; the reason is metadata only."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def read_project_memory(cwd: Path, max_chars: int) -> str | None:
    """The memory files of the searched folders, the outermost first (the nearest file has the last
    word), each under a `Contents of PATH:` line. None when there are none."""
    found: list[tuple[Path, str]] = []
    refused: list[str] = []
    for folder in search_folders(cwd):
        try:
            dfd = os.open(folder, DIR_FLAGS)
        except OSError:
            break  # gone or replaced since the walk: nothing from here up
        try:
            if not trusted(os.fstat(dfd)):
                break
            for name in MEMORY_FILES:
                try:
                    # A UTF-8 character is at most 4 bytes: reading 4x the character cap is always
                    # enough, and a huge file is never read whole.
                    content = read_member(dfd, name, 4 * max_chars)
                except Refused as exc:
                    refused.append(f"{name} ({exc.reason})")
                    continue
                except ProviderSkipped as exc:
                    raise ProviderSkipped(SkipReason.TOO_LARGE, f"project memory over {max_chars} characters") from exc
                if content is not None:
                    found.append((folder / name, content))
        finally:
            os.close(dfd)
    if refused:
        listed = ", ".join(refused[:MAX_LISTED]) + (f" and {len(refused) - MAX_LISTED} more" if len(refused) > MAX_LISTED else "")
        raise ProviderSkipped(SkipReason.ERROR, f"project memory not read: {listed}")
    parts = [f"Contents of {path}:\n{content.strip()}" for path, content in reversed(found)]
    text = "\n\n".join(parts)
    if len(text) > max_chars:
        raise ProviderSkipped(SkipReason.TOO_LARGE, f"project memory over {max_chars} characters")
    return text or None


def search_folders(cwd: Path) -> list[Path]:
    """The folders searched, nearest first (see the module's rules)."""
    try:
        start = cwd.resolve(strict=True)
    except (OSError, RuntimeError):
        return []
    home = home_folder()
    folders: list[Path] = []
    in_repo = False
    for folder in (start, *start.parents):
        try:
            if not trusted(os.stat(folder)):
                break
        except OSError:
            break
        folders.append(folder)
        if has_git(folder):
            in_repo = True
            break
        if folder == home:
            break
    if not in_repo and (home is None or not start.is_relative_to(home)):
        return folders[:1]
    return folders


def home_folder() -> Path | None:
    home = os.path.expanduser("~")
    if home == "~":
        return None
    try:
        resolved = Path(home).resolve(strict=True)
    except (OSError, RuntimeError):
        return None
    # A home of / would put everything under it.
    return None if resolved.parent == resolved else resolved


def has_git(folder: Path) -> bool:
    try:
        os.lstat(folder / ".git")
    except OSError:
        return False
    return True


def trusted(st: os.stat_result) -> bool:
    """Owned by promptd's own user or root, and writable by no one else."""
    return st.st_uid in (os.geteuid(), 0) and not st.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


def read_member(dfd: int, name: str, max_bytes: int) -> str | None:
    """The file `name` in the folder open as `dfd`: None when absent (or a folder); Refused when it
    is there but must not be read; ProviderSkipped(too_large) over max_bytes."""
    try:
        before = os.lstat(name, dir_fd=dfd)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise Refused("unreadable") from exc
    if stat.S_ISDIR(before.st_mode):
        return None  # a folder of that name is not a memory file, as before
    if stat.S_ISLNK(before.st_mode):
        raise Refused("symlink")
    if not stat.S_ISREG(before.st_mode):
        raise Refused("not a regular file")  # FIFO, socket, device: never opened
    try:
        fd = os.open(name, FILE_FLAGS, dir_fd=dfd)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise Refused("symlink" if exc.errno in (errno.ELOOP, errno.EMLINK) else "unreadable") from exc
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or (st.st_dev, st.st_ino) != (before.st_dev, before.st_ino):
            raise Refused("replaced while being opened")
        if st.st_uid not in (os.geteuid(), 0):
            raise Refused("owned by another user")
        if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
            raise Refused("writable by group or others")
        data = read_capped_fd(fd, max_bytes)
    finally:
        os.close(fd)
    return data.decode("utf-8", "replace")


def read_capped_fd(fd: int, max_bytes: int) -> bytes:
    chunks: list[bytes] = []
    size = 0
    while size <= max_bytes:
        chunk = os.read(fd, min(65536, max_bytes + 1 - size))
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    if size > max_bytes:
        raise ProviderSkipped(SkipReason.TOO_LARGE, f"over {max_bytes} bytes")
    return b"".join(chunks)
