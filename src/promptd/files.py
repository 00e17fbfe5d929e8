"""Safe reads: the one rule for opening a file whose path a host, a repository, a configuration or
a person names (docs/security.md, "Safe reads").

Base layer: imports only the standard library, so every area (assembly, prompt, config, the
commands) can use it. It knows nothing of skip reasons, error codes or exit statuses: a refusal is
a `Refused` carrying a short machine reason, and each caller says what that means to its own reader.

Two rules:

- `read_safe` (and `open_safe`, `read_member`), for paths a host or a repository names (file
  providers, project memory) and for the vault key file. No symlinks in the part of the path below
  its root: every component is checked with lstat and each folder is opened with O_NOFOLLOW |
  O_DIRECTORY relative to its parent's descriptor, so a component swapped for a link between the
  check and the open is refused, not followed. Regular files only (no FIFO, device or socket, and
  nothing on a kernel filesystem: /proc/self/environ stat()s as a regular file of promptd's own
  user), opened O_NONBLOCK | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC; an fstat that shows the inode the
  lstat saw; owned by promptd's effective user or root and writable by no one else; a bounded read.
- `read_named`, for a path a person typed on the command line or a configuration names, where a
  symlink is the author's own choice (`current.jinja -> v3.jinja`): symlinks are followed, and the
  rest holds (regular files only, not on a kernel filesystem, non-blocking, fstat-checked, bounded).
  A FIFO or /dev/zero can neither hang a command nor exhaust its memory.

Absolute paths (a host may register one) are walked from `/` under the first rule, with one
allowance: a component directly in `/` may be a symlink, when `/` is owned by root and writable by
no one else (`/bin -> usr/bin`, `/lib`, Fedora Atomic's `/home -> var/home`, macOS's `/tmp`, `/var`
and `/etc -> private/...`). Why no deeper: ownership cannot tell the system's links from a
repository's. A link in a folder of promptd's own user may have come from a clone or an archive,
and when promptd runs as root (as in many containers) every folder it made is root's, so "only
root could have put it there" would admit a checkout's `docs -> /root/.ssh`. Only root writes in
`/`, and what root puts there is the system's layout. The link's target is walked again under the
same rule, by its text (readlink), never by the kernel, so /proc's magic links (`/proc/self/fd/N`,
`/proc/self/cwd`) lead only where their text leads, and links deeper down (`/var/run`) are refused:
name `/run` instead. The final component is never a symlink. A relative path is walked from its
root (the session's working directory, which the host named and which is opened as given) with no
symlink allowed at all.
"""

from __future__ import annotations

import errno
import os
import stat
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from enum import StrEnum
from functools import cache
from typing import Any, NamedTuple

FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
# The root a path is walked from is opened as it was given (its own symlinks are its namer's).
ROOT_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
NAMED_FLAGS = os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
# Links followed in one absolute path before it is refused: Linux's own limit (MAXSYMLINKS).
MAX_LINKS = 40
# The cap of a file a person or a configuration names (a template, a context, a config file, a
# sealed template): 16 MiB, the largest message a host may send by default (max_message_bytes),
# so nothing the command line hands the methods is larger than what the wire would accept.
MAX_NAMED_BYTES = 16 << 20
CHUNK = 1 << 16


class Refusal(StrEnum):
    MISSING = "missing"  # no such file (or a component of the path is not a folder)
    DIRECTORY = "directory"  # the path names a folder
    SYMLINK = "symlink"  # a symlink where the rule allows none (or too many links)
    NOT_REGULAR = "not_regular"  # a FIFO, device or socket
    SPECIAL_FILESYSTEM = "special_filesystem"  # on procfs, sysfs, devfs or another kernel filesystem
    OWNER = "owner"  # owned by a user other than promptd's own or root
    PERMISSIONS = "permissions"  # writable by group or others
    REPLACED = "replaced"  # not the file that was checked when it was opened
    TOO_LARGE = "too_large"  # over the caller's cap
    UNREADABLE = "unreadable"  # the system refused to open or read it (permissions, I/O)


