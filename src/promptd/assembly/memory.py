"""Project memory: AGENTS.md and CLAUDE.md from the session's working directory upward.

These files come from repositories and folders promptd does not control, and what they hold goes
into the agent's context. The rules (docs/operations.md, "Project memory"):

- Where: the working directory (its real path), then its parents, up to the repository root (the
  first folder holding `.git`). Without a repository: up to the user's home directory when the
  working directory is under it, else only the working directory itself. The home directory is
  always the ceiling. A folder writable by group or others (such as /tmp), or owned by a user other
  than promptd's own or root, is not searched and ends the walk.
- How: the searched folders are found from the working directory's real path, then opened from
  `/` down one component at a time, each with O_NOFOLLOW | O_DIRECTORY relative to its parent
  (promptd.files.open_real_folders) and judged again on the open folder: a real path holds no
  link, so a link met on the way is a swap, and the turn's memory is skipped (`error`) instead of
  being read from wherever the link leads.
- What: each memory file is opened by the safe-read rule (promptd.files.read_member): a regular
  file (never a symlink, wherever it points; never a FIFO, device, socket or kernel file), owned by
  promptd's own user or root, not writable by group or others, checked on the open file, read
  bounded. Folders are judged by the same owner and permission rule (files.trusted).
- A refused file refuses the whole project memory for that turn: the provider is skipped
  (`error`) and the skip's detail names the file names and reasons (never content, never a full
  path); assembly logs it as `provider_skipped`. Partial memory is never delivered silently.
- Size: a file over 4x the character cap, or memory over the cap, skips it as `too_large`.
"""

from __future__ import annotations

import os
from pathlib import Path

from promptd import files
from promptd.assembly.kinds import SkipReason
from promptd.assembly.model import ProviderSkipped
from promptd.files import Refusal, Refused, trusted

MEMORY_FILES = ("AGENTS.md", "CLAUDE.md")
# The skip detail is logged; the logger replaces values over 200 characters by their length.
MAX_LISTED = 3


def read_project_memory(cwd: Path, max_chars: int) -> str | None:
    """The memory files of the searched folders, the outermost first (the nearest file has the last
    word), each under a `Contents of PATH:` line. None when there are none."""
    found: list[tuple[Path, str]] = []
    refused: list[str] = []
    folders = search_folders(cwd)
    if not folders:
        return None
    # The folders are opened from `/` down, one component at a time, never by their absolute
    # paths: O_NOFOLLOW covers only a path's last component, so a link swapped into a middle one
    # after the search would be followed to another folder, whose files would be delivered under
    # this one's name. The nearest folder is the deepest; each searched folder is one of the
    # descriptors on the way to it.
    try:
        opened = files.open_real_folders(str(folders[0]))
    except Refused as exc:
        raise ProviderSkipped(SkipReason.ERROR, f"project memory not read: the working directory's path changed while being opened ({exc.detail})") from None
    try:
        for depth, folder in enumerate(folders):
            dfd = opened[len(opened) - 1 - depth]
            if not trusted(os.fstat(dfd)):
                break  # changed since the search: nothing from here up
            for name in MEMORY_FILES:
                try:
                    # A UTF-8 character is at most 4 bytes: reading 4x the character cap is always
                    # enough, and a huge file is never read whole.
                    content = read_member(dfd, name, 4 * max_chars)
                except Refused as exc:
                    refused.append(f"{name} ({exc.detail})")
                    continue
                except ProviderSkipped as exc:
                    raise ProviderSkipped(SkipReason.TOO_LARGE, f"project memory over {max_chars} characters") from exc
                if content is not None:
                    found.append((folder / name, content))
    finally:
        for fd in opened:
            os.close(fd)
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


def read_member(dfd: int, name: str, max_bytes: int) -> str | None:
    """The file `name` in the folder open as `dfd`: None when absent (or a folder, which is not a
    memory file); Refused when it is there but must not be read; ProviderSkipped(too_large) over
    max_bytes."""
    try:
        data = files.read_member(dfd, name, max_bytes)
    except Refused as exc:
        if exc.reason in (Refusal.MISSING, Refusal.DIRECTORY):
            return None
        if exc.reason is Refusal.TOO_LARGE:
            raise ProviderSkipped(SkipReason.TOO_LARGE, exc.detail) from None
        raise
    return data.decode("utf-8", "replace")
