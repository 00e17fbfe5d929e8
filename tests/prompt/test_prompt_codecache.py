"""The compiled-template cache on disk: the shipped templates' code is kept for the next process,
a corrupt or foreign file is ignored, and sealed templates never write one."""

from __future__ import annotations

import os
import stat
import subprocess
import sys

import pytest
from support.rendering import render

from promptd.config import VaultConfig
from promptd.prompt import codecache, vault
from promptd.prompt.context import parse_context
from promptd.prompt.engine import Engine
from promptd.prompt.pipeline import shipped_source, variables

# What the shipped templates are rendered with.
VALUES = variables(parse_context({"working_directory": "/w"}), {"read": "read_file"})
# Renders Primary in a fresh process and says whether Jinja compiled it there.
CHILD = """
from promptd.local import Local
from promptd.prompt import engine as module
compiled = []
original = module.compile_tree
def counting(env, source, tree, name, *args, **kwargs):
    compiled.append(name)
    return original(env, source, tree, name, *args, **kwargs)
module.compile_tree = counting
result = Local().call("prompt/render", {"context": {"working_directory": "/w"}, "tools": {"by_kind": {"read": "read_file"}}})
print(len(compiled), result["sha256"])
"""


@pytest.fixture
def cache_home(tmp_path, monkeypatch):
    home = tmp_path / "cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(home))
    return home / "promptd"


def _files(folder):
    return sorted(folder.glob("*.code")) if folder.exists() else []


def test_a_second_process_start_uses_the_cached_code(cache_home):
    env = {**os.environ, "XDG_CACHE_HOME": str(cache_home.parent)}
    first = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True, text=True, check=True).stdout.split()
    assert first[0] == "1"
    [written] = _files(cache_home)
    assert stat.S_IMODE(written.stat().st_mode) == 0o600 and stat.S_IMODE(cache_home.stat().st_mode) == 0o700
    second = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True, text=True, check=True).stdout.split()
    assert second == ["0", first[1]]  # not compiled, and the same prompt


