"""Writes one section of bench/RESULTS.md in place (the long runs, `make soak` and `make fuzz`,
each own one section and leave the others as `make bench` wrote them)."""

from __future__ import annotations

from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "RESULTS.md"


def replace_section(title: str, text: str) -> None:
    """Replaces the `## title` section (up to the next `## ` heading) with `text`, or appends it."""
    lines = RESULTS.read_text("utf-8").splitlines(keepends=True) if RESULTS.exists() else ["# Benchmark results\n", "\n"]
    heading = f"## {title}"
    start = next((i for i, line in enumerate(lines) if line.rstrip() == heading), None)
    block = text.rstrip("\n") + "\n\n"
    if start is None:
        body = "".join(lines).rstrip("\n") + "\n\n" + block
    else:
        end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
        body = "".join(lines[:start]) + block + "".join(lines[end:])
    RESULTS.write_text(body.rstrip("\n") + "\n", "utf-8")
