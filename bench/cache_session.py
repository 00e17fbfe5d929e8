"""How much of each request a provider's prompt cache can reuse: a scripted 50-turn session
through `promptd serve`, as a host sends it (the system prompt, then the stored conversation with
this turn's user message), with a new day and a restart of promptd at turn 26 that resumes the
stored conversation through `history/sanitize`. Each request is compared with the one before:
the share of its bytes that are a byte-for-byte prefix of the previous request is what a cache
keyed by exact prefix can serve. Two configurations side by side: a shared provenance key (the
documented way to resume), and none (every restart draws a new key). The near-limit baseline is
1.0 minus the share of new bytes each turn adds (the whole previous request reused).

Run alone with `python bench/cache_session.py` (it writes its section of bench/RESULTS.md), or as
a section of `make bench`."""

from __future__ import annotations

import json
import os
import secrets
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from driver import Peer  # noqa: E402

PROMPTD = [str(Path(sys.executable).with_name("promptd")), "serve"]
TURNS = 50
RESTART_AT = 26
TOOLS = {"by_kind": {"read": "read_file", "edit": "edit_file", "execute": "run_terminal_command", "plan": "todo_write"}}


def _prefix_share(previous: bytes, current: bytes) -> float:
    shared = 0
    for a, b in zip(previous, current):
        if a != b:
            break
        shared += 1
    return shared / len(current)


def _start(env: dict[str, str]) -> Peer:
    peer = Peer(PROMPTD, env=env)
    peer.call("initialize", {"client_info": {"name": "cache-bench"}, "tools": TOOLS})
    return peer


def session(with_key: bool) -> list[tuple[float, float]]:
    """(prefix share, baseline share) per turn from the second on."""
    env = dict(os.environ, PROMPTD_LOG_LEVEL="error")
    folder = tempfile.mkdtemp(prefix="promptd-cache-bench-")
    if with_key:
        key = Path(folder) / "provenance.key"
        key.write_text(secrets.token_hex(32) + "\n")
        key.chmod(0o600)
        env["PROMPTD_REMINDERS__PROVENANCE_KEY_FILE"] = str(key)
    peer = _start(env)
    day = "2026-12-01"
    context = {"os_name": "linux", "shell_path": "/bin/bash", "working_directory": "/srv/app", "current_date": day}
    system = peer.call("prompt/render", {"context": context, "session": "s"})["text"]
    peer.call("session/update", {"session": "s", "cwd": "/srv/app", "date": day, "os_name": "linux"})
    history: list[dict[str, str]] = []
    previous = b""
    shares = []
    for turn in range(1, TURNS + 1):
        if turn == RESTART_AT:
            peer.close()
            day = "2026-12-02"
            peer = _start(env)
            system = peer.call("prompt/render", {"context": {**context, "current_date": day}, "session": "s"})["text"]
            history = peer.call("history/sanitize", {"messages": history, "session": "s"})["messages"]
            peer.call("session/update", {"session": "s", "cwd": "/srv/app", "date": day, "os_name": "linux"})
        user = peer.call("turn/compose", {"session": "s", "user_message": f"Step {turn}: fix the next failing test."})["content"]
        request = json.dumps({"system": system, "messages": [*history, {"role": "user", "content": user}]}, ensure_ascii=False).encode()
        if previous:
            # What a cache of the previous request would serve at best: all of it but its closing bracket.
            baseline = (len(previous) - 2) / len(request)
            shares.append((_prefix_share(previous, request), baseline))
        history += [{"role": "user", "content": user}, {"role": "assistant", "content": f"Fixed test {turn}; the suite is green."}]
        peer.call("turn/complete", {"session": "s", "tools_called": ["read_file", "edit_file"]})
        previous = request
    peer.close()
    return shares


def section() -> list[str]:
    rows = []
    for with_key in (True, False):
        shares = session(with_key)
        ours = [s for s, _ in shares]
        base = [b for _, b in shares]
        at_restart = ours[RESTART_AT - 2]
        rows.append(
            f"| {'shared provenance key' if with_key else 'no key (a new key per process)'} | {min(ours):.3f} | {sum(ours) / len(ours):.3f} | {at_restart:.3f} | "
            f"{sum(base) / len(base):.3f} | {sum(ours) / sum(base):.3f} |"
        )
    return [
        "## Prompt cache over a 50-turn session with a restart",
        "",
        f"Measured {time.strftime('%Y-%m-%d', time.gmtime())} (`python bench/cache_session.py`). A scripted {TURNS}-turn session through `promptd serve`; at turn {RESTART_AT} "
        "a new day begins and promptd is restarted, and the stored conversation is resumed through `history/sanitize`. Per request: the share of its bytes "
        "that are a byte prefix of the previous request (what a provider's exact-prefix cache can serve). Baseline: the whole previous request reused.",
        "",
        "| configuration | worst turn | mean | turn after the restart | baseline mean | mean / baseline |",
        "| --- | --- | --- | --- | --- | --- |",
        *rows,
        "",
    ]


if __name__ == "__main__":
    lines = section()
    print("\n".join(lines))
    import results

    results.replace_section(lines[0][3:], "\n".join(lines))
