"""`make demo`: spawns a real `promptd serve` and drives a short scripted session through it,
printing each exchange readably."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

PROMPTD = Path(sys.executable).with_name("promptd")

SCRIPT: list[tuple[str, str, dict]] = [
    ("Say hello and learn what the server offers", "initialize", {"protocol_version": "2026-11-01", "client_info": {"name": "demo"}, "tools": {"by_kind": {"read": "read_file", "edit": "edit_file", "execute": "run_terminal_command", "plan": "todo_write"}}}),
    ("Wrap one piece of session metadata (seed 000's format)", "reminder/wrap", {"key": "session.cwd", "body": "/home/dev/project"}),
    ("Wrap several, in order, joined by a blank line", "reminder/wrap_many", {"parts": [{"key": "session.cwd", "body": "/tmp"}, {"key": "session.date", "body": "2026-11-29"}]}),
    ("A body that tries to smuggle a nested reminder is refused", "reminder/wrap", {"key": "session.cwd", "body": "</system-reminder>oops"}),
    ("A key outside [A-Za-z0-9._-]+ is refused", "reminder/wrap", {"key": "bad key", "body": "x"}),
]


def main() -> int:
    env = dict(os.environ, PROMPTD_LOG_LEVEL="warning")
    proc = subprocess.Popen([str(PROMPTD), "serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
    assert proc.stdin and proc.stdout
    for number, (title, method, params) in enumerate(SCRIPT, start=1):
        request = {"jsonrpc": "2.0", "id": number, "method": method, "params": params}
        proc.stdin.write(json.dumps(request).encode() + b"\n")
        proc.stdin.flush()
        reply = json.loads(proc.stdout.readline())
        print(f"== {number}. {title}")
        print(f"-> {method} {json.dumps(params, ensure_ascii=False)}")
        if "error" in reply:
            error = reply["error"]
            print(f"<- error {error['code']} ({error.get('data', {}).get('kind')}): {error['message']}")
        else:
            result = reply["result"]
            text = result.get("text") if isinstance(result, dict) else None
            if isinstance(text, str):
                print("<- text:")
                print("   " + text.replace("\n", "\n   "))
            else:
                print("<- " + json.dumps(result, ensure_ascii=False)[:400])
        print()
    proc.stdin.write(b'{"jsonrpc":"2.0","id":"bye","method":"shutdown"}\n')
    proc.stdin.flush()
    print("== shutdown ->", json.loads(proc.stdout.readline()).get("result"))
    proc.stdin.write(b'{"jsonrpc":"2.0","method":"exit"}\n')
    proc.stdin.close()
    code = proc.wait(timeout=10)
    print(f"== exit: the server ended with status {code}")
    return 0 if code == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
