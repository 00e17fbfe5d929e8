"""Start-up: how long a host waits from spawning promptd until it is answered, and until it is
ready for a first turn, against two floors measured in the same run.

(a) a bare orjson echo (bench/baseline_server.py): the physical limit of a Python process;
(b) the floor of the required stack (bench/floor_server.py): asyncio, orjson and pydantic
    imported and one model validated;
(c) promptd's spawn to the answer of `initialize`;
(d) promptd's spawn to ready for a first turn: `initialize`, the first `prompt/render` of the
    Primary template, the first `turn/compose`, each answered.

Runs alternate between the four commands so a change in the machine's load falls on all of them.
`python bench/startup.py` prints the section (`--against OTHER/src` also measures another checkout
in the same rounds, for a before/after); `make bench` writes it into bench/RESULTS.md.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import driver  # noqa: E402

PROMPTD = driver.PROMPTD
BASELINE = [sys.executable, str(HERE / "baseline_server.py")]
FLOOR = [sys.executable, str(HERE / "floor_server.py")]
RUNS = 21
# Targets: promptd's first answer within 1.15x of the stack's floor, ready for a turn within 1.5x.
FIRST_ANSWER_TARGET = 1.15
FIRST_TURN_TARGET = 1.5

WRAP = {"key": "session.cwd", "body": "/tmp"}
INITIALIZE = {"client_info": {"name": "bench"}, "tools": {"by_kind": {"read": "read_file", "edit": "edit_file", "execute": "run_terminal_command", "plan": "todo_write", "search": "grep"}}}
RENDER = {"context": {"working_directory": "/home/dev/project", "os_name": "linux", "shell_path": "/bin/bash", "current_date": "2026-11-29"}}
COMPOSE = {"session": "s1", "user_message": "Fix the build"}


Sample = tuple[float, float | None]  # wall seconds, CPU seconds of the spawned process (Linux)


def first_answer(argv: list[str], method: str, params: object, env: dict[str, str] | None = None) -> Sample:
    peer = driver.Peer(argv, env)
    peer.call(method, params)
    sample = (time.perf_counter() - peer.started, driver.cpu_seconds(peer.proc.pid))
    peer.close()
    return sample


def env_with(source: str | None) -> dict[str, str]:
    """promptd's environment, running the package under `source` (another checkout's src/) if given."""
    env = driver.env_for_promptd()
    if source:
        env["PYTHONPATH"] = source
    return env


def first_turn(env: dict[str, str]) -> Sample:
    peer = driver.Peer(PROMPTD, env)
    peer.call("initialize", INITIALIZE)
    peer.call("session/update", {"session": "s1", "cwd": "/home/dev/project", "date": "2026-11-29"})
    peer.call("prompt/render", RENDER)
    peer.call("turn/compose", COMPOSE)
    sample = (time.perf_counter() - peer.started, driver.cpu_seconds(peer.proc.pid))
    peer.close()
    return sample


def measure(runs: int = RUNS, against: str | None = None) -> dict[str, Sample]:
    """Medians of wall and CPU time; with `against` (another checkout's src/), its promptd is
    measured in the same rounds as `initialize (against)` and `first_turn (against)`."""
    sources = {"": None, " (against)": against} if against else {"": None}
    samples: dict[str, list[Sample]] = {}
    # One warm-up round: the first spawn of each reads its files from disk.
    for index in range(runs + 1):
        round_ = {"echo": first_answer(BASELINE, "reminder/wrap", WRAP), "floor": first_answer(FLOOR, "reminder/wrap", WRAP)}
        for suffix, source in sources.items():
            round_["initialize" + suffix] = first_answer(PROMPTD, "initialize", INITIALIZE, env_with(source))
            round_["first_turn" + suffix] = first_turn(env_with(source))
        if index:
            for name, value in round_.items():
                samples.setdefault(name, []).append(value)
    medians: dict[str, Sample] = {}
    for name, values in samples.items():
        cpu = [c for _, c in values if c is not None]
        medians[name] = (statistics.median(w for w, _ in values), statistics.median(cpu) if cpu else None)
    return medians


def section(runs: int = RUNS, against: str | None = None) -> list[str]:
    m = measure(runs, against)
    floor, floor_cpu = m["floor"]

    def row(name: str, sample: Sample, target: float | None) -> str:
        value, cpu = sample
        ratio = value / floor
        met = "—" if target is None else ("yes" if ratio <= target else "**no**")
        shown = "(reported)" if target is None else f"<= {target}x"
        used = f"{cpu * 1000:.1f} ms ({cpu / floor_cpu:.2f}x)" if cpu is not None and floor_cpu else "n/a"
        return f"| {name} | {value * 1000:.1f} ms | {ratio:.2f}x | {shown} | {met} | {used} |"

    return [
        "## Start-up: spawn to first answer, spawn to first turn",
        "",
        f"Medians of {runs} spawns each, the four commands taking turns. Ratios are to (b), the floor of the "
        "stack promptd requires: an interpreter importing asyncio, orjson and pydantic and validating one model "
        "(`bench/floor_server.py`). promptd is spawned as hosts spawn it, the installed `promptd` command. "
        "The targets are on wall time; CPU is what the spawned process itself used up to the answer "
        "(Linux schedstat), which a loaded machine does not inflate.",
        "",
        "| measure | time | vs (b) | target | met | CPU (vs (b)) |",
        "| --- | --- | --- | --- | --- | --- |",
        row("(a) bare orjson echo, spawn to first answer (`bench/baseline_server.py`)", m["echo"], None),
        row("(b) floor: asyncio + orjson + pydantic, one model validated, spawn to first answer", m["floor"], None),
        row("(c) promptd, spawn to the `initialize` answer", m["initialize"], FIRST_ANSWER_TARGET),
        row("(d) promptd, spawn to ready for a first turn (`initialize`, `session/update`, first `prompt/render` of Primary, first `turn/compose`)", m["first_turn"], FIRST_TURN_TARGET),
        *(
            [
                row(f"(c) the same, `{against}`", m["initialize (against)"], None),
                row(f"(d) the same, `{against}`", m["first_turn (against)"], None),
            ]
            if against
            else []
        ),
        "",
    ]


if __name__ == "__main__":
    # python bench/startup.py [RUNS] [--against OTHER_CHECKOUT/src]
    args = sys.argv[1:]
    other = None
    if "--against" in args:
        at = args.index("--against")
        other = args[at + 1]
        del args[at : at + 2]
    # With PYTHONDONTWRITEBYTECODE set, every spawn would compile promptd's modules from source;
    # compile once, as an install does (bench/run.py does the same for `make bench`).
    import compileall

    for tree in filter(None, [str(HERE.parent / "src" / "promptd"), other and str(Path(other) / "promptd")]):
        compileall.compile_dir(tree, quiet=1)
    print("\n".join(section(int(args[0]) if args else RUNS, other)))
