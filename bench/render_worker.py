"""What the render worker costs: a caller's custom template rendered in the worker process versus
the shipped Primary template rendered in-process from its compile cache, over the same wire and
driver; the same custom template rendered in-process (engine alone) as the floor; the worker's
cold start and its replacement after a timeout; and how soon a looping template is stopped.

Run alone with `python bench/render_worker.py --results` (writes its section of RESULTS.md), or
as a section of `make bench`.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import driver  # noqa: E402

PROMPTD = driver.PROMPTD
ROUNDS = 300
CONTEXT = {"working_directory": "/home/dev/project", "os_name": "linux", "shell_path": "/bin/bash", "current_date": "2026-12-01"}
TOOLS = {"by_kind": {"read": "read_file", "edit": "edit_file", "execute": "run_terminal_command", "plan": "todo_write", "search": "grep"}}
# A realistic custom base template: a few dozen lines, variables, guards and a loop.
CUSTOM = "\n".join(
    ["You are a coding agent working in ${{ working_directory }} on ${{ os_name }}."]
    + [f"Rule {n}: ${{% if tools.by_kind.read %}}read with ${{{{ tools.by_kind.read }}}} first.${{% endif %}}" for n in range(30)]
    + ["${% for kind, name in tools.by_kind.items() %}- ${{ kind }}: ${{ name }}\n${% endfor %}"]
)
SPIN = "${% for i in range(100000) %}${% for j in range(100000) %}${% endfor %}${% endfor %}"


def peer(env: dict[str, str] | None = None) -> driver.Peer:
    full = driver.env_for_promptd()
    full.update(env or {})
    return driver.Peer(PROMPTD, full)


def row(name: str, samples: list[float], versus: float | None) -> str:
    p50 = driver.percentile(samples, 0.5)
    ratio = f"{p50 / versus:.2f}x" if versus else "—"
    return f"| {name} | {p50 * 1e6:,.0f} µs | {driver.percentile(samples, 0.99) * 1e6:,.0f} µs | {ratio} |"


def in_process_custom(rounds: int) -> list[float]:
    from promptd.prompt import pipeline
    from promptd.prompt.context import PromptContext
    from promptd.prompt.engine import engine

    values = pipeline.variables(PromptContext.model_validate(CONTEXT), TOOLS["by_kind"])
    eng = engine()
    eng.render(CUSTOM, values, "custom")
    samples = []
    for _ in range(rounds):
        started = time.perf_counter()
        eng.render(CUSTOM, values, "custom")
        samples.append(time.perf_counter() - started)
    return samples


def section() -> list[str]:
    server = peer()
    primary = driver.round_trips(server, "prompt/render", {"context": CONTEXT, "tools": TOOLS}, ROUNDS)
    custom = driver.round_trips(server, "prompt/render", {"context": dict(CONTEXT, system_prompt={"custom": CUSTOM}), "tools": TOOLS}, ROUNDS)
    server.close()
    floor = in_process_custom(ROUNDS)

    cold = []
    for _ in range(3):
        fresh = peer()
        fresh.call("reminder/keys", {})
        started = time.perf_counter()
        fresh.call("prompt/render", {"context": dict(CONTEXT, system_prompt={"custom": CUSTOM}), "tools": TOOLS})
        cold.append(time.perf_counter() - started)
        fresh.close()

    limited = peer({"PROMPTD_PROMPT__RENDER_TIMEOUT_MS": "300"})
    limited.call("prompt/render", {"context": dict(CONTEXT, system_prompt={"custom": CUSTOM}), "tools": TOOLS})
    stopped, replaced = [], []
    for _ in range(3):
        started = time.perf_counter()
        limited.send("prompt/render", {"context": {"system_prompt": {"custom": SPIN}}})
        reply = limited.recv()
        stopped.append(time.perf_counter() - started)
        assert reply["error"]["data"]["kind"] == "render_timeout", reply
        started = time.perf_counter()
        limited.call("prompt/render", {"context": dict(CONTEXT, system_prompt={"custom": CUSTOM}), "tools": TOOLS})
        replaced.append(time.perf_counter() - started)
    limited.close()

    p50 = driver.percentile(primary, 0.5)
    return [
        "## Render worker",
        "",
        f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}. A caller's template (custom base or body) is compiled and rendered "
        "in a worker process that promptd kills at the CPU deadline (`prompt.render_timeout_ms`) or on cancellation; "
        "the shipped Primary/Subagent templates stay in-process and cached, the sealed Apply-Patch template in-process and uncached. "
        f"The custom template here is {len(CUSTOM.splitlines())} lines with guards and a loop; ratios are against the Primary render.",
        "",
        "| case | p50 | p99 | vs Primary cached |",
        "| --- | --- | --- | --- |",
        row("prompt/render, Primary, in-process, compiled template cached", primary, None),
        row("prompt/render, custom template, in the warm worker (compiled there, cached)", custom, p50),
        row("the same custom render in-process, engine alone (no wire: the floor)", floor, None),
        "",
        "| worker event | median |",
        "| --- | --- |",
        f"| first custom render of a fresh server (the worker is started by the first prompt/render) | {sorted(cold)[1] * 1000:.0f} ms |",
        f"| a looping template answered `render_timeout` (deadline 300 ms of CPU) | {sorted(stopped)[1] * 1000:.0f} ms |",
        f"| the next custom render after that kill (replacement worker) | {sorted(replaced)[1] * 1000:.0f} ms |",
        "",
        f"The worker adds {(driver.percentile(custom, 0.5) - driver.percentile(floor, 0.5)) * 1e6:,.0f} µs to a custom render at the median "
        "(a thread hop, two pipe writes and reads, JSON of the variables); the Primary render does not pass through it.",
        "",
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", action="store_true")
    args = parser.parse_args()
    lines = section()
    print("\n".join(lines))
    if args.results:
        from results import replace_section

        replace_section("Render worker", "\n".join(lines))
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PROMPTD_LOG_LEVEL", "warning")
    raise SystemExit(main())