def test_a_corrupt_or_foreign_cache_file_is_ignored_and_replaced(cache_home):
    source = shipped_source("primary")
    expected = Engine().render(source, VALUES, "primary", strict=True, persist=True)
    [path] = _files(cache_home)
    good = path.read_bytes()
    for bad in (b"", b"garbage", good[: len(good) // 2], good.replace(codecache.FORMAT, b"promptd-code-0\n"), good[:-40] + b"\xff" * 40, good[:-1] + bytes([good[-1] ^ 1])):
        path.write_bytes(bad)
        assert Engine().render(source, VALUES, "primary", strict=True, persist=True) == expected
        assert path.read_bytes() == good
    # Another template's code under this key (a file copied or renamed) is not used either.
    Engine().render(shipped_source("subagent"), VALUES, "subagent", strict=True, persist=True)
    other = next(p for p in _files(cache_home) if p != path)
    path.write_bytes(other.read_bytes())
    assert Engine().render(source, VALUES, "primary", strict=True, persist=True) == expected


def test_an_unwritable_cache_folder_only_means_compiling(cache_home):
    cache_home.parent.mkdir()
    cache_home.write_text("not a folder")
    assert Engine().render(shipped_source("primary"), VALUES, "primary", strict=True, persist=True)


def test_strict_and_lenient_code_are_kept_apart(cache_home):
    source = shipped_source("subagent")
    Engine().render(source, VALUES, "subagent", strict=True, persist=True)
    Engine().render(source, VALUES, "subagent", strict=False, persist=True)
    assert len(_files(cache_home)) == 2


def test_sealed_templates_never_write_a_cache_file(cache_home, tmp_path):
    key = vault.new_key()
    key_file = tmp_path / "vault.key"
    key_file.write_text(key.hex())
    key_file.chmod(0o600)
    sealed = tmp_path / "primary.sealed"
    sealed.write_bytes(vault.seal(b"Team primary for ${{ system_prompt_label }}.", key, "primary"))
    config = VaultConfig(key_file=str(key_file), templates={"primary": str(sealed)})
    result = render(parse_context({}), {}, vault=config)
    assert result.text == "Team primary for Grok."
    assert "Begin Patch" in render(parse_context({"system_prompt": "codex"}), {"patch": "apply_patch"}).text
    # Even asked to, the engine keeps nothing of a template it must not cache.
    Engine().render("Secret ${{ system_prompt_label }}", VALUES, "apply_patch", cache=False, persist=True)
    assert not cache_home.exists()


def test_code_is_loaded_only_from_a_folder_and_file_of_our_own(cache_home, tmp_path):
    # Loaded code runs in promptd: a file others could have written, or a link, is never loaded.
    source = shipped_source("primary")
    Engine().render(source, VALUES, "primary", strict=True, persist=True)
    [path] = _files(cache_home)
    assert codecache.load(source, "primary", True) is not None
    path.chmod(0o666)
    assert codecache.load(source, "primary", True) is None
    path.chmod(0o600)
    cache_home.chmod(0o777)
    assert codecache.load(source, "primary", True) is None
    cache_home.chmod(0o700)
    elsewhere = tmp_path / "elsewhere.code"
    elsewhere.write_bytes(path.read_bytes())
    elsewhere.chmod(0o600)
    path.unlink()
    path.symlink_to(elsewhere)
    assert codecache.load(source, "primary", True) is None


def _planted(cache_home, source, name="primary", strict=True):
    cache_home.mkdir(parents=True, exist_ok=True)
    cache_home.chmod(0o700)
    return cache_home / f"{codecache.key(source, name, strict)}.code"


def _skips(source, name="primary", strict=True):
    seen: list[tuple[str, str]] = []
    token = codecache.skipped.set(lambda reason, template: seen.append((reason, template)))
    try:
        return codecache.load(source, name, strict), seen
    finally:
        codecache.skipped.reset(token)


def test_a_fifo_planted_in_the_cache_is_a_miss_that_never_blocks(cache_home):
    # Run in a thread so that a regression fails the test instead of hanging it.
    import threading

    source = shipped_source("primary")
    found: list[object] = []
    thread = threading.Thread(target=lambda: found.append(_skips(source)), daemon=True)
    os.mkfifo(_planted(cache_home, source))
    thread.start()
    thread.join(60)
    assert found == [(None, [("not_regular", "primary")])]


def test_a_symlink_planted_in_the_cache_is_a_miss_even_to_a_file_of_our_own(cache_home, tmp_path, monkeypatch):
    source = shipped_source("primary")
    Engine().render(source, VALUES, "primary", strict=True, persist=True)
    [path] = _files(cache_home)
    good = tmp_path / "good.code"
    good.write_bytes(path.read_bytes())
    good.chmod(0o600)
    path.unlink()
    path.symlink_to(good)
    assert _skips(source) == (None, [("symlink", "primary")])
    path.unlink()
    path.write_bytes(good.read_bytes())
    path.chmod(0o600)
    (tmp_path / "via").mkdir()
    (tmp_path / "via" / "promptd").symlink_to(cache_home)  # the folder itself a link
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "via"))
    assert _skips(source) == (None, [("folder", "primary")])


def test_a_cache_file_over_the_code_cap_is_not_read(cache_home, monkeypatch):
    source = shipped_source("primary")
    Engine().render(source, VALUES, "primary", strict=True, persist=True)
    monkeypatch.setattr(codecache, "MAX_CODE_BYTES", 1024)
    assert _skips(source) == (None, [("too_large", "primary")])
    monkeypatch.setattr(codecache, "MAX_CODE_BYTES", 4 << 20)
    code, seen = _skips(source)
    assert code is not None and seen == []


def test_a_missing_cache_file_is_an_ordinary_miss_and_says_nothing(cache_home):
    assert _skips(shipped_source("subagent"), "subagent") == (None, [])
