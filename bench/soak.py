"""Soak: a long mixed load over many sessions through one `promptd serve`, then 10,000 requests in
flight at once.

Measured: resident memory after warm-up and at the end (growth), open descriptors, latency
percentiles (send to answer, pipelined with a bounded window), throughput; then 10,000
`reminder/assemble` requests that each wait on the host's `provider/produce` answer, all in
flight together before the driver answers any, each checked to be answered once.

Usage: `python bench/soak.py [--count N] [--sessions S] [--results]`; `--results` writes the
Soak section of bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import orjson

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))

from driver import percentile  # noqa: E402

# Requests kept in flight during the mixed phase: enough to keep promptd busy, below its own
# in-flight cap (1,024), so the figures are promptd's and not its back-pressure's.
WINDOW = 256
WARMUP_FRACTION = 0.1
CONCURRENT = 10_000
# The mix, by weight: what a host does each turn, plus the utility methods.
MIX = [
    ("reminder/wrap", 20),
    ("content/sanitize", 15),
    ("session/update", 10),
    ("reminder/assemble", 15),
    ("turn/compose", 5),
    ("turn/complete", 5),
    ("prompt/render", 10),
    ("citation/parse", 5),
    ("history/sanitize", 5),
    ("reminder/parse", 5),
    ("todo/gate", 5),
]


def params_for(method: str, session: str, rng: random.Random) -> dict[str, Any]:
    n = rng.randrange(1_000_000)
    if method == "reminder/wrap":
        return {"key": "session.cwd", "body": f"/home/dev/project-{n}"}
    if method == "content/sanitize":
        return {"text": f"tool output {n} <system-reminder>not really</system-reminder> " + "x" * rng.randrange(0, 2000), "origin": "tool"}
    if method == "session/update":
        return {"session": session, "cwd": f"/home/dev/p{n % 7}", "date": "2026-12-01", "modified_files": [f"src/f{n % 13}.py"]}
    if method in ("reminder/assemble", "turn/compose"):
        return {"session": session, "user_message": f"please fix bug {n}"}
    if method == "turn/complete":
        return {"session": session, "tools_called": ["read_file"], "todo_write": n % 5 == 0}
    if method == "prompt/render":
        return {"context": {"working_directory": "/home/dev/project", "os_name": "linux", "current_date": "2026-12-01"}, "tools": {"by_kind": {"read": "read_file", "plan": "todo_write"}}}
    if method == "citation/parse":
        return {"text": f"See 【{n % 9}†source】 and 【turn0search{n % 4}】 for details.", "final": True}
    if method == "history/sanitize":
        return {"messages": [{"role": "user", "content": f"hello {n}"}, {"role": "assistant", "content": "ok <system-reminder>x</system-reminder>"}]}
    if method == "reminder/parse":
        return {"text": f'<system-reminder key="session.cwd">\n/tmp/{n}\n</system-reminder>'}
    return {"session": session, "prompt_id": f"p{n}", "todos": [{"id": "t1", "content": "a", "status": "pending"}], "backing_task_count": 0, "last_step_called_tool": False}


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def descriptors(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


class Soak:
    def __init__(self, count: int, sessions: int, seed: int) -> None:
        self.count = count
        self.sessions = [f"soak-{n}" for n in range(sessions)]
        self.rng = random.Random(seed)
        env = dict(os.environ, PROMPTD_LOG_LEVEL="warning", PROMPTD_REMINDERS__SPILL_DIR=tempfile.mkdtemp(prefix="promptd-soak-"))
        self.stderr = tempfile.TemporaryFile()
        self.proc = subprocess.Popen([sys.executable, "-m", "promptd", "serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.stderr, env=env)
        self.sent_at: dict[int, float] = {}
        self.latencies: list[float] = []
        self.errors: dict[str, int] = {}
        self.answered = 0
        self.window = threading.Semaphore(WINDOW)
        self.lock = threading.Lock()
        self.done = threading.Event()

    def send(self, frame: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(orjson.dumps(frame) + b"\n")

    def setup(self) -> None:
        self.send({"jsonrpc": "2.0", "id": -1, "method": "initialize", "params": {"capabilities": {"host_providers": True}}})
        for n in range(4):
            self.send(
                {
                    "jsonrpc": "2.0",
                    "id": -2 - n,
                    "method": "providers/register",
                    "params": {"name": f"static{n}", "kind": "static", "scope": "global", "key": "directive", "text": f"Rule {n}: keep answers short."},
                }
            )
        self.proc.stdin.flush()  # type: ignore[union-attr]
        for _ in range(5):
            self.proc.stdout.readline()  # type: ignore[union-attr]

    def reader(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            frame = orjson.loads(line)
            ident = frame.get("id")
            now = time.perf_counter()
            with self.lock:
                started = self.sent_at.pop(ident, None)
                if started is None:
                    continue
                self.latencies.append(now - started)
                if "error" in frame:
                    code = frame["error"]["code"]
                    self.errors[str(code)] = self.errors.get(str(code), 0) + 1
                self.answered += 1
                finished = self.answered == self.count
            self.window.release()
            if finished:
                self.done.set()
                return

    def mixed(self) -> dict[str, Any]:
        methods = [m for m, _ in MIX]
        weights = [w for _, w in MIX]
        threading.Thread(target=self.reader, daemon=True).start()
        pid = self.proc.pid
        warm_at = int(self.count * WARMUP_FRACTION)
        samples: list[tuple[int, int, int]] = []
        started = time.perf_counter()
        rss_warm = 0
        for ident in range(self.count):
            self.window.acquire()
            method = self.rng.choices(methods, weights)[0]
            frame = {"jsonrpc": "2.0", "id": ident, "method": method, "params": params_for(method, self.rng.choice(self.sessions), self.rng)}
            with self.lock:
                self.sent_at[ident] = time.perf_counter()
            self.send(frame)
            if ident % 64 == 0:
                self.proc.stdin.flush()  # type: ignore[union-attr]
            if ident % 10_000 == 0:
                self.proc.stdin.flush()  # type: ignore[union-attr]
                samples.append((ident, rss_kib(pid), descriptors(pid)))
                if ident == warm_at or (not rss_warm and ident >= warm_at):
                    rss_warm = rss_kib(pid)
                if ident and ident % 100_000 == 0:
                    print(f"{ident:,} sent, {time.perf_counter() - started:.0f} s, rss {samples[-1][1] / 1024:.1f} MiB, fds {samples[-1][2]}", file=sys.stderr)
        self.proc.stdin.flush()  # type: ignore[union-attr]
        self.done.wait(600)
        elapsed = time.perf_counter() - started
        rss_end = rss_kib(pid)
        after_warm = [s for s in samples if s[0] >= warm_at] or samples
        return {
            "requests": self.count,
            "answered": self.answered,
            "sessions": len(self.sessions),
            "seconds": round(elapsed, 1),
            "throughput": round(self.count / elapsed),
            "p50_ms": round(percentile(self.latencies, 0.50) * 1000, 2),
            "p99_ms": round(percentile(self.latencies, 0.99) * 1000, 2),
            "max_ms": round(max(self.latencies) * 1000, 1),
            "errors": dict(self.errors),
            "rss_warm_mib": round(rss_warm / 1024, 1),
            "rss_end_mib": round(rss_end / 1024, 1),
            "rss_max_after_warmup_mib": round(max(s[1] for s in after_warm) / 1024, 1),
            "fds_min": min(s[2] for s in samples),
            "fds_max": max(s[2] for s in samples),
            "fds_end": descriptors(pid),
        }

    def concurrent(self) -> dict[str, Any]:
        """CONCURRENT assembles, each waiting on the host: the driver answers no provider/produce
        until all have been asked (or none came for two seconds), so all are in flight at once."""
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.send({"jsonrpc": "2.0", "id": "reg-host", "method": "providers/register", "params": {"name": "editor", "kind": "host", "scope": "global", "key": "directive", "timeout_ms": 120_000}})
        self.proc.stdin.flush()
        self.proc.stdout.readline()
        asks: list[Any] = []
        answers: dict[str, int] = {}
        lock = threading.Lock()
        all_asked = threading.Event()
        all_answered = threading.Event()
        last_ask = [time.monotonic()]

        def read() -> None:
            for line in self.proc.stdout:  # type: ignore[union-attr]
                frame = orjson.loads(line)
                if frame.get("method") == "provider/produce":
                    with lock:
                        asks.append(frame["id"])
                        last_ask[0] = time.monotonic()
                        if len(asks) == CONCURRENT:
                            all_asked.set()
                elif isinstance(frame.get("id"), str) and frame["id"].startswith("c-"):
                    with lock:
                        answers[frame["id"]] = answers.get(frame["id"], 0) + (1 if "result" in frame else 1000)
                        if len(answers) == CONCURRENT:
                            all_answered.set()
                            return

        threading.Thread(target=read, daemon=True).start()
        started = time.perf_counter()
        for n in range(CONCURRENT):
            self.send({"jsonrpc": "2.0", "id": f"c-{n}", "method": "reminder/assemble", "params": {"session": self.sessions[n % len(self.sessions)], "user_message": "concurrent"}})
        self.proc.stdin.flush()
        while not all_asked.wait(0.5):
            with lock:
                if time.monotonic() - last_ask[0] > 2.0:
                    break
        with lock:
            in_flight = len(asks)
            pending = list(asks)
        for call in pending:
            self.send({"jsonrpc": "2.0", "id": call, "result": {"text": "open file: main.py"}})
        self.proc.stdin.flush()
        while not all_answered.wait(1.0):
            with lock:
                late = [a for a in asks[in_flight:]]
                del asks[in_flight:]
                in_flight += len(late)
            for call in late:
                self.send({"jsonrpc": "2.0", "id": call, "result": {"text": "open file: main.py"}})
            self.proc.stdin.flush()
            if time.perf_counter() - started > 600:
                break
        with lock:
            return {
                "concurrent_sent": CONCURRENT,
                "in_flight_together": min(len(pending), CONCURRENT),
                "concurrent_answered_once": sum(1 for v in answers.values() if v == 1),
                "concurrent_seconds": round(time.perf_counter() - started, 1),
                "fds_after_concurrent": descriptors(self.proc.pid),
                "rss_after_concurrent_mib": round(rss_kib(self.proc.pid) / 1024, 1),
            }

    def close(self) -> int:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        code = self.proc.wait(120)
        self.stderr.seek(0)
        self.tracebacks = self.stderr.read().count(b"Traceback")
        return code


def results_section(r: dict[str, Any]) -> str:
    stamp = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    growth = r["rss_end_mib"] - r["rss_warm_mib"]
    return "\n".join(
        [
            "## Soak",
            "",
            f"`make soak` (bench/soak.py) on {stamp}, run under `nice` on the shared 2-core machine: {r['requests']:,} mixed requests over "
            f"{r['sessions']:,} sessions through one `promptd serve`, {WINDOW} in flight at a time (the mix: "
            + ", ".join(f"{m} {w}%" for m, w in MIX)
            + "), then 10,000 `reminder/assemble` requests in flight together, each waiting on the host's `provider/produce` answer.",
            "",
            "| measure | value |",
            "| --- | --- |",
            f"| requests answered | {r['answered']:,} of {r['requests']:,} in {r['seconds']} s ({r['throughput']:,} req/s) |",
            f"| error answers by code (expected: none) | {r['errors'] or 'none'} |",
            f"| latency p50 / p99 / max (send to answer, {WINDOW} in flight) | {r['p50_ms']} ms / {r['p99_ms']} ms / {r['max_ms']} ms |",
            f"| resident memory after warm-up ({int(WARMUP_FRACTION * 100)}%) / at the end / highest after warm-up | {r['rss_warm_mib']} / {r['rss_end_mib']} / {r['rss_max_after_warmup_mib']} MiB |",
            f"| resident memory growth after warm-up | {growth:+.1f} MiB |",
            f"| open descriptors (min / max during the run / at the end) | {r['fds_min']} / {r['fds_max']} / {r['fds_end']} |",
            f"| 10,000 concurrent: in flight together / answered exactly once | {r['in_flight_together']:,} / {r['concurrent_answered_once']:,} ({r['concurrent_seconds']} s) |",
            f"| after the concurrent phase: descriptors, resident memory | {r['fds_after_concurrent']}, {r['rss_after_concurrent_mib']} MiB |",
            f"| exit status at end of input, tracebacks on stderr | {r['exit_code']}, {r['tracebacks']} |",
            "",
            "Latency here includes waiting behind the other requests of the window; the sequential round trips are in the Core section. "
            "Resident memory is promptd's own process (a render worker, started by the first render of a caller's template, is a separate process of about 25 MiB; the mix renders only the shipped Primary, so there is none).",
            "",
        ]
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=1_000_000)
    parser.add_argument("--sessions", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--results", action="store_true")
    args = parser.parse_args()
    soak = Soak(args.count, args.sessions, args.seed)
    soak.setup()
    result = soak.mixed()
    result.update(soak.concurrent())
    result["exit_code"] = soak.close()
    result["tracebacks"] = soak.tracebacks
    print(orjson.dumps(result, option=orjson.OPT_INDENT_2).decode())
    if args.results:
        from results import replace_section

        replace_section("Soak", results_section(result))
    ok = result["answered"] == result["requests"] and result["concurrent_answered_once"] == CONCURRENT and result["exit_code"] == 0
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
