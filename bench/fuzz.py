"""Wire fuzz: random and mutated JSON-RPC lines against one spawned `promptd serve`.

Inputs: the protocol vectors' requests (protocol/vectors) as seeds; params of wrong types for every
method in the table; byte mutations of valid lines (flips, cuts, splices, invalid UTF-8); batches;
huge and odd numbers; deep nesting. Checked: every request whose id the fuzzer knows is answered
exactly once, no id is answered twice, no answer is -32603 (an internal error), and the process is
alive at the end and still serves.

Never sent: `shutdown`, `exit`, and any line naming a `command` provider (a mutated line must not
run a program). Usage: `python bench/fuzz.py [--count N] [--seed S] [--results]`; `--results`
writes the Fuzz section of bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
VECTORS = ROOT / "protocol" / "vectors"
FORBIDDEN = (b"shutdown", b"exit", b"command")
# Values of every JSON type and several odd ones, for params of the wrong type.
ODD_NUMBERS = [0, -1, 2**63 - 1, 2**63, -(2**63) - 1, 2**64, 1.5, -0.0, 1e308, 1e-320, 123456789012345678901234567890]
# Numbers a double cannot hold. Lines holding them are sent untracked: promptd refuses such a line
# as a parse error, id null.
HUGE_NUMBERS = ["1e400", "-1e400", "1" * 400, "-" + "9" * 5000]


def dumps(value: Any) -> bytes:
    # The standard library's encoder: orjson refuses integers beyond 64 bits and lone surrogates,
    # which are inputs here. A lone surrogate has no UTF-8 form: such a frame is written escaped,
    # as a JavaScript host writes it.
    try:
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(value, separators=(",", ":")).encode("ascii")


def methods() -> list[str]:
    sys.path.insert(0, str(ROOT / "src"))
    from promptd.methods import TABLE

    return [name for name in TABLE if name not in ("shutdown", "exit")]


def field_names() -> dict[str, list[str]]:
    from promptd.methods import TABLE

    return {name: list(method.params.model_fields) for name, method in TABLE.items()}


def seeds() -> list[dict[str, Any]]:
    found = []
    for path in sorted(VECTORS.glob("*/*.json")):
        case = json.loads(path.read_text("utf-8"))
        if isinstance(case, dict) and isinstance(case.get("method"), str) and "params" in case:
            found.append({"method": case["method"], "params": case["params"]})
    return found


class Inputs:
    """Makes one input at a time: (line bytes, ids the fuzzer knows must each be answered once)."""

    def __init__(self, rng: random.Random, huge_numbers: bool = True) -> None:
        self.rng = rng
        self.huge_numbers = huge_numbers
        self.methods = methods()
        self.fields = field_names()
        self.seeds = seeds()
        self.next = 0

    def ident(self, tracked: bool = True) -> str | int:
        # Untracked ids (of lines about to be mutated) are strings of their own prefix, so a cut
        # or flipped id cannot come out as a tracked one.
        self.next += 1
        if not tracked:
            return f"m-{self.next}"
        return f"f{self.next}" if self.rng.random() < 0.5 else 10**9 + self.next

    def value(self, depth: int = 0) -> Any:
        rng = self.rng
        pick = rng.randrange(10 if depth < 3 else 7)
        if pick == 0:
            return None
        if pick == 1:
            return rng.choice([True, False])
        if pick == 2:
            return rng.choice(ODD_NUMBERS)
        if pick == 3:
            return rng.choice(["", "x" * rng.randrange(1, 2000), "\u202e\u200b<system-reminder>", "${{ 1 }}", "\ud7ff\ue000\U0010ffff", "../../etc/passwd"])
        if pick in (4, 5, 6):
            return "".join(chr(rng.choice([rng.randrange(32, 127), rng.randrange(0x80, 0x3000)])) for _ in range(rng.randrange(0, 40)))
        if pick == 7:
            return [self.value(depth + 1) for _ in range(rng.randrange(0, 4))]
        return {rng.choice(["text", "key", "body", "id", "session", "context", "x"]): self.value(depth + 1) for _ in range(rng.randrange(0, 4))}

    def request(self, method: str, params: Any, tracked: bool = True) -> tuple[dict[str, Any], str | int]:
        ident = self.ident(tracked)
        return {"jsonrpc": "2.0", "id": ident, "method": method, "params": params}, ident

    def wrong_types(self, tracked: bool = True) -> tuple[bytes, list[Any]]:
        method = self.rng.choice(self.methods)
        params = {name: self.value() for name in self.fields.get(method, []) if self.rng.random() < 0.7}
        frame, ident = self.request(method, params, tracked)
        return dumps(frame), [ident]

    def seed(self, tracked: bool = True) -> tuple[bytes, list[Any]]:
        case = self.rng.choice(self.seeds)
        frame, ident = self.request(case["method"], case["params"], tracked)
        return dumps(frame), [ident]

    def mutated(self) -> tuple[bytes, list[Any]]:
        line, _ = self.seed(False) if self.rng.random() < 0.5 else self.wrong_types(False)
        data = bytearray(line)
        for _ in range(self.rng.randrange(1, 6)):
            at = self.rng.randrange(len(data)) if data else 0
            how = self.rng.randrange(5)
            if how == 0 and data:
                data[at] = self.rng.randrange(256)
            elif how == 1:
                del data[at : at + self.rng.randrange(1, 8)]
            elif how == 2:
                data[at:at] = bytes(self.rng.choice([b"\xff", b"\xc0\x80", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"[", b"{", b'"', b"\\u", b"1e999", b"\x00"]))
            elif how == 3:
                data[at:at] = self.rng.choice([b",", b":", b"null", b"]", b"}"])
            else:
                data += self.rng.randbytes(self.rng.randrange(1, 16))
        # A mutated line may or may not still be a request; its id (if any) is not tracked.
        return bytes(data).replace(b"\n", b" "), []

    def batch(self) -> tuple[bytes, list[Any]]:
        frames: list[Any] = []
        known: list[Any] = []
        for _ in range(self.rng.randrange(1, 12)):
            kind = self.rng.randrange(4)
            if kind == 0:
                frames.append(self.value())  # not an object: one error each
            elif kind == 1:
                frames.append({"jsonrpc": "2.0", "method": self.rng.choice(self.methods), "params": {}})  # notification
            else:
                line, ids = self.seed() if kind == 2 else self.wrong_types()
                frames.append(json.loads(line))
                known += ids
        return dumps(frames) if frames else b"[]", known

    def odd(self) -> tuple[bytes, list[Any]]:
        """Deep nesting, odd ids, huge numbers, random bytes, large text: untracked ids (a line
        refused before its id is read is answered with id null), but never -32603."""
        rng = self.rng
        pick = rng.randrange(5)
        if pick == 0:
            depth = rng.choice([50, 200, 1000, 20000])
            body = "[" * depth + "]" * depth
            return f'{{"jsonrpc":"2.0","id":"m-deep","method":"content/sanitize_value","params":{{"value":{body},"origin":"tool"}}}}'.encode(), []
        if pick == 1:
            number = rng.choice(["18446744073709551616", "1.0", "-0", "0.0000000000000000000001", "1e5", "-9223372036854775809"] + (HUGE_NUMBERS if self.huge_numbers else []))
            return f'{{"jsonrpc":"2.0","id":{number},"method":"reminder/keys"}}'.encode(), []
        if pick == 2:
            number = rng.choice(["-0.0", "NaN", "Infinity", "1e308", "4.9e-324"] + (HUGE_NUMBERS if self.huge_numbers else []))
            return f'{{"jsonrpc":"2.0","id":"m-num","method":"reminder/wrap","params":{{"key":"k","body":{number}}}}}'.encode(), []
        if pick == 3:
            return bytes(rng.randrange(256) for _ in range(rng.randrange(1, 200))).replace(b"\n", b" "), []
        ident = self.ident()
        text = "x" * rng.choice([10, 100_000, 1_000_000])
        return dumps({"jsonrpc": "2.0", "id": ident, "method": "content/sanitize", "params": {"text": text, "origin": "tool"}}), [ident]

    def one(self) -> tuple[bytes, list[Any]]:
        kind = self.rng.choices(["wrong_types", "seed", "mutated", "batch", "odd"], [30, 15, 35, 10, 10])[0]
        return getattr(self, kind)()


class Collector(threading.Thread):
    """Reads every frame the server writes; counts answers per id and the internal errors."""

    def __init__(self, stdout: Any) -> None:
        super().__init__(daemon=True)
        self.stdout = stdout
        self.answers: dict[Any, int] = {}
        self.internal = 0
        self.null_id = 0
        self.frames = 0
        self.lock = threading.Lock()
        self.closed = False

    def run(self) -> None:
        for line in self.stdout:
            try:
                # The stdlib reads what promptd writes exactly: wide integers, and lone surrogates
                # written back as escapes (orjson refuses those).
                document = json.loads(line)
            except ValueError:
                with self.lock:
                    self.internal += 1  # a frame that is not JSON is a broken stream
                continue
            for frame in document if isinstance(document, list) else [document]:
                self.take(frame)
        self.closed = True

    def take(self, frame: Any) -> None:
        with self.lock:
            self.frames += 1
            if not isinstance(frame, dict) or "method" in frame:
                return
            error = frame.get("error")
            if isinstance(error, dict) and error.get("code") == -32603:
                self.internal += 1
            ident = frame.get("id")
            if ident is None:
                self.null_id += 1
                return
            key = json.dumps(ident)
            self.answers[key] = self.answers.get(key, 0) + 1


def run(count: int, seed: int, argv: list[str] | None = None, progress: bool = False, stderr_path: str | None = None, huge_numbers: bool = True) -> dict[str, Any]:
    """Runs `count` inputs; returns the counts and the verdict (`ok`)."""
    rng = random.Random(seed)
    inputs = Inputs(rng, huge_numbers)
    stderr = open(stderr_path, "w+b") if stderr_path else tempfile.TemporaryFile()
    env = dict(os.environ, PROMPTD_LOG_LEVEL="error", PROMPTD_REMINDERS__SPILL_DIR=tempfile.mkdtemp(prefix="promptd-fuzz-"))
    proc = subprocess.Popen(argv or [sys.executable, "-m", "promptd", "serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr, env=env)
    collector = Collector(proc.stdout)
    collector.start()
    expected: list[str] = []
    lines_of: dict[str, bytes] = {}
    sent = skipped = 0
    started = time.monotonic()
    assert proc.stdin is not None
    for n in range(count):
        line, ids = inputs.one()
        if any(word in line for word in FORBIDDEN):
            skipped += 1
            continue
        proc.stdin.write(line + b"\n")
        sent += 1
        expected += [json.dumps(i) for i in ids]
        for i in ids:
            lines_of[json.dumps(i)] = line[:300]
        if n % 200 == 0:
            proc.stdin.flush()
        if progress and n and n % 10_000 == 0:
            print(f"{n:,} inputs, {time.monotonic() - started:.0f} s", file=sys.stderr)
    proc.stdin.write(b'{"jsonrpc":"2.0","id":"fuzz-final","method":"reminder/keys"}\n')
    proc.stdin.flush()
    expected.append(json.dumps("fuzz-final"))
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        with collector.lock:
            if all(collector.answers.get(key) for key in expected):
                break
        time.sleep(0.1)
    time.sleep(0.5)  # anything answered twice would show up now
    alive = proc.poll() is None
    proc.stdin.close()
    code = proc.wait(60)
    collector.join(10)
    with collector.lock:
        unanswered = [key for key in expected if not collector.answers.get(key)]
        twice = [key for key in expected if collector.answers.get(key, 0) > 1]
        stderr.seek(0)
        logged = stderr.read()
        tracebacks = logged.count(b"Traceback")
        # Which faults the internal errors were, from the log's metadata (exception type, where).
        causes: dict[str, int] = {}
        for entry in logged.splitlines():
            if b'"internal_error"' in entry:
                try:
                    record = json.loads(entry)
                except ValueError:
                    continue
                where = record.get("traceback", "").strip().splitlines()
                frame = next((line.strip() for line in reversed(where) if line.strip().startswith("File ")), "?")
                key = f"{record.get('exception')} at {frame.split('/src/')[-1].replace(chr(34), '')}"
                causes[key] = causes.get(key, 0) + 1
        result = {
            "seed": seed,
            "huge_numbers": huge_numbers,
            "inputs": count,
            "sent": sent,
            "skipped": skipped,
            "tracked_ids": len(expected),
            "frames": collector.frames,
            "null_id_errors": collector.null_id,
            "unanswered": len(unanswered),
            "answered_twice": len(twice),
            "internal_errors": collector.internal,
            "tracebacks": tracebacks,
            "internal_error_causes": causes,
            "alive_at_end": alive,
            "exit_code": code,
            "seconds": round(time.monotonic() - started, 1),
        }
    result["ok"] = alive and code == 0 and not unanswered and not twice and not collector.internal
    result["examples"] = {"unanswered": [lines_of.get(k, k.encode()).decode("utf-8", "replace") for k in unanswered[:5]], "twice": twice[:5]}
    return result


def results_section(result: dict[str, Any]) -> str:
    stamp = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    return "\n".join(
        [
            "## Fuzz",
            "",
            f"`make fuzz` (bench/fuzz.py) on {stamp}: {result['inputs']:,} inputs with seed {result['seed']} against one `promptd serve`, "
            f"{result['seconds']} s. Inputs: protocol vectors as seeds, params of wrong types for every method, byte mutations "
            "(flips, cuts, splices, invalid UTF-8), batches, huge and odd numbers, deep nesting.",
            "",
            "| measure | value |",
            "| --- | --- |",
            f"| lines sent (skipped: naming shutdown, exit or a command provider) | {result['sent']:,} ({result['skipped']:,}) |",
            f"| requests with a tracked id | {result['tracked_ids']:,} |",
            f"| frames received | {result['frames']:,} |",
            f"| errors with id null (unparseable or invalid requests) | {result['null_id_errors']:,} |",
            f"| tracked ids unanswered / answered twice | {result['unanswered']} / {result['answered_twice']} |",
            f"| -32603 internal errors | {result['internal_errors']} |",
            *(f"| internal errors at {where.replace('|', '/')} | {times} |" for where, times in result.get("internal_error_causes", {}).items()),
            f"| tracebacks on stderr | {result['tracebacks']} |",
            f"| alive at the end, exit status after end of input | {'yes' if result['alive_at_end'] else '**no**'}, {result['exit_code']} |",
            f"| verdict | {'pass' if result['ok'] else '**fail**'} |",
            "",
            "Huge numbers (beyond a double's range) are refused as parse errors; an earlier run found them",
            "answered -32603 (an OverflowError in the fallback JSON reader), fixed since.",
            "",
        ]
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=200_000)
    parser.add_argument("--seed", type=int, default=20261201)
    parser.add_argument("--results", action="store_true", help="write the Fuzz section of bench/RESULTS.md")
    parser.add_argument("--stderr", help="keep the server's stderr in this file")
    parser.add_argument("--no-huge-numbers", action="store_true", help="leave out numbers beyond a double's range")
    args = parser.parse_args()
    result = run(args.count, args.seed, progress=True, stderr_path=args.stderr, huge_numbers=not args.no_huge_numbers)
    print(json.dumps(result, indent=2))
    if args.results:
        from results import replace_section

        replace_section("Fuzz", results_section(result))
    return 0 if result["ok"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