# What a person reads for each reason. Project memory lists these in its skip detail, so they are
# short and never name more than the rule.
DETAILS = {
    Refusal.MISSING: "no such file",
    Refusal.DIRECTORY: "a folder, not a file",
    Refusal.SYMLINK: "symlink",
    Refusal.NOT_REGULAR: "not a regular file",
    Refusal.SPECIAL_FILESYSTEM: "on a kernel filesystem (procfs, sysfs, devfs)",
    Refusal.OWNER: "owned by another user",
    Refusal.PERMISSIONS: "writable by group or others",
    Refusal.REPLACED: "replaced while being opened",
    Refusal.TOO_LARGE: "too large",
    Refusal.UNREADABLE: "unreadable",
}


class Refused(Exception):
    """A file that is not read. `reason` is the machine reason, `detail` a short phrase naming the
    rule; neither ever holds the file's contents."""

    def __init__(self, reason: Refusal, detail: str | None = None) -> None:
        self.reason = reason
        self.detail = detail or DETAILS[reason]
        super().__init__(self.detail if self.detail == reason.value else f"{self.detail} ({reason.value})")


class Opened(NamedTuple):
    """An open, checked file: its descriptor and its fstat."""

    fd: int
    stat: os.stat_result


# ---- the rule for paths a host or a repository names -------------------------------------------


def read_safe(path: str | os.PathLike[str], max_bytes: int, *, root: str | os.PathLike[str] | None = None) -> bytes:
    """The bytes of `path` under the safe-read rule (module docstring): absolute, walked from `/`;
    relative, walked from `root`. Raises Refused."""
    with open_safe(path, root=root) as opened:
        return read_fd(opened, max_bytes)


@contextmanager
def open_safe(path: str | os.PathLike[str], *, root: str | os.PathLike[str] | None = None) -> Iterator[Opened]:
    """`path` open and checked under the safe-read rule, closed on exit (for a caller with rules
    of its own on top, such as the vault key file's mode)."""
    folder, name = _walk(os.fspath(path), None if root is None else os.fspath(root))
    try:
        opened = open_member(folder, name)
    finally:
        os.close(folder)
    try:
        yield opened
    finally:
        os.close(opened.fd)


def read_member(dir_fd: int, name: str, max_bytes: int) -> bytes:
    """The file `name` (one component) in the folder open as `dir_fd`, under the rule."""
    opened = open_member(dir_fd, name)
    try:
        return read_fd(opened, max_bytes)
    finally:
        os.close(opened.fd)


def open_member(dir_fd: int, name: str) -> Opened:
    """Opens `name` in the folder `dir_fd`: lstat, open with O_NOFOLLOW | O_NONBLOCK, fstat; the
    caller closes the descriptor. Nothing is read here."""
    if name in (".", ".."):
        raise Refused(Refusal.DIRECTORY)
    before = _lstat(dir_fd, name)
    if stat.S_ISDIR(before.st_mode):
        raise Refused(Refusal.DIRECTORY)
    if stat.S_ISLNK(before.st_mode):
        raise Refused(Refusal.SYMLINK)
    if not stat.S_ISREG(before.st_mode):
        raise Refused(Refusal.NOT_REGULAR)  # FIFO, socket, device: never opened
    try:
        fd = os.open(name, FILE_FLAGS, dir_fd=dir_fd)
    except OSError as exc:
        raise Refused(_open_refusal(exc)) from None
    try:
        after = os.fstat(fd)
        check_same(before, after)
        check_file(fd, after)
    except BaseException:
        os.close(fd)
        raise
    return Opened(fd, after)


def check_file(fd: int, st: os.stat_result) -> None:
    """The checks on the open file itself: not on a kernel filesystem, then the owner and
    permission rule."""
    if on_kernel_filesystem(fd, st):
        raise Refused(Refusal.SPECIAL_FILESYSTEM)
    if st.st_uid not in (os.geteuid(), 0):
        # A hard link to another user's file lands here too: a link shares its target's owner.
        raise Refused(Refusal.OWNER)
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise Refused(Refusal.PERMISSIONS)


def trusted(st: os.stat_result) -> bool:
    """Owned by promptd's own user or root, and writable by no one else: the owner and
    permission rule, for a folder as for a file."""
    return st.st_uid in (os.geteuid(), 0) and not st.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


