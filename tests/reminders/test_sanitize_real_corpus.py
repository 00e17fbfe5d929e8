"""A large real corpus comes through the sanitizer unchanged: every text file of the running
Python's standard library, code, docs and data written by people who never meant a reminder tag."""

from __future__ import annotations

import os
import sysconfig
from pathlib import Path

import pytest

from promptd.reminders.sanitize import sanitize

# About 37 million characters in some 2,300 files (under a second of CPU, but 50 MB read from
# disk): run alone, after the parallel run, with the timing tests.
pytestmark = pytest.mark.serial

MAX_BYTES = 2 << 20  # larger files are generated data, not what a person writes
# Installed packages are not the standard library (and promptd's own documentation is among them).
SKIPPED_FOLDERS = {"site-packages", "dist-packages", "__pycache__"}


def _text_files(root: Path):
    for folder, folders, files in os.walk(root):
        folders[:] = sorted(f for f in folders if f not in SKIPPED_FOLDERS)
        for name in sorted(files):
            path = Path(folder, name)
            if path.is_symlink() or not path.is_file() or path.stat().st_size > MAX_BYTES:
                continue
            data = path.read_bytes()
            if b"\0" in data:
                continue  # binary
            try:
                yield path, data.decode("utf-8")
            except UnicodeDecodeError:
                yield path, data.decode("latin-1")  # text in another encoding, byte for byte


def test_no_text_file_of_the_standard_library_is_changed_by_the_sanitizer():
    root = Path(sysconfig.get_paths()["stdlib"])
    seen = 0
    changed = []
    for path, text in _text_files(root):
        seen += 1
        if sanitize(text).text != text:
            changed.append(str(path.relative_to(root)))
    assert seen > 1000, f"{root} holds {seen} text files: not a standard library"
    assert changed == []
