"""The one driver used for promptd and the baseline alike: spawn, cold start, sequential round
trips, pipelined throughput. Same code path for both, so the ratios compare like with like."""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import threading
import time
from typing import Any

import orjson


class Peer:
    def __init__(self, argv: list[str], env: dict[str, str] | None = None) -> None:
        self.started = time.perf_counter()
        # Buffered pipes: an unbuffered readline reads one byte per system call, which would make
        # large answers look slow for reasons of the driver's own.
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
        self.next_id = 0

    def send(self, method: str, params: Any) -> None:
        self.next_id += 1
        assert self.proc.stdin is not None
        self.proc.stdin.write(orjson.dumps({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}) + b"\n")
        self.proc.stdin.flush()

    def recv(self) -> Any:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            raise EOFError("peer closed stdout")
        return orjson.loads(line)

    def call(self, method: str, params: Any) -> Any:
        self.send(method, params)
        while True:
            reply = self.recv()
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method} failed: {reply['error']}")
                return reply["result"]

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def cpu_seconds(pid: int) -> float | None:
    """CPU time a live process (all its threads) has used so far, in nanosecond resolution, from
    Linux's schedstat; None elsewhere. Read at an answer, it is what that answer cost, whatever
    else the machine was doing."""
    total = 0
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/schedstat") as handle:
                total += int(handle.read().split()[0])
    except OSError:
        return None
    return total / 1e9


def promptd_command() -> list[str]:
    """`promptd serve` as a host spawns it: the console script installed beside this interpreter
    (`python -m promptd` adds runpy's own start, about 20 ms, that no host pays), else `-m`."""
    script = os.path.join(os.path.dirname(sys.executable), "promptd")
    if os.access(script, os.X_OK):
        return [script, "serve"]
    return [sys.executable, "-m", "promptd", "serve"]


PROMPTD = promptd_command()


def env_for_promptd() -> dict[str, str]:
    return dict(os.environ, PROMPTD_LOG_LEVEL="warning")


def cold_start(argv: list[str], runs: int, env: dict[str, str] | None = None) -> float:
    """Median seconds from spawn to the answer of the first `reminder/wrap`."""
    samples = []
    for _ in range(runs):
        peer = Peer(argv, env)
        peer.call("reminder/wrap", {"key": "session.cwd", "body": "/tmp"})
        samples.append(time.perf_counter() - peer.started)
        peer.close()
    return statistics.median(samples)


def round_trips(peer: Peer, method: str, params: Any, count: int, warmup: int = 50) -> list[float]:
    for _ in range(warmup):
        peer.call(method, params)
    samples = []
    for _ in range(count):
        started = time.perf_counter()
        peer.call(method, params)
        samples.append(time.perf_counter() - started)
    return samples


def percentile(samples: list[float], fraction: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def pipelined(argv: list[str], count: int, env: dict[str, str] | None = None) -> float:
    """Requests per second with `count` requests written back to back while replies are read."""
    peer = Peer(argv, env)
    peer.call("reminder/wrap", {"key": "k", "body": "warm"})
    line = b'{"jsonrpc":"2.0","id":%d,"method":"reminder/wrap","params":{"key":"session.cwd","body":"/home/dev/project"}}\n'
    payload = b"".join(line % (i + 10) for i in range(count))
    started = time.perf_counter()

    def write() -> None:
        assert peer.proc.stdin is not None
        peer.proc.stdin.write(payload)
        peer.proc.stdin.flush()

    writer = threading.Thread(target=write)
    writer.start()
    for _ in range(count):
        peer.recv()
    elapsed = time.perf_counter() - started
    writer.join()
    peer.close()
    return count / elapsed