def open_folder(path: str | os.PathLike[str], *, root: str | os.PathLike[str] | None = None, create: int | None = None) -> int:
    """The folder `path` open (O_DIRECTORY | O_NOFOLLOW), walked as the safe-read rule walks a
    file's path: absolute from `/` (a link only directly in a root-owned `/`), relative from
    `root` (no link at all), every folder opened relative to its parent's descriptor and the
    folder itself never a link. With `create`, a missing folder is made with that mode and the
    missing ones on the way as `mkdir -p` makes them (0777 less the umask), each relative to its
    parent's descriptor, so no link can steer where they are made. The caller closes the
    descriptor; raises Refused."""
    folder, name = _walk(os.fspath(path), None if root is None else os.fspath(root), None if create is None else 0o777)
    try:
        before = _lstat_or_make(folder, name, create)
        if stat.S_ISLNK(before.st_mode):
            raise Refused(Refusal.SYMLINK)
        return _open_folder(folder, name, before)
    finally:
        os.close(folder)


def _lstat_or_make(folder: int, part: str, create: int | None) -> os.stat_result:
    try:
        return _lstat(folder, part)
    except Refused as exc:
        if create is None or exc.reason is not Refusal.MISSING:
            raise
    try:
        os.mkdir(part, create, dir_fd=folder)
    except FileExistsError:
        pass  # made meanwhile by another thread or process: judged as any folder is
    except OSError:
        raise Refused(Refusal.UNREADABLE) from None
    return _lstat(folder, part)


def _walk(path: str, root: str | None, create: int | None = None) -> tuple[int, str]:
    """(descriptor of the folder holding the final component, that component's name). The caller
    closes the descriptor. With `create`, missing folders on the way are made (open_folder)."""
    absolute = path.startswith("/")
    if not absolute and root is None:
        raise ValueError("a relative path needs a root to be walked from")
    parts = _parts(path)
    if not parts:
        raise Refused(Refusal.DIRECTORY)
    name = parts.pop()
    try:
        folder = os.open("/" if absolute else (root or ""), ROOT_FLAGS)
    except OSError as exc:
        raise Refused(Refusal.MISSING if exc.errno in (errno.ENOENT, errno.ENOTDIR) else Refusal.UNREADABLE) from None
    links = 0
    try:
        top = os.fstat(folder)
        while parts:
            part = parts.pop(0)
            before = _lstat_or_make(folder, part, create)
            if stat.S_ISLNK(before.st_mode):
                if not absolute or not _may_hold_links(os.fstat(folder), top):
                    raise Refused(Refusal.SYMLINK)
                links += 1
                if links > MAX_LINKS:
                    raise Refused(Refusal.SYMLINK)
                folder = _follow(folder, part, parts)
                continue
            folder = _enter(folder, part, before)
    except BaseException:
        os.close(folder)
        raise
    return folder, name


def _parts(path: str) -> list[str]:
    return [part for part in path.split("/") if part not in ("", ".")]


def _lstat(dir_fd: int, name: str) -> os.stat_result:
    try:
        return os.lstat(name, dir_fd=dir_fd)
    except (FileNotFoundError, NotADirectoryError):
        raise Refused(Refusal.MISSING) from None
    except OSError:
        raise Refused(Refusal.UNREADABLE) from None


def _enter(folder: int, part: str, before: os.stat_result) -> int:
    """Opens the folder `part` of `folder` (closing `folder`) without following a link."""
    inner = _open_folder(folder, part, before)
    os.close(folder)
    return inner


def _open_folder(folder: int, part: str, before: os.stat_result) -> int:
    """Opens the folder `part` of `folder` without following a link: O_NOFOLLOW | O_DIRECTORY
    relative to `folder`, then an fstat that must show the inode `before` (its lstat) saw."""
    if not stat.S_ISDIR(before.st_mode):
        raise Refused(Refusal.MISSING)  # a file in the middle of a path: there is no such file
    try:
        inner = os.open(part, DIR_FLAGS, dir_fd=folder)
    except OSError as exc:
        if exc.errno not in (errno.ENOTDIR, errno.ELOOP):
            raise Refused(_open_refusal(exc)) from None
        # O_DIRECTORY | O_NOFOLLOW on a link says ENOTDIR: it was a folder at the lstat, so it
        # has been replaced since, by a link or by something else.
        now = _lstat(folder, part)
        raise Refused(Refusal.SYMLINK if stat.S_ISLNK(now.st_mode) else Refusal.REPLACED) from None
    after = os.fstat(inner)
    if (after.st_dev, after.st_ino) != (before.st_dev, before.st_ino):
        os.close(inner)
        raise Refused(Refusal.REPLACED)
    return inner


