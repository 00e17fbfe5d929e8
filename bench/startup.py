"""Start-up: how long a host waits from spawning promptd until it is answered, and until it is
ready for a first turn, against two floors measured in the same run.

(a) a bare orjson echo (bench/baseline_server.py): the physical limit of a Python process;
(b) the floor of the required stack (bench/floor_server.py): asyncio, orjson and pydantic
    imported and one model validated;
(c) promptd's spawn to the answer of `initialize`;
(d) promptd's spawn to ready for a first turn: `initialize`, the first `prompt/render` of the
    Primary template, the first `turn/compose`, each answered;
(e), (f) the same two for promptd as users install it: a wheel built from this checkout and
    installed into a new virtual environment (pip compiles its bytecode at install).

Runs alternate between the commands so a change in the machine's load falls on all of them.
`python bench/startup.py` prints the section (`--against OTHER/src` also measures another checkout
in the same rounds, for a before/after); `make bench` writes it into bench/RESULTS.md.
"""

from __future__ import annotations

import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import driver  # noqa: E402

PROMPTD = driver.PROMPTD
BASELINE = [sys.executable, str(HERE / "baseline_server.py")]
FLOOR = [sys.executable, str(HERE / "floor_server.py")]
RUNS = 21
# Targets: promptd's first answer within 1.15x of the stack's floor, ready for a turn within 1.5x
# from a checkout and within 1.4x as users install it.
FIRST_ANSWER_TARGET = 1.15
FIRST_TURN_TARGET = 1.5
INSTALLED_FIRST_TURN_TARGET = 1.4
# What a wheel is built from: the files pyproject.toml names, copied so the build leaves nothing in
# the checkout (and no build/ left there from an earlier build can slip stale modules in).
BUILD_INPUTS = ("pyproject.toml", "VERSION", "README.md", "LICENSE", "MANIFEST.in", "src")

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


def installed_promptd(root: Path) -> list[str]:
    """`promptd serve` from a wheel of this checkout installed into a new virtual environment under
    `root`, as `pip install promptd` leaves it: the package's bytecode compiled by pip at install,
    the console script pip writes. The dependencies are the ones this interpreter already has (a
    .pth file names its site-packages): the same files the floor imports, and no download."""
    source = root / "source"
    source.mkdir()
    for name in BUILD_INPUTS:
        origin = HERE.parent / name
        if origin.is_dir():
            shutil.copytree(origin, source / name, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
        else:
            shutil.copy2(origin, source / name)
    wheels = root / "wheels"
    quiet = {"check": True, "stdout": subprocess.DEVNULL}
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", str(wheels), str(source)], **quiet)
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], **quiet)
    python = venv / "bin" / "python"
    (wheel,) = wheels.glob("promptd-*.whl")
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps", "--no-index", str(wheel)], **quiet)
    purelib = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], check=True, capture_output=True, text=True).stdout.strip()
    (Path(purelib) / "_bench_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n", "utf-8")
    found = subprocess.run([str(python), "-c", "import promptd; print(promptd.__file__)"], check=True, capture_output=True, text=True).stdout.strip()
    if not found.startswith(str(venv)):
        raise RuntimeError(f"the new environment imports promptd from {found}, not from its own install")
    return [str(venv / "bin" / "promptd"), "serve"]


def first_turn(env: dict[str, str], argv: list[str] = PROMPTD) -> Sample:
    peer = driver.Peer(argv, env)
    peer.call("initialize", INITIALIZE)
    peer.call("session/update", {"session": "s1", "cwd": "/home/dev/project", "date": "2026-11-29"})
    peer.call("prompt/render", RENDER)
    peer.call("turn/compose", COMPOSE)
    sample = (time.perf_counter() - peer.started, driver.cpu_seconds(peer.proc.pid))
    peer.close()
    return sample


def measure(runs: int = RUNS, against: str | None = None, installed: list[str] | None = None) -> dict[str, Sample]:
    """Medians of wall and CPU time; with `against` (another checkout's src/), its promptd is
    measured in the same rounds as `initialize (against)` and `first_turn (against)`; with
    `installed` (the command of an installed promptd), that one as `initialize (installed)` and
    `first_turn (installed)`."""
    sources = {"": None, " (against)": against} if against else {"": None}
    samples: dict[str, list[Sample]] = {}
    # One warm-up round: the first spawn of each reads its files from disk.
    for index in range(runs + 1):
        round_ = {"echo": first_answer(BASELINE, "reminder/wrap", WRAP), "floor": first_answer(FLOOR, "reminder/wrap", WRAP)}
        for suffix, source in sources.items():
            round_["initialize" + suffix] = first_answer(PROMPTD, "initialize", INITIALIZE, env_with(source))
            round_["first_turn" + suffix] = first_turn(env_with(source))
        if installed:
            round_["initialize (installed)"] = first_answer(installed, "initialize", INITIALIZE, env_with(None))
            round_["first_turn (installed)"] = first_turn(env_with(None), installed)
        if index:
            for name, value in round_.items():
                samples.setdefault(name, []).append(value)
    medians: dict[str, Sample] = {}
    for name, values in samples.items():
        cpu = [c for _, c in values if c is not None]
        medians[name] = (statistics.median(w for w, _ in values), statistics.median(cpu) if cpu else None)
    return medians


def section(runs: int = RUNS, against: str | None = None) -> list[str]:
    with tempfile.TemporaryDirectory(prefix="promptd-bench-install-") as root:
        m = measure(runs, against, installed_promptd(Path(root)))
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
        f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}. Medians of {runs} spawns each, the commands taking turns. Ratios are to (b), the floor of the "
        "stack promptd requires: an interpreter importing asyncio, orjson and pydantic and validating one model "
        "(`bench/floor_server.py`). promptd is spawned as hosts spawn it, the `promptd` command: (c) and (d) "
        "from this checkout's editable install (its bytecode compiled before the run), (e) and (f) from a wheel "
        "built from the checkout and installed by pip into a virtual environment created for the run (pip "
        "compiles the bytecode at install; the dependencies are the floor's own, named by a .pth file). "
        "The targets are on wall time; CPU is what the spawned process itself used up to the answer "
        "(Linux schedstat), which a loaded machine does not inflate.",
        "",
        "| measure | time | vs (b) | target | met | CPU (vs (b)) |",
        "| --- | --- | --- | --- | --- | --- |",
        row("(a) bare orjson echo, spawn to first answer (`bench/baseline_server.py`)", m["echo"], None),
        row("(b) floor: asyncio + orjson + pydantic, one model validated, spawn to first answer", m["floor"], None),
        row("(c) promptd, spawn to the `initialize` answer", m["initialize"], FIRST_ANSWER_TARGET),
        row("(d) promptd, spawn to ready for a first turn (`initialize`, `session/update`, first `prompt/render` of Primary, first `turn/compose`)", m["first_turn"], FIRST_TURN_TARGET),
        row("(e) promptd installed from its wheel, spawn to the `initialize` answer", m["initialize (installed)"], FIRST_ANSWER_TARGET),
        row("(f) promptd installed from its wheel, spawn to ready for a first turn (as (d))", m["first_turn (installed)"], INSTALLED_FIRST_TURN_TARGET),
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
