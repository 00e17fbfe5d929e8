"""`prompt/lint` of a 10,000-line template (the shipped Primary template repeated), in-process,
against near-limit baselines over the same text in the same run: Jinja's parser alone (the least
any lint over the syntax tree must do) and parse + compile (what the lint adds to that is its own
walks). Also: linting the unchanged template again (a cache hit by content hash), and a 20,000-line
template, so that a time growing faster than the size would show. Run alone with
`python bench/lint_large.py`, or as a section of `make bench`."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))

LINES = 10_000
# A cold lint may cost this many times Jinja's parse + compile of the same text: the lint walks
# the tree three times (guards, names, portability) and the token stream twice (columns).
TARGET_RATIO = 3.0
# A cached lint must answer in well under a millisecond whatever the size (a hash and a lookup).
TARGET_CACHED_MS = 50.0


def _template(lines: int) -> str:
    """Whole copies of the Primary template (cutting one would leave a block open), at least
    `lines` long."""
    from promptd.prompt.pipeline import shipped_source

    block = shipped_source("primary")
    copies = -(-lines // (block.count("\n") + 1))
    return "\n".join([block] * copies)


def _best(run: Callable[[], object], repeat: int = 3) -> float:
    # CPU time of this process: the work is single-threaded and CPU-bound, and on a shared
    # machine wall-clock time mostly measures the neighbours.
    best = float("inf")
    for _ in range(repeat):
        started = time.process_time()
        run()
        best = min(best, time.process_time() - started)
    return best


def section() -> list[str]:
    from promptd.prompt import lint as module
    from promptd.prompt.engine import engine

    env = engine().environment
    rows = []
    cold_10k = None
    for lines in (LINES, 2 * LINES):
        source = _template(lines)

        def cold() -> object:
            module._cache.clear()
            return module.lint(source)

        t_cold = _best(cold)
        found = len(module.lint(source))
        t_cached = _best(lambda: module.lint(source), repeat=5)
        t_parse = _best(lambda: env.parse(source))
        t_compile = _best(lambda: env.compile(source))
        ratio = t_cold / t_compile
        if lines == LINES:
            cold_10k = t_cold
        rows.append((source.count("\n") + 1, len(source), t_cold, t_cached, t_parse, t_compile, ratio, found))
    lines_out = [
        "## Lint of a large template (in-process, CPU time, best of 3)",
        "",
        "`prompt/lint` (guard rule, undefined names, portability; strict) of the shipped Primary template repeated to the given size, "
        "against Jinja's own parse and parse + compile of the same text in the same run.",
        "",
        "| lines | size | lint, cold | lint, unchanged (cached) | Jinja parse | Jinja parse + compile | cold vs parse + compile | target | met |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for lines, size, t_cold, t_cached, t_parse, t_compile, ratio, _found in rows:
        met = "yes" if ratio <= TARGET_RATIO and t_cached * 1000 <= TARGET_CACHED_MS else "**no**"
        lines_out.append(
            f"| {lines:,} | {size >> 10:,} KiB | {t_cold * 1000:,.0f} ms | {t_cached * 1000:,.2f} ms | {t_parse * 1000:,.0f} ms | {t_compile * 1000:,.0f} ms "
            f"| {ratio:.2f}x | <= {TARGET_RATIO:g}x, cached <= {TARGET_CACHED_MS:g} ms | {met} |"
        )
    growth = rows[1][2] / cold_10k if cold_10k else 0
    lines_out += [
        "",
        f"Twice the lines take {growth:.2f}x the time (linear would be 2x). The cached figure is a SHA-256 of the text and a dictionary lookup; "
        f"the cache holds {module.CACHE_ENTRIES} results, keyed by content and options.",
        "",
    ]
    return lines_out


if __name__ == "__main__":
    print("\n".join(section()))