def open_real_folders(path: str) -> list[int]:
    """Descriptors of `/` and of every folder of `path`, outermost first, for a path that is
    already a real path (os.path.realpath, Path.resolve: absolute, no link, no `..`). Each folder
    is opened O_NOFOLLOW | O_DIRECTORY relative to its parent's descriptor and checked by fstat
    against its lstat, so a component swapped for a link after the path was resolved is never
    followed: a real path holds no link, so any link met is a swap and refused (symlink), as is
    a folder replaced by another (replaced). The caller closes every descriptor."""
    if not path.startswith("/"):
        raise ValueError("a real path is absolute")
    parts = _parts(path)
    if ".." in parts:
        raise ValueError("a real path has no '..'")
    try:
        top = os.open("/", ROOT_FLAGS)
    except OSError:
        raise Refused(Refusal.UNREADABLE) from None
    opened = [top]
    try:
        for part in parts:
            before = _lstat(opened[-1], part)
            if stat.S_ISLNK(before.st_mode):
                raise Refused(Refusal.SYMLINK)
            opened.append(_open_folder(opened[-1], part, before))
    except BaseException:
        for fd in opened:
            os.close(fd)
        raise
    return opened


def _may_hold_links(folder: os.stat_result, top: os.stat_result) -> bool:
    """A link is followed only directly in `/`, and only while `/` is root's alone (the module
    docstring says why no deeper)."""
    is_top = (folder.st_dev, folder.st_ino) == (top.st_dev, top.st_ino)
    return is_top and folder.st_uid == 0 and not folder.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


def _follow(folder: int, part: str, rest: list[str]) -> int:
    """Puts the link `part`'s target in front of `rest` and returns the folder to walk it from
    (`/` for an absolute target), closing `folder` if it changes."""
    try:
        target = os.readlink(part, dir_fd=folder)
    except OSError:
        raise Refused(Refusal.REPLACED) from None  # it was a link at the lstat
    rest[:0] = _parts(target)
    if not target.startswith("/"):
        return folder
    try:
        top = os.open("/", ROOT_FLAGS)
    except OSError:
        raise Refused(Refusal.UNREADABLE) from None
    os.close(folder)
    return top


def _open_refusal(exc: OSError) -> Refusal:
    if exc.errno in (errno.ENOENT, errno.ENOTDIR):
        return Refusal.MISSING  # removed since the lstat
    if exc.errno in (errno.ELOOP, errno.EMLINK):
        return Refusal.SYMLINK  # O_NOFOLLOW met a link swapped in since the lstat
    if exc.errno == errno.ENXIO:
        return Refusal.NOT_REGULAR  # a socket swapped in
    return Refusal.UNREADABLE


# ---- the rule for paths a person or a configuration names --------------------------------------


def read_named(path: str | os.PathLike[str], max_bytes: int = MAX_NAMED_BYTES) -> bytes:
    """The bytes of a file a person or a configuration names: symlinks followed (the namer's own),
    otherwise the same checks (regular file, not on a kernel filesystem, not replaced between the
    stat and the open, bounded). No owner rule: a user may read a colleague's template. Raises
    Refused."""
    try:
        before = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        raise Refused(Refusal.MISSING) from None
    except OSError as exc:
        raise Refused(Refusal.SYMLINK if exc.errno == errno.ELOOP else Refusal.UNREADABLE) from None
    if stat.S_ISDIR(before.st_mode):
        raise Refused(Refusal.DIRECTORY)
    if not stat.S_ISREG(before.st_mode):
        raise Refused(Refusal.NOT_REGULAR)  # never opened: opening a device can act on it
    try:
        fd = os.open(path, NAMED_FLAGS)
    except OSError as exc:
        raise Refused(_open_refusal(exc)) from None
    try:
        after = os.fstat(fd)
        check_same(before, after)
        if on_kernel_filesystem(fd, after):
            raise Refused(Refusal.SPECIAL_FILESYSTEM)
        return read_fd(Opened(fd, after), max_bytes)
    finally:
        os.close(fd)


