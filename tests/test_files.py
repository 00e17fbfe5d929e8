"""The safe-read rule (promptd.files): no symlinks below the root, regular files only, nothing on
a kernel filesystem, checked on the open file, the owner and permission rule, a bounded read; and
the rule for paths a person names, which follows symlinks and keeps the rest."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from promptd import files
from promptd.files import Refusal, Refused

SECRET = "sk-promptd-files-secret-0123456789"
CAP = 64 * 1024
as_root = pytest.mark.skipif(os.geteuid() != 0, reason="giving a file or folder to another user needs root")


def refusal(path, root=None, max_bytes=CAP) -> Refusal:
    with pytest.raises(Refused) as caught:
        files.read_safe(path, max_bytes, root=root)
    return caught.value.reason


def named_refusal(path, max_bytes=CAP) -> Refusal:
    with pytest.raises(Refused) as caught:
        files.read_named(path, max_bytes)
    return caught.value.reason


def finishes(read) -> Refusal:
    """The refusal of read(), run in a thread so that a read that blocks fails the test instead
    of hanging it."""
    outcome: list[object] = []

    def run() -> None:
        try:
            outcome.append(read())
        except Refused as exc:
            outcome.append(exc.reason)

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(60)
    assert not worker.is_alive(), "the read blocked"
    assert isinstance(outcome[0], Refusal), outcome[0]
    return outcome[0]


@pytest.fixture
def repo(tmp_path) -> Path:
    folder = tmp_path / "repo"
    (folder / "docs").mkdir(parents=True)
    return folder


def test_a_regular_file_of_ones_own_is_read_by_relative_and_by_absolute_path(repo):
    (repo / "docs" / "SPRINT.md").write_text("ship it")
    assert files.read_safe("docs/SPRINT.md", CAP, root=repo) == b"ship it"
    assert files.read_safe(repo / "docs" / "SPRINT.md", CAP) == b"ship it"
    assert files.read_named(repo / "docs" / "SPRINT.md") == b"ship it"


def test_a_symlink_at_the_last_component_is_refused_wherever_it_points(repo):
    (repo / "docs" / "real.md").write_text("inside the repo")
    (repo / "docs" / "SPRINT.md").symlink_to("real.md")
    assert refusal("docs/SPRINT.md", repo) is Refusal.SYMLINK
    assert refusal(repo / "docs" / "SPRINT.md") is Refusal.SYMLINK


def test_a_symlink_in_a_middle_folder_is_refused(repo, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "notes.md").write_text("outside")
    (repo / "linked").symlink_to(elsewhere)
    assert refusal("linked/notes.md", repo) is Refusal.SYMLINK
    # By absolute path too, whoever owns the folder: a link below `/` may have come from a clone.
    assert refusal(repo / "linked" / "notes.md") is Refusal.SYMLINK


def test_proc_self_environ_through_a_symlink_is_refused_as_a_symlink(repo, monkeypatch):
    monkeypatch.setenv("PROMPTD_FILES_SECRET", SECRET)
    (repo / "docs" / "SPRINT.md").symlink_to("/proc/self/environ")
    assert refusal("docs/SPRINT.md", repo) is Refusal.SYMLINK
    (repo / "proc").symlink_to("/proc/self")
    assert refusal("proc/environ", repo) is Refusal.SYMLINK


PROC_ENVIRON = f"/proc/{os.getpid()}/environ"
needs_procfs = pytest.mark.skipif(not os.path.exists(PROC_ENVIRON), reason="needs procfs")


@needs_procfs
def test_proc_environ_by_absolute_path_is_refused_as_a_kernel_file_though_it_stats_as_regular(monkeypatch):
    monkeypatch.setenv("PROMPTD_FILES_SECRET", SECRET)
    assert Path(PROC_ENVIRON).is_file()  # the trap: a regular file of promptd's own user
    assert refusal(PROC_ENVIRON) is Refusal.SPECIAL_FILESYSTEM
    assert named_refusal(PROC_ENVIRON) is Refusal.SPECIAL_FILESYSTEM
    assert named_refusal("/proc/self/environ") is Refusal.SPECIAL_FILESYSTEM
    # /proc/self is a link below `/`: refused before the file is reached.
    assert refusal("/proc/self/environ") is Refusal.SYMLINK


@needs_procfs
def test_a_procfs_file_is_known_by_its_filesystem_type_even_where_no_device_is_compared(monkeypatch):
    # A second proc mount (a container's /host/proc) is a superblock of its own: st_dev tells
    # nothing, the filesystem type does.
    monkeypatch.setattr(files, "kernel_devices", frozenset)
    assert refusal(PROC_ENVIRON) is Refusal.SPECIAL_FILESYSTEM


@needs_procfs
def test_a_procfs_file_is_known_by_its_device_where_the_filesystem_type_cannot_be_had(monkeypatch):
    monkeypatch.setattr(files, "fs_type", lambda fd: None)
    assert refusal(PROC_ENVIRON) is Refusal.SPECIAL_FILESYSTEM


@pytest.mark.skipif(not os.path.exists("/proc/self/fd/0"), reason="needs procfs")
def test_proc_self_fd_0_is_refused_before_anything_is_opened():
    assert finishes(lambda: files.read_safe("/proc/self/fd/0", CAP)) is Refusal.SYMLINK


def test_a_fifo_is_refused_without_blocking(repo):
    os.mkfifo(repo / "docs" / "NOTES.md")
    assert finishes(lambda: files.read_safe("docs/NOTES.md", CAP, root=repo)) is Refusal.NOT_REGULAR
    assert finishes(lambda: files.read_named(repo / "docs" / "NOTES.md")) is Refusal.NOT_REGULAR


def test_dev_zero_is_refused_by_both_rules():
    assert refusal("/dev/zero") is Refusal.NOT_REGULAR
    assert named_refusal("/dev/zero") is Refusal.NOT_REGULAR


def test_the_named_rule_follows_a_symlink_to_a_regular_file_but_not_to_a_device(repo):
    (repo / "v3.jinja").write_text("template")
    (repo / "current.jinja").symlink_to("v3.jinja")
    (repo / "zero").symlink_to("/dev/zero")
    assert files.read_named(repo / "current.jinja") == b"template"
    assert named_refusal(repo / "zero") is Refusal.NOT_REGULAR


@pytest.mark.parametrize("mode", [0o664, 0o646, 0o666])
def test_a_file_writable_by_group_or_others_is_refused(repo, mode):
    notes = repo / "docs" / "NOTES.md"
    notes.write_text("anyone could have written this")
    notes.chmod(mode)
    assert refusal("docs/NOTES.md", repo) is Refusal.PERMISSIONS


@as_root
def test_a_hard_link_to_a_file_of_another_user_is_refused_by_the_owner_rule(repo, tmp_path):
    theirs = tmp_path / "theirs.txt"
    theirs.write_text("someone else's secret")
    os.chown(theirs, 65534, 65534)
    os.link(theirs, repo / "docs" / "NOTES.md")
    assert refusal("docs/NOTES.md", repo) is Refusal.OWNER


def test_a_file_over_the_cap_is_refused_without_being_read_whole(repo, monkeypatch):
    huge = repo / "huge.md"
    with open(huge, "wb") as handle:
        handle.truncate(1 << 30)  # sparse: a gigabyte that costs nothing
    read = []
    real_read = os.read
    monkeypatch.setattr(files.os, "read", lambda fd, n: read.append(n) or real_read(fd, n))
    assert refusal("huge.md", repo, max_bytes=1000) is Refusal.TOO_LARGE
    assert sum(read) <= 1001
    (repo / "exact.md").write_bytes(b"x" * 1000)
    assert files.read_safe("exact.md", 1000, root=repo) == b"x" * 1000


def test_a_file_that_grows_past_the_cap_while_read_is_refused_at_one_byte_past_it(repo, monkeypatch):
    (repo / "growing.md").write_bytes(b"x" * 10)
    real_fstat = os.fstat
    # The size fstat showed is under the cap; the read finds more.
    monkeypatch.setattr(files.os, "fstat", lambda fd: os.stat_result((*real_fstat(fd)[:6], 0, *real_fstat(fd)[7:])))
    assert refusal("growing.md", repo, max_bytes=5) is Refusal.TOO_LARGE


@pytest.mark.parametrize("swap, reason", [("symlink", Refusal.SYMLINK), ("other file", Refusal.REPLACED), ("fifo", Refusal.REPLACED)])
def test_a_file_swapped_between_the_lstat_and_the_open_is_refused(repo, tmp_path, monkeypatch, swap, reason):
    notes = repo / "docs" / "NOTES.md"
    notes.write_text("checked")
    elsewhere = tmp_path / "elsewhere.md"
    elsewhere.write_text("SWAPPED IN")
    real_open = os.open

    def swapping_open(path, flags, *args, **kwargs):
        if path == "NOTES.md":
            notes.unlink()
            if swap == "symlink":
                notes.symlink_to(elsewhere)
            elif swap == "fifo":
                os.mkfifo(notes)
            else:
                os.replace(elsewhere, notes)  # another inode, renamed over it
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(files.os, "open", swapping_open)
    assert finishes(lambda: files.read_safe("docs/NOTES.md", CAP, root=repo)) is reason


def test_a_folder_swapped_for_a_symlink_between_the_lstat_and_the_open_is_refused(repo, tmp_path, monkeypatch):
    (repo / "docs" / "NOTES.md").write_text("checked")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "NOTES.md").write_text("SWAPPED IN")
    real_open = os.open

    def swapping_open(path, flags, *args, **kwargs):
        if path == "docs":
            os.rename(repo / "docs", repo / "docs.old")
            (repo / "docs").symlink_to(elsewhere)
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(files.os, "open", swapping_open)
    assert refusal("docs/NOTES.md", repo) is Refusal.SYMLINK


def test_missing_files_folders_and_paths_through_a_file_have_reasons_of_their_own(repo):
    (repo / "docs" / "file.md").write_text("x")
    assert refusal("docs/absent.md", repo) is Refusal.MISSING
    assert refusal("absent/x.md", repo) is Refusal.MISSING
    assert refusal("docs/file.md/x", repo) is Refusal.MISSING
    assert refusal("docs", repo) is Refusal.DIRECTORY
    assert refusal(".", repo) is Refusal.DIRECTORY
    assert named_refusal(repo / "docs") is Refusal.DIRECTORY
    assert named_refusal(repo / "absent") is Refusal.MISSING


@pytest.mark.skipif(
    not (os.path.islink("/lib") and os.path.isfile("/usr/lib/os-release") and not os.path.islink("/usr/lib/os-release")),
    reason="needs a merged /usr (/lib -> usr/lib)",
)
def test_a_link_directly_in_the_root_folder_is_followed_in_an_absolute_path():
    assert files.read_safe("/lib/os-release", CAP) == Path("/usr/lib/os-release").read_bytes()


def test_a_link_in_any_deeper_folder_is_refused_in_an_absolute_path_even_in_a_folder_of_root(tmp_path):
    # Ownership cannot tell a system link from a checkout's when promptd runs as root.
    system = tmp_path / "system"
    (system / "real").mkdir(parents=True)
    (system / "real" / "notes.md").write_text("x")
    (system / "link").symlink_to("real")
    (system / "absolute").symlink_to(system / "real")
    assert refusal(system / "link" / "notes.md") is Refusal.SYMLINK
    assert refusal(system / "absolute" / "notes.md") is Refusal.SYMLINK
    assert files.read_safe(system / "real" / "notes.md", CAP) == b"x"


@pytest.mark.skipif(not os.path.isdir("/proc/self/cwd"), reason="needs procfs")
def test_a_magic_link_of_proc_is_never_followed(tmp_path):
    (tmp_path / "x.md").write_text("x")
    assert refusal(f"/proc/{os.getpid()}/cwd/x.md") is Refusal.SYMLINK


def test_the_root_of_a_relative_path_is_opened_as_the_host_named_it(repo, tmp_path):
    # The session's directory may itself be reached through a link (the host named it); only the
    # part below it is the repository's.
    (repo / "docs" / "NOTES.md").write_text("below the root")
    (tmp_path / "alias").symlink_to(repo)
    assert files.read_safe("docs/NOTES.md", CAP, root=tmp_path / "alias") == b"below the root"


def test_the_owner_and_permission_rule_judges_folders_too(tmp_path):
    assert files.trusted(os.stat(tmp_path))
    tmp_path.chmod(0o777)
    assert not files.trusted(os.stat(tmp_path))


def test_a_refusal_says_the_rule_and_never_the_contents(repo, monkeypatch):
    monkeypatch.setenv("PROMPTD_FILES_SECRET", SECRET)
    (repo / "docs" / "SPRINT.md").symlink_to("/proc/self/environ")
    with pytest.raises(Refused) as caught:
        files.read_safe("docs/SPRINT.md", CAP, root=repo)
    assert SECRET not in str(caught.value) and SECRET not in caught.value.detail
    assert caught.value.reason == "symlink"


def test_the_folders_of_a_real_path_are_opened_from_the_root_down(tmp_path):
    folder = (tmp_path / "a" / "b").resolve()
    folder.mkdir(parents=True)
    opened = files.open_real_folders(str(folder))
    try:
        assert len(opened) == len(folder.parts)
        assert os.path.samestat(os.fstat(opened[0]), os.stat("/"))
        assert os.path.samestat(os.fstat(opened[-1]), os.stat(folder))
        assert os.path.samestat(os.fstat(opened[-2]), os.stat(folder.parent))
    finally:
        for fd in opened:
            os.close(fd)


def test_a_link_anywhere_in_a_real_path_is_refused_as_a_swap_even_one_directly_in_the_root(tmp_path):
    real = (tmp_path / "real").resolve()
    (real / "inner").mkdir(parents=True)
    (tmp_path / "mid").symlink_to(real)
    with pytest.raises(Refused) as caught:
        files.open_real_folders(str(tmp_path.resolve() / "mid" / "inner"))
    assert caught.value.reason is Refusal.SYMLINK
    top_links = [entry for entry in os.scandir("/") if entry.is_symlink() and entry.is_dir()]
    if top_links:  # /bin -> usr/bin on a merged-/usr system: allowed by read_safe, not here
        with pytest.raises(Refused) as caught:
            files.open_real_folders(top_links[0].path)
        assert caught.value.reason is Refusal.SYMLINK


def test_a_middle_folder_swapped_for_a_link_while_a_real_path_is_walked_is_refused(tmp_path, monkeypatch):
    path = (tmp_path / "shared" / "repo" / "sub").resolve()
    path.mkdir(parents=True)
    elsewhere = tmp_path / "elsewhere" / "sub"
    elsewhere.mkdir(parents=True)
    real_lstat = os.lstat

    def swapping_lstat(name, *args, **kwargs):
        if name == "repo" and not (tmp_path / "shared" / "repo.old").exists():
            os.rename(path.parent, tmp_path / "shared" / "repo.old")
            (tmp_path / "shared" / "repo").symlink_to(tmp_path / "elsewhere")
        return real_lstat(name, *args, **kwargs)

    monkeypatch.setattr(files.os, "lstat", swapping_lstat)
    with pytest.raises(Refused) as caught:
        files.open_real_folders(str(path))
    assert caught.value.reason is Refusal.SYMLINK
