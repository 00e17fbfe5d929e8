"""Per-shape throughput of `content/sanitize` (in-process domain function) against a near-limit
baseline over the same text in the same run: one compiled `re.search` for the character class of
everything the sanitizer cares about (a scan that must look at every character once), and
`str.translate` (a copy that touches every character). Run alone with
`python bench/sanitize_shapes.py`, or as a section of `make bench`."""

from __future__ import annotations

import random
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SIZE = 1 << 20  # 1 MiB of characters per shape
NONCE = "c0ffeeabcdef0123456789abcdef0123"
# Anything the sanitizer may have to look at: brackets and their look-alikes, escapes, delimiters.
SPECIAL = re.compile("[<\uff1c\u2039&%\\\\\ue203\ue204\U000e0000-\U000e007f\u200b-\u200d]")
TRANSLATE = str.maketrans({"\ue203": "[U+E203]"})


def _fill(pieces: Callable[[random.Random], str], size: int = SIZE, seed: int = 11) -> str:
    rng = random.Random(seed)
    out: list[str] = []
    length = 0
    while length < size:
        piece = pieces(rng)
        out.append(piece)
        length += len(piece)
    return "".join(out)[:size]


WORDS = (
    "the of and to in is that for it as was with be by on not he this are or his from at which but have an "
    "they you were her she there been one all we their has would when if so no more out up into than them "
    "can only other time new some could these two may first then do any like my now over such our man me "
    "even most made after also did many before must through back years where much your way well down "
    "should because each just those people how too little state good very make world still see own men "
    "work long get here between both life being under never day same another know while last might us"
).split()


def prose(rng: random.Random) -> str:
    words = [rng.choice(WORDS) for _ in range(rng.randint(8, 24))]
    sentence = " ".join(words).capitalize() + rng.choice([".", ".", ".", "?", "!"])
    return sentence + ("\n\n" if rng.random() < 0.15 else " ")


def log_line(rng: random.Random) -> str:
    level = rng.choice(["INFO", "INFO", "INFO", "DEBUG", "WARN", "ERROR"])
    ts = f"2026-11-29T{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}.{rng.randint(0, 999):03d}Z"
    message = rng.choice(
        [
            f"GET /api/v1/items/{rng.randint(1, 99999)}?page={rng.randint(1, 9)}&limit=50 200 {rng.randint(1, 900)}ms",
            f"worker-{rng.randint(1, 16)} picked job {rng.getrandbits(48):012x} from queue default",
            f"connection from 10.0.{rng.randint(0, 255)}.{rng.randint(0, 255)}:{rng.randint(1024, 65535)} closed (reset by peer)",
            f'user_id={rng.randint(1, 10**6)} action=login status=ok latency_ms={rng.randint(1, 300)} ua="Mozilla/5.0"',
            f"cache miss key=session:{rng.getrandbits(64):016x} size=0 ttl=3600",
            f"retrying upstream call attempt={rng.randint(1, 5)} backoff={rng.random():.3f}s error=timeout",
        ]
    )
    return f"{ts} {level:5} [{rng.choice(['api', 'db', 'queue', 'auth'])}] {message}\n"


