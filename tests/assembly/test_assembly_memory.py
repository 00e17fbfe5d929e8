"""Project memory (AGENTS.md / CLAUDE.md): only regular files of promptd's own user or root, never
through a symlink, never writable by others, in a bounded walk; refusals are reported, not read."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest
from support.projects import MEMORY_SECRET as SECRET
from support.projects import assemble, repo_at

from promptd.assembly.kinds import SkipReason
from promptd.assembly.memory import read_project_memory, search_folders
from promptd.assembly.model import ProviderSkipped


@pytest.fixture
def home(tmp_path, monkeypatch):
    """A home directory of the test's own, so the real one is never searched."""
    folder = tmp_path / "home"
    folder.mkdir()
    monkeypatch.setenv("HOME", str(folder))
    return folder


def refused(cwd: Path) -> str:
    with pytest.raises(ProviderSkipped) as caught:
        read_project_memory(cwd, 20_000)
    assert caught.value.reason is SkipReason.ERROR
    return caught.value.detail or ""


def test_a_normal_file_is_read(tmp_path, home):
    repo = repo_at(tmp_path / "repo")
    (repo / "AGENTS.md").write_text("be brief\n")
    text = read_project_memory(repo, 20_000)
    assert text == f"Contents of {repo.resolve() / 'AGENTS.md'}:\nbe brief"


def test_a_symlink_to_proc_self_environ_is_refused_and_nothing_of_the_environment_is_read(tmp_path, home, monkeypatch):
    monkeypatch.setenv("PROMPTD_TEST_SECRET", SECRET)
    repo = repo_at(tmp_path / "repo")
    (repo / "AGENTS.md").symlink_to("/proc/self/environ")
    (repo / "CLAUDE.md").write_text("fine")
    detail = refused(repo)
    assert detail == "project memory not read: AGENTS.md (symlink)"
    assert SECRET not in detail


def test_a_symlink_out_of_the_folder_is_refused(tmp_path, home):
    outside = tmp_path / "outside.md"
    outside.write_text("OUTSIDE")
    repo = repo_at(tmp_path / "repo")
    (repo / "CLAUDE.md").symlink_to(outside)
    assert refused(repo) == "project memory not read: CLAUDE.md (symlink)"


def test_a_symlink_inside_the_folder_is_refused_too(tmp_path, home):
    repo = repo_at(tmp_path / "repo")
    (repo / "notes.md").write_text("notes")
    (repo / "AGENTS.md").symlink_to(repo / "notes.md")
    assert "AGENTS.md (symlink)" in refused(repo)


def test_a_fifo_is_refused_without_blocking(tmp_path, home):
    repo = repo_at(tmp_path / "repo")
    os.mkfifo(repo / "AGENTS.md")
    outcome: list[object] = []

    def read() -> None:
        try:
            outcome.append(read_project_memory(repo, 20_000))
        except ProviderSkipped as exc:
            outcome.append(exc)

    worker = threading.Thread(target=read, daemon=True)
    worker.start()
    worker.join(60)
    assert not worker.is_alive(), "reading project memory blocked on a FIFO"
    assert isinstance(outcome[0], ProviderSkipped) and outcome[0].detail == "project memory not read: AGENTS.md (not a regular file)"


@pytest.mark.parametrize("mode", [0o664, 0o646, 0o666])
def test_a_group_or_world_writable_file_is_refused(tmp_path, home, mode):
    repo = repo_at(tmp_path / "repo")
    memory = repo / "AGENTS.md"
    memory.write_text("anyone could have written this")
    memory.chmod(mode)
    assert refused(repo) == "project memory not read: AGENTS.md (writable by group or others)"


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a file to another user needs root")
def test_a_file_owned_by_another_user_is_refused(tmp_path, home):
    repo = repo_at(tmp_path / "repo")
    memory = repo / "AGENTS.md"
    memory.write_text("someone else's")
    os.chown(memory, 65534, 65534)
    assert refused(repo) == "project memory not read: AGENTS.md (owned by another user)"


def test_a_refused_file_withholds_the_whole_memory(tmp_path, home):
    repo = repo_at(tmp_path / "repo")
    (repo / "AGENTS.md").write_text("repo rules")
    sub = repo / "sub"
    sub.mkdir()
    (sub / "CLAUDE.md").symlink_to("/etc/hostname")
    assert refused(sub) == "project memory not read: CLAUDE.md (symlink)"


def test_a_memory_file_in_a_parent_without_a_repository_is_not_read(tmp_path, home):
    # Like /tmp/AGENTS.md above a scratch folder: outside home and no repository, so only the
    # working directory itself is searched.
    (tmp_path / "AGENTS.md").write_text("PLANTED")
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    assert read_project_memory(scratch, 20_000) is None
    assert search_folders(scratch) == [scratch.resolve()]
    (scratch / "AGENTS.md").write_text("own notes")
    assert "own notes" in (read_project_memory(scratch, 20_000) or "")


