"""The compiled-template cache across process starts: what one `promptd serve` writes, the next
one reads; a FIFO planted in the cache is a logged miss, never a hang."""

from __future__ import annotations

import json
import os

from promptd.prompt import codecache
from promptd.prompt.pipeline import shipped_source


def test_a_served_render_writes_the_cache_for_the_next_start(tmp_path, spawn):
    home = tmp_path / "cache"
    server = spawn(env={"XDG_CACHE_HOME": str(home)})
    server.call("initialize", {"client_info": {"name": "t"}})
    first = server.call("prompt/render", {"context": {"working_directory": "/w"}})
    assert len(list((home / "promptd").glob("*.code"))) == 1
    again = spawn(env={"XDG_CACHE_HOME": str(home)})
    again.call("initialize", {"client_info": {"name": "t"}})
    assert again.call("prompt/render", {"context": {"working_directory": "/w"}}) == first


def test_a_served_render_with_a_fifo_in_the_cache_answers_and_logs_the_reason(tmp_path, spawn):
    home = tmp_path / "cache"
    source = shipped_source("primary")
    (home / "promptd").mkdir(parents=True, mode=0o700)
    os.mkfifo(home / "promptd" / f"{codecache.key(source, 'primary', True)}.code")
    server = spawn(env={"XDG_CACHE_HOME": str(home)})
    result = server.call("prompt/render", {"context": {"working_directory": "/w"}}, timeout=60)
    assert result["template"] == "primary"
    assert server.call("citation/strip", {"text": "a"}, timeout=60) is not None
    server.close()
    logged = [json.loads(line) for line in server.stderr_text().splitlines() if '"code_cache_skipped"' in line]
    assert [(entry["reason"], entry["template"]) for entry in logged] == [("not_regular", "primary")]