# ---- reading -------------------------------------------------------------------------------------


def check_same(before: os.stat_result, after: os.stat_result) -> None:
    """The file opened is the one checked before the open, and still a regular file: a swap
    between the two is refused, never read."""
    if (after.st_dev, after.st_ino) != (before.st_dev, before.st_ino) or not stat.S_ISREG(after.st_mode):
        raise Refused(Refusal.REPLACED)


def read_fd(opened: Opened, max_bytes: int) -> bytes:
    """At most `max_bytes` of an open file; Refused(too_large) past them. A file whose size is
    already over the cap is not read at all, and one that grows while it is read is never read
    past the cap (one byte more tells)."""
    if opened.stat.st_size > max_bytes:
        raise Refused(Refusal.TOO_LARGE, f"over {max_bytes} bytes")
    chunks: list[bytes] = []
    size = 0
    while size <= max_bytes:
        try:
            chunk = os.read(opened.fd, min(CHUNK, max_bytes + 1 - size))
        except OSError:
            raise Refused(Refusal.UNREADABLE) from None
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    if size > max_bytes:
        raise Refused(Refusal.TOO_LARGE, f"over {max_bytes} bytes")
    return b"".join(chunks)


# ---- kernel filesystems --------------------------------------------------------------------------

# Filesystems whose "files" are kernel interfaces, by statfs f_type (linux/magic.h): proc, sysfs,
# devpts, debugfs, tracefs, securityfs, cgroup, cgroup2, bpf, configfs, efivarfs, pstore, mqueue.
# Their files stat() as regular files of whoever asks (/proc/self/environ: promptd's own, mode
# 0400), hold the process's secrets or the machine's, and some block on read.
KERNEL_FS_TYPES = frozenset(
    {
        0x9FA0,
        0x62656572,
        0x1CD1,
        0x64626720,
        0x74726163,
        0x73636673,
        0x27E0EB,
        0x63677270,
        0xCAFE4A11,
        0x62656570,
        0xDE5E81E4,
        0x6165676C,
        0x19800202,
    }
)


def on_kernel_filesystem(fd: int, st: os.stat_result) -> bool:
    """Whether the open file is on procfs, sysfs, devfs or another kernel filesystem. Two tests:
    the device of /proc, /sys and /dev (portable; catches what is mounted there), and on Linux the
    filesystem type of the file itself (catches a second mount elsewhere, such as a container's
    /host/proc, which is a superblock of its own)."""
    return st.st_dev in kernel_devices() or fs_type(fd) in KERNEL_FS_TYPES


def kernel_devices() -> frozenset[int]:
    """The devices of /proc, /sys and /dev, each only when it is a mount point: in a chroot
    without /proc, that folder is on the root filesystem, which is no kernel filesystem."""
    try:
        top = os.stat("/").st_dev
    except OSError:
        return frozenset()
    devices = set()
    for folder in ("/proc", "/sys", "/dev"):
        try:
            device = os.stat(folder).st_dev
        except OSError:
            continue
        if device != top:
            devices.add(device)
    return frozenset(devices)


def fs_type(fd: int) -> int | None:
    """The statfs f_type of an open file (Linux); None elsewhere or when it cannot be had."""
    found = _statfs()
    if found is None:
        return None
    call, layout = found
    buffer = layout()
    if call(fd, buffer) != 0:
        return None
    return int(buffer.f_type)


@cache
def _statfs() -> tuple[Callable[[int, Any], int], type[Any]] | None:
    """libc's fstatfs and a buffer type for its result. ctypes is imported on first use, in the
    worker thread of the first read: never at start-up."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes
    import platform

    try:
        call = ctypes.CDLL(None, use_errno=True).fstatfs
    except (OSError, AttributeError):
        return None

    class StatFs(ctypes.Structure):
        # f_type is struct statfs's first field: a long on every Linux ABI but s390x, where it is
        # an unsigned int. The padding is larger than the whole struct on every ABI (120 bytes on
        # the 64-bit ones).
        _fields_ = [("f_type", ctypes.c_uint if platform.machine().startswith("s390") else ctypes.c_long), ("rest", ctypes.c_byte * 256)]

    call.argtypes = [ctypes.c_int, ctypes.POINTER(StatFs)]
    call.restype = ctypes.c_int
    return call, StatFs
