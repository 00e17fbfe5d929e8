"""The spill store: the full text of a truncated fragment, kept in a private file.

Per-session folders (named by a hash of the session id, so an id can never steer a path), mode
0700 folders and 0600 files, created without following symbolic links, size caps per file, per
session and in total, and a retention period enforced by sweeping.

The sweep and the caps see only what promptd wrote: a folder named as `session_folder` names
one, holding files named as `save` names them and made as `save` makes them (a regular file of
promptd's user, mode 0600, one link), in a root and folders that are promptd's user's alone. A
name alone proves nothing: anyone who can put a file there can name it so, and a hard link to
someone's file carries that file's owner and mode (but a second link). `reminders.spill_dir` may
point anywhere (`initialize` can move it), so everything else there is left alone, counted, and
never opened, measured or deleted.

The root is opened by walking its path one component at a time without following links
(promptd.files.open_folder: a link only directly in a root-owned `/`, such as `/home ->
var/home`), and everything below it relative to its descriptor: a link anywhere in
`reminders.spill_dir`'s path cannot move the spill or the sweep to another folder.
"""

from __future__ import annotations

import errno
import hashlib
import os
import re
import secrets
import stat
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import NamedTuple

from promptd import files
from promptd.config import RemindersConfig
from promptd.text import readable_utf8

# The names promptd gives: a session folder is the first 32 hex digits of a sha256
# (session_folder), a file `{seconds}-{12 hex digits}.txt` (save). Nothing else is promptd's.
FOLDER_NAME = re.compile(r"[0-9a-f]{32}")
FILE_NAME = re.compile(r"[0-9]+-[0-9a-f]{12}\.txt")
# The mode save gives its files (and their folders).
FILE_MODE = 0o600
FOLDER_MODE = 0o700


class SpillFailed(Exception):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class Spilled(NamedTuple):
    path: str
    retention_hours: float


class Swept(NamedTuple):
    """What one sweep did: files removed, and entries left alone by reason (counts only: their
    names are paths promptd did not choose)."""

    removed: int
    left: Counter[str]


def default_root() -> Path:
    state = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return Path(state) / "promptd" / "spill"