def source_code() -> str:
    files = sorted(p for ext in ("py", "ts", "go") for p in ROOT.rglob(f"*.{ext}") if ".venv" not in p.parts and "node_modules" not in p.parts)
    text = "".join(p.read_text("utf-8", "replace") for p in files)
    return (text * (SIZE // max(1, len(text)) + 1))[:SIZE]


def json_output(rng: random.Random) -> str:
    return (
        f'{{"id": {rng.randint(1, 10**6)}, "path": "/home/dev/project/src/mod_{rng.randint(1, 99)}.py", '
        f'"line": {rng.randint(1, 2000)}, "match": "def handler(event): return {{\\"status\\": 200}}", '
        f'"score": {rng.random():.4f}, "tags": ["a", "b"], "url": "https://example.com/q?x=1&y=%20z"}}\n'
    )


def html(rng: random.Random) -> str:
    return rng.choice(
        [
            f'<div class="row"><a href="/item/{rng.randint(1, 999)}?a=1&amp;b=2">item &quot;{rng.randint(1, 99)}&quot;</a></div>\n',
            "<p>Some <b>bold</b> and <i>italic</i> text &mdash; with &lt;code&gt; entities &amp; more.</p>\n",
            '<script>if (a < b && c > d) { console.log("x"); }</script>\n',
            "<ul><li>one</li><li>two</li><li>three</li></ul>\n",
        ]
    )


def repeated(unit: str, size: int = SIZE) -> str:
    return (unit * (size // len(unit) + 1))[:size]


SHAPES: list[tuple[str, Callable[[], str], str]] = [
    ("plain English prose", lambda: _fill(prose), "ordinary"),
    ("plain log file", lambda: _fill(log_line), "logs/code"),
    ("source code (this repository's .py/.ts/.go)", source_code, "logs/code"),
    ("JSON tool output", lambda: _fill(json_output), "ordinary"),
    ("HTML", lambda: _fill(html), "ordinary"),
    ("worst: repeated <system-reminde", lambda: repeated("<system-reminde"), "worst"),
    ("worst: repeated &lt;system-reminde", lambda: repeated("&lt;system-reminde"), "worst"),
    ("worst: repeated \\u003csystem-reminde", lambda: repeated("\\u003csystem-reminde"), "worst"),
    ("worst: repeated %3Csystem-reminde", lambda: repeated("%3Csystem-reminde"), "worst"),
    ("worst: a run of <", lambda: repeated("<"), "worst"),
    ("worst: a run of &", lambda: repeated("&"), "worst"),
    ("worst: < with zero-width joiners", lambda: repeated("<\u200d\u200d\u200dsystem\u200dreminde"), "worst"),
    ("worst: a run of fullwidth ＜", lambda: repeated("\uff1c"), "worst"),
    ("worst: ＜ｓ pairs (fullwidth)", lambda: repeated("\uff1c\uff53"), "worst"),
    ("worst: <ѕ pairs (Cyrillic dze)", lambda: repeated("<\u0455"), "worst"),
    ("worst: < + zero-width joiner pairs", lambda: repeated("<\u200d"), "worst"),
    ("worst: unclosed PUA openings", lambda: repeated("\ue203" + NONCE + "\n"), "worst"),
    # Was quadratic: two sizes, so a regression shows as a falling rate without a minutes-long run.
    ("worst: a run of backslashes (64 KiB)", lambda: repeated("\\", 64 << 10), "worst"),
    ("worst: a run of backslashes (256 KiB)", lambda: repeated("\\", 256 << 10), "worst"),
]


def best(fn: Callable[[], object], repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return min(times)


def _versus(rate: float, baseline: float) -> str:
    return f"{baseline / rate:,.1f}x slower" if rate < baseline else f"{rate / baseline:,.1f}x faster"


def section() -> list[str]:
    sys.path.insert(0, str(ROOT / "src"))
    from promptd.reminders.sanitize import sanitize

    lines = [
        "## Sanitizer throughput by shape (in-process, best of 3)",
        "",
        "`sanitize(text, nonce)` on 1 MiB (in characters) of each shape, against two near-limit baselines over "
        "the same text in the same run: one compiled `re.search` for the class of every character the sanitizer "
        "looks at (`<`, `＜`, `‹`, `&`, `%`, `\\`, U+E203/E204, tag characters, zero-width characters), which "
        "must read every character, and `str.translate` with one mapping, which copies every character.",
        "",
        "| shape | size | sanitize | re.search baseline | str.translate baseline | sanitize vs re.search | target | met |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    worst = float("inf")
    for label, make, group in SHAPES:
        text = make()
        mib = len(text) / (1 << 20)
        sanitize(text[:4096], NONCE)  # warm caches
        t_sanitize = best(lambda: sanitize(text, NONCE))
        t_search = best(lambda: SPECIAL.search(text) or SPECIAL.search(text, len(text)))
        t_scan = best(lambda: SPECIAL.findall(text))
        t_translate = best(lambda: text.translate(TRANSLATE))
        rate = mib / t_sanitize
        target, met = "(reported)", "—"
        if group == "logs/code":
            target, met = ">= 100 MiB/s", "yes" if rate >= 100 else "**no**"
        elif group == "worst":
            target, met = ">= 10 MiB/s", "yes" if rate >= 10 else "**no**"
            worst = min(worst, rate)
        # re.search stops at the first hit; where the shape has hits early, findall is the full scan.
        search = mib / max(t_search, t_scan) if SPECIAL.search(text[:1024]) else mib / t_search
        lines.append(f"| {label} | {len(text) >> 10:,} KiB | {rate:,.1f} MiB/s | {search:,.0f} MiB/s | {mib / t_translate:,.0f} MiB/s | {_versus(rate, search)} | {target} | {met} |")
    lines += [
        "",
        f"Slowest worst-case shape: {worst:,.2f} MiB/s. A run of backslashes is measured at two sizes: "
        "a rate that falls as it grows would be superlinear cost (it was quadratic before the fix). Where the shape holds special characters, the `re.search` "
        "column is `findall` of the same class (a search would stop at the first one).",
        "",
    ]
    return lines


if __name__ == "__main__":
    print("\n".join(section()))