def test_a_folder_writable_by_others_is_never_searched(tmp_path, home):
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)  # like /tmp
    repo = repo_at(shared / "repo")
    (shared / ".git").mkdir()  # even a planted repository marker does not bring it in
    (shared / "AGENTS.md").write_text("PLANTED")
    assert search_folders(repo) == [repo.resolve()]
    assert read_project_memory(shared, 20_000) is None
    assert search_folders(shared) == []


def test_the_walk_stops_at_the_repository_root(tmp_path, home):
    (tmp_path / "AGENTS.md").write_text("OUTSIDE THE REPO")
    repo = repo_at(tmp_path / "repo")
    nested = repo / "pkg" / "sub"
    nested.mkdir(parents=True)
    (repo / "AGENTS.md").write_text("repo rules")
    (nested / "CLAUDE.md").write_text("sub rules")
    text = read_project_memory(nested, 20_000) or ""
    assert "repo rules" in text and "sub rules" in text and "OUTSIDE" not in text
    assert text.index("repo rules") < text.index("sub rules")


def test_without_a_repository_the_walk_under_home_stops_at_home(tmp_path, home):
    (tmp_path / "AGENTS.md").write_text("ABOVE HOME")
    (home / "AGENTS.md").write_text("home rules")
    work = home / "work" / "x"
    work.mkdir(parents=True)
    assert search_folders(work) == [work.resolve(), work.parent.resolve(), home.resolve()]
    text = read_project_memory(work, 20_000) or ""
    assert "home rules" in text and "ABOVE HOME" not in text


def test_the_size_cap_is_kept(tmp_path, home):
    repo = repo_at(tmp_path / "repo")
    (repo / "AGENTS.md").write_text("x" * 500)
    with pytest.raises(ProviderSkipped) as caught:
        read_project_memory(repo, 100)
    assert caught.value.reason is SkipReason.TOO_LARGE and caught.value.detail == "project memory over 100 characters"
    assert "x" * 500 in (read_project_memory(repo, 1000) or "")


@pytest.mark.parametrize("swap, reason", [("symlink", "symlink"), ("other file", "replaced while being opened")])
def test_a_swap_between_the_check_and_the_open_does_not_redirect_the_read(tmp_path, home, monkeypatch, swap, reason):
    import promptd.assembly.memory as memory

    repo = repo_at(tmp_path / "repo")
    (repo / "AGENTS.md").write_text("checked")
    elsewhere = tmp_path / "elsewhere.md"
    elsewhere.write_text("SWAPPED IN")
    real_open = os.open

    def swapping_open(path, flags, *args, **kwargs):
        if path == "AGENTS.md":
            if swap == "symlink":
                (repo / "AGENTS.md").unlink()
                (repo / "AGENTS.md").symlink_to(elsewhere)
            else:
                os.replace(elsewhere, repo / "AGENTS.md")  # another inode, renamed over it
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(memory.os, "open", swapping_open)
    assert refused(repo) == f"project memory not read: AGENTS.md ({reason})"


def test_a_directory_named_like_a_memory_file_is_ignored(tmp_path, home):
    repo = repo_at(tmp_path / "repo")
    (repo / "AGENTS.md").mkdir()
    assert read_project_memory(repo, 20_000) is None


# ---- over the wire (the transport in a thread) -----------------------------------------------------------


def test_over_the_wire_a_safe_memory_file_is_delivered(spawn, tmp_path, home):
    server = spawn(env={"PROMPTD_REMINDERS__SESSION_METADATA": "false"})
    repo = repo_at(tmp_path / "repo")
    (repo / "AGENTS.md").write_text("run the tests before committing")
    (tmp_path / "AGENTS.md").write_text("OUTSIDE THE REPO")
    server.call("session/update", {"session": "m", "cwd": str(repo)})
    result = assemble(server, "m")
    assert "run the tests before committing" in result["body"] and "OUTSIDE" not in result["body"]
    assert result["skipped"] == []


def test_a_middle_folder_swapped_for_a_link_after_the_search_is_never_followed(tmp_path, home, monkeypatch):
    import promptd.assembly.memory as memory

    # The attack: the search resolves shared/repo/sub; a link to a private tree is then swapped in
    # for shared/repo, whose AGENTS.md would be read under the repository's label.
    repo = repo_at(tmp_path / "shared" / "repo")
    (repo / "AGENTS.md").write_text("benign repository rules")
    (repo / "sub").mkdir()
    private = repo_at(tmp_path / "private")
    (private / "AGENTS.md").write_text(SECRET)
    (private / "sub").mkdir()
    searched = memory.search_folders

    def search_then_swap(cwd: Path) -> list[Path]:
        folders = searched(cwd)
        os.rename(repo, tmp_path / "shared" / "repo.old")
        (tmp_path / "shared" / "repo").symlink_to(private)
        return folders

    monkeypatch.setattr(memory, "search_folders", search_then_swap)
    detail = refused(repo / "sub")
    assert "symlink" in detail and SECRET not in detail and str(tmp_path) not in detail