class SpillStore:
    def __init__(self, config: RemindersConfig, clock: Callable[[], float] = time.time) -> None:
        self.root = Path(config.spill_dir) if config.spill_dir else default_root()
        self.retention_s = config.spill_retention_hours * 3600
        self.retention_hours = config.spill_retention_hours
        self.max_file = config.spill_max_file_bytes
        self.max_session = config.spill_max_session_bytes
        self.max_total = config.spill_max_total_bytes
        self._clock = clock

    def save(self, session_id: str, text: str) -> Spilled:
        data = readable_utf8(text)
        if len(data) > self.max_file:
            raise SpillFailed("file_cap")
        folder = self.root / session_folder(session_id)
        root_fd = self._open_root(create=True)
        try:
            # The root and the session folder must be ours alone: a folder others can write to
            # could be emptied, swapped or read by them.
            check_private(root_fd)
            created = False
            try:
                os.mkdir(folder.name, FOLDER_MODE, dir_fd=root_fd)
                created = True
            except FileExistsError:
                pass
            dir_fd = os.open(folder.name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=root_fd)
        except OSError as exc:
            raise SpillFailed(reason_for(exc)) from exc
        finally:
            os.close(root_fd)
        try:
            try:
                check_private(dir_fd)
                if folder_bytes(dir_fd) + len(data) > self.max_session:
                    raise SpillFailed("session_cap")
                if self.total_bytes() + len(data) > self.max_total:
                    raise SpillFailed("total_cap")
            except OSError as exc:
                # A folder made unreadable (or swapped) while it is measured: a spill failure
                # like any other, never an internal error.
                raise SpillFailed(reason_for(exc)) from exc
            name = f"{int(self._clock())}-{secrets.token_hex(6)}.txt"
            try:
                fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, FILE_MODE, dir_fd=dir_fd)
            except OSError as exc:
                raise SpillFailed(reason_for(exc)) from exc
            try:
                os.fchmod(fd, FILE_MODE)
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view) :]
            except OSError as exc:
                os.close(fd)
                fd = -1
                try:
                    os.unlink(name, dir_fd=dir_fd)
                except OSError:
                    pass  # the folder turned read-only under us; the sweep removes it later
                raise SpillFailed(reason_for(exc)) from exc
            finally:
                if fd >= 0:
                    os.close(fd)
        except SpillFailed:
            if created:  # a failed spill leaves no empty folder behind
                os.close(dir_fd)
                dir_fd = -1
                self._remove_if_empty(folder.name)
            raise
        finally:
            if dir_fd >= 0:
                os.close(dir_fd)
        return Spilled(str(folder / name), self.retention_hours)

    def _open_root(self, create: bool = False) -> int:
        """The root's descriptor, its path walked without following links (module docstring);
        with `create`, the folders missing on the way are made (mode 0700). Raises SpillFailed."""
        try:
            return files.open_folder(self.root, root=".", create=FOLDER_MODE if create else None)
        except files.Refused as exc:
            raise SpillFailed(REFUSALS.get(exc.reason, "io_error")) from None

    def discard(self, spilled: Spilled) -> None:
        """Removes a file nothing refers to, and its session folder if that leaves it empty; both
        relative to the root's descriptor, never by path."""
        path = Path(spilled.path)
        try:
            root_fd = self._open_root()
        except SpillFailed:
            return
        try:
            try:
                folder_fd = os.open(path.parent.name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=root_fd)
            except OSError:
                return
            try:
                os.unlink(path.name, dir_fd=folder_fd)
            except OSError:
                pass
            finally:
                os.close(folder_fd)
        finally:
            os.close(root_fd)
        self._remove_if_empty(path.parent.name)

    def _remove_if_empty(self, name: str) -> None:
        # rmdir relative to the root opened without following links: only an empty folder goes.
        try:
            root_fd = self._open_root()
        except SpillFailed:
            return
        try:
            os.rmdir(name, dir_fd=root_fd)
        except OSError:
            pass
        finally:
            os.close(root_fd)

    def total_bytes(self) -> int:
        """The bytes of promptd's own spill files under the root (nothing else there counts)."""
        total = 0
        for _, _, folder_fd in self._session_folders(Counter()):
            try:
                total += folder_bytes(folder_fd)
            except OSError:
                continue  # a folder this process cannot read holds none of its files
            finally:
                os.close(folder_fd)
        return total

    def sweep(self) -> Swept:
        """Removes promptd's spill files past retention, and its session folders left empty.

        Only promptd's names, in a root and folders that are promptd's user's alone (see the module
        docstring); every step is relative to a descriptor opened without following links, so a
        folder swapped for a symbolic link while the sweep runs cannot steer it outside the root."""
        cutoff = self._clock() - self.retention_s
        removed = 0
        left: Counter[str] = Counter()
        for root_fd, name, folder_fd in self._session_folders(left):
            try:
                stale = [entry for entry, info in spill_files(folder_fd, left) if info.st_mtime < cutoff]
                for entry in stale:
                    try:
                        os.unlink(entry, dir_fd=folder_fd)
                        removed += 1
                    except OSError:
                        continue
            except OSError:
                left["unreadable"] += 1
                continue
            finally:
                os.close(folder_fd)
            if stale:
                try:
                    os.rmdir(name, dir_fd=root_fd)  # only succeeds when empty
                except OSError:
                    pass
        return Swept(removed, left)

    def _session_folders(self, left: Counter[str]) -> Iterator[tuple[int, str, int]]:
        """(root descriptor, name, descriptor) of each of promptd's session folders, opened with
        O_NOFOLLOW relative to the root; the caller closes each folder descriptor, the root stays
        open while the caller handles the folder. None at all when the root is not promptd's
        user's alone: whoever else can write there decides what its folders are. What is left
        alone is counted in `left` by reason."""
        try:
            root_fd = self._open_root()
        except SpillFailed as exc:
            if exc.reason == "symlink":
                left["link"] += 1  # a link in the root's path: nothing there is swept
            return
        try:
            if not is_private(os.fstat(root_fd)):
                left["unsafe_root"] += 1
                return
            with os.scandir(root_fd) as entries:
                names = [e.name for e in entries if is_session_folder(e, left)]
            for name in names:
                try:
                    folder_fd = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=root_fd)
                except OSError:
                    left["unreadable"] += 1  # swapped for a link, or removed, since it was listed
                    continue
                if not is_private(os.fstat(folder_fd)):
                    os.close(folder_fd)
                    left["unsafe_folder"] += 1
                    continue
                yield root_fd, name, folder_fd
        finally:
            os.close(root_fd)


