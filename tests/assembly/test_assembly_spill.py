"""The spill sweep and the caps see only what promptd wrote: its session folders and files, by
their names, in a root and folders that are its user's alone, never through a link."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from promptd.assembly.spill import SpillFailed, SpillStore, session_folder
from promptd.config import RemindersConfig

NOW = 1_000_000_000.0
OLD = NOW - 3 * 86400
SPILL_NAME = "12345-0123456789ab.txt"


def store_at(root: Path, **settings) -> SpillStore:
    return SpillStore(RemindersConfig(spill_dir=str(root), spill_retention_hours=1, **settings), clock=lambda: NOW)


def aged(path: Path, text: str = "x", mode: int | None = None) -> Path:
    path.write_text(text)
    if mode is not None:
        path.chmod(mode)
    os.utime(path, (OLD, OLD))
    return path


@pytest.fixture
def root(tmp_path) -> Path:
    folder = tmp_path / "spill"
    folder.mkdir(mode=0o700)
    return folder


def test_the_sweep_removes_promptds_old_files_and_leaves_everything_else(root, tmp_path):
    store = store_at(root)
    own_old = aged(Path(store.save("s", "old").path))
    own_fresh = Path(store.save("s", "fresh").path)
    session = own_old.parent
    (root / "notes").mkdir()
    important = aged(root / "notes" / "old-important.txt")
    (root / "shared").mkdir()
    (root / "shared").chmod(0o777)
    shared = aged(root / "shared" / "old-shared.txt", mode=0o777)
    foreign_in_session = aged(session / "old-foreign.txt")
    outside = tmp_path / "outside"
    outside.mkdir()
    linked_target = aged(outside / SPILL_NAME)
    (root / session_folder("linked")).symlink_to(outside)
    (session / "99-0123456789ab.txt").symlink_to(linked_target)

    swept = store.sweep()

    assert swept.removed == 1 and not own_old.exists() and own_fresh.exists()
    for survivor in (important, shared, foreign_in_session, linked_target, root / "shared"):
        assert survivor.exists(), survivor
    assert swept.left == {"foreign": 3, "link": 2}


def test_a_root_others_can_write_to_is_not_swept_at_all(root):
    own_old = aged(Path(store_at(root).save("s", "old").path))
    root.chmod(0o770)
    swept = store_at(root).sweep()
    assert (swept.removed, swept.left) == (0, {"unsafe_root": 1}) and own_old.exists()


def test_a_session_folder_others_can_write_to_is_left_alone(root):
    own_old = aged(Path(store_at(root).save("s", "old").path))
    own_old.parent.chmod(0o777)
    swept = store_at(root).sweep()
    assert (swept.removed, swept.left) == (0, {"unsafe_folder": 1}) and own_old.exists()


def test_a_folder_left_empty_is_removed_only_when_it_is_promptds(root):
    own_old = aged(Path(store_at(root).save("s", "old").path))
    store_at(root).sweep()
    assert not own_old.parent.exists() and root.exists()


def test_the_caps_count_only_promptds_own_files(root):
    store = store_at(root, spill_max_session_bytes=150, spill_max_total_bytes=250)
    saved = Path(store.save("s", "x" * 100).path)
    (saved.parent / "big-foreign.bin").write_bytes(b"f" * 10_000)
    (root / "notes").mkdir()
    (root / "notes" / "big.bin").write_bytes(b"f" * 10_000)
    other = root / ("b" * 32)
    other.mkdir(mode=0o700)
    (other / "huge.bin").write_bytes(b"f" * 10_000)
    assert store.total_bytes() == 100
    store.save("s", "y" * 50)  # within the session cap: the foreign file does not count
    with pytest.raises(SpillFailed) as full:
        store.save("t", "z" * 101)
    assert full.value.reason == "total_cap"


def wait_for_event(server, event: str, deadline_s: float = 60.0) -> list[dict]:
    """The server's log lines for `event`, waiting for the first one (the sweep runs a second
    after start-up, in a worker thread)."""
    deadline = time.monotonic() + deadline_s
    while True:
        lines = [json.loads(line) for line in server.stderr_text().splitlines() if line.startswith("{")]
        found = [line for line in lines if line.get("event") == event]
        if found or time.monotonic() > deadline:
            return found
        time.sleep(0.1)


def test_the_server_sweeps_only_its_own_files_and_logs_what_it_left_by_count(spawn, root):
    folder = root / session_folder("old")
    folder.mkdir(mode=0o700)
    own = aged(folder / SPILL_NAME, mode=0o600)
    foreign = aged(folder / "old-important.txt")
    (root / "notes").mkdir()
    note = aged(root / "notes" / "old-note.txt")
    server = spawn(env={"PROMPTD_REMINDERS__SPILL_DIR": str(root)})
    server.call("reminder/keys", timeout=60)
    left = wait_for_event(server, "spill_left_alone")
    assert [(line["reason"], line["count"]) for line in left] == [("foreign", 2)]
    assert not own.exists() and foreign.exists() and note.exists()
    assert "old-important" not in server.stderr_text() and "notes" not in server.stderr_text()


# ---- what makes a file promptd's: its name, and how save made it ---------------------------------


def old_spill_file(root: Path, mode: int = 0o600) -> Path:
    folder = root / session_folder("s")
    folder.mkdir(mode=0o700, exist_ok=True)
    return aged(folder / SPILL_NAME, mode=mode)


def test_a_file_named_like_a_spill_file_but_not_mode_0600_is_left_alone(root):
    planted = old_spill_file(root, mode=0o644)
    swept = store_at(root).sweep()
    assert (swept.removed, swept.left) == (0, {"foreign": 1}) and planted.exists()


def test_a_hard_link_named_like_a_spill_file_is_left_alone_and_its_target_kept(root, tmp_path):
    target = aged(tmp_path / "precious.txt", "the user's own", mode=0o600)
    folder = root / session_folder("s")
    folder.mkdir(mode=0o700)
    os.link(target, folder / SPILL_NAME)
    store = store_at(root)
    assert store.total_bytes() == 0  # not counted against the caps either
    swept = store.sweep()
    assert (swept.removed, swept.left) == (0, {"foreign": 1})
    assert (folder / SPILL_NAME).exists() and target.read_text() == "the user's own"


@pytest.mark.skipif(os.geteuid() != 0, reason="making a file of another user takes root")
def test_a_file_of_another_user_named_like_a_spill_file_is_left_alone(root):
    # Run as root, promptd's own uid is root: the file is made another's with chown.
    planted = old_spill_file(root)
    os.chown(planted, 12345, 12345)
    swept = store_at(root).sweep()
    assert (swept.removed, swept.left) == (0, {"foreign": 1}) and planted.exists()


def test_promptds_own_old_file_made_as_save_makes_them_is_still_swept(root):
    own = old_spill_file(root)
    swept = store_at(root).sweep()
    assert swept.removed == 1 and not own.exists()


# ---- the root's path is walked without following links ------------------------------------------


@pytest.fixture
def linked_root(tmp_path) -> tuple[Path, Path]:
    """spill_dir = .../mid/spill where mid -> real: (the configured root, the folder it reaches)."""
    real = tmp_path / "real"
    (real / "spill").mkdir(parents=True, mode=0o700)
    (tmp_path / "mid").symlink_to(real)
    return tmp_path / "mid" / "spill", real / "spill"


def test_a_link_in_the_middle_of_the_root_path_stops_the_sweep(linked_root):
    configured, reached = linked_root
    own_looking = old_spill_file(reached)
    swept = store_at(configured).sweep()
    assert (swept.removed, swept.left) == (0, {"link": 1}) and own_looking.exists()
    assert store_at(configured).total_bytes() == 0


def test_a_link_in_the_middle_of_the_root_path_refuses_the_spill_and_makes_nothing(linked_root):
    configured, reached = linked_root
    with pytest.raises(SpillFailed) as failed:
        store_at(configured).save("s", "text")
    assert failed.value.reason == "symlink" and list(reached.iterdir()) == []
    with pytest.raises(SpillFailed) as failed:
        store_at(configured / "deeper" / "root").save("s", "text")
    assert failed.value.reason == "symlink" and list(reached.iterdir()) == []


def test_missing_folders_of_the_root_are_made_and_the_root_is_private(tmp_path):
    spilled = store_at(tmp_path / "a" / "b" / "spill").save("s", "text")
    assert Path(spilled.path).read_text() == "text"
    assert (tmp_path / "a" / "b").is_dir() and (tmp_path / "a" / "b" / "spill").stat().st_mode & 0o077 == 0
