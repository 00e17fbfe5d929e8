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
    own = aged(folder / SPILL_NAME)
    foreign = aged(folder / "old-important.txt")
    (root / "notes").mkdir()
    note = aged(root / "notes" / "old-note.txt")
    server = spawn(env={"PROMPTD_REMINDERS__SPILL_DIR": str(root)})
    server.call("reminder/keys", timeout=60)
    left = wait_for_event(server, "spill_left_alone")
    assert [(line["reason"], line["count"]) for line in left] == [("foreign", 2)]
    assert not own.exists() and foreign.exists() and note.exists()
    assert "old-important" not in server.stderr_text() and "notes" not in server.stderr_text()