def is_private(info: os.stat_result) -> bool:
    """Owned by promptd's user and writable by nobody else: nobody else put anything there."""
    return info.st_uid == os.getuid() and not info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


def kind_of(entry: os.DirEntry[str]) -> str:
    """ "link", "folder", "file" or "other", never following a link."""
    if entry.is_symlink():
        return "link"
    if entry.is_dir(follow_symlinks=False):
        return "folder"
    return "file" if entry.is_file(follow_symlinks=False) else "other"


def is_session_folder(entry: os.DirEntry[str], left: Counter[str]) -> bool:
    """A real folder named as session_folder names one; anything else is counted in `left`."""
    kind = kind_of(entry)
    if kind == "folder" and FOLDER_NAME.fullmatch(entry.name):
        return True
    left["link" if kind == "link" else "foreign"] += 1
    return False


def spill_files(folder_fd: int, left: Counter[str]) -> Iterator[tuple[str, os.stat_result]]:
    """(name, lstat) of each file in a session folder that save wrote: named as save names them
    and made as save makes them (is_spill_file). Anything else is counted in `left`."""
    with os.scandir(folder_fd) as entries:
        for entry in entries:
            kind = kind_of(entry)
            if kind != "file" or not FILE_NAME.fullmatch(entry.name):
                left["link" if kind == "link" else "foreign"] += 1
                continue
            try:
                info = entry.stat(follow_symlinks=False)
            except FileNotFoundError:
                continue  # removed by another sweep or a discard meanwhile
            if not is_spill_file(info):
                left["foreign"] += 1
                continue
            yield entry.name, info


def is_spill_file(info: os.stat_result) -> bool:
    """Made as save makes its files: a regular file of promptd's user, mode 0600, with one link.
    A file of the user's own with another mode was not written here, and a hard link (two links
    or more) shares its inode with a file elsewhere, which removing or counting it would reach."""
    return stat.S_ISREG(info.st_mode) and info.st_uid == os.getuid() and stat.S_IMODE(info.st_mode) == FILE_MODE and info.st_nlink == 1


def check_private(fd: int) -> None:
    if not is_private(os.fstat(fd)):
        raise SpillFailed("unsafe_folder")


def session_folder(session_id: str) -> str:
    # surrogatepass: two ids that differ only in a lone surrogate must not share a folder.
    return hashlib.sha256(session_id.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def folder_bytes(dir_fd: int) -> int:
    """The bytes of the spill files in a session folder (what else is there is not promptd's to
    count against its caps). A file the sweep (another thread) removes while counted is skipped."""
    return sum(info.st_size for _, info in spill_files(dir_fd, Counter()))


# How a refused walk to the root is reported as a spill failure.
REFUSALS = {
    files.Refusal.SYMLINK: "symlink",
    files.Refusal.MISSING: "unwritable",  # a file where a folder of the path should be
    files.Refusal.DIRECTORY: "unwritable",
    files.Refusal.UNREADABLE: "unwritable",
    files.Refusal.REPLACED: "symlink",
}


def reason_for(exc: OSError) -> str:
    if exc.errno == errno.ELOOP or exc.errno == errno.ENOTDIR:
        return "symlink"
    if exc.errno == errno.ENOSPC:
        return "disk_full"
    if exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
        return "unwritable"
    return "io_error"
