"""The sanitizer over real text found on this machine, against near-limit baselines over the same
files in the same run: `re.findall("<")` (one pass that must read every character) and the
single-pattern sanitizer a host would write instead (`<\\s*/?system[-_]reminder` replaced, the
reference implementation's check). Files are sanitized one at a time, as a host sanitizes tool
results; ASCII, non-ASCII and HTML files are reported apart. Run alone with
`python bench/sanitize_corpus.py [--limit-mib N]`, or as a section of `make bench`.

The corpus: the Python standard library and this interpreter's site-packages, Go's source tree
(when `go` is installed), man pages and HTML documentation under /usr/share: every regular file up
to 4 MiB that decodes as UTF-8 and holds no NUL, read in a fixed order up to the size limit."""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import time
from collections.abc import Callable, Iterator
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
NONCE = "c0ffeeabcdef0123456789abcdef0123"
MAX_FILE = 4 << 20
PEER = re.compile(r"<\s*/?system[-_]reminder")
LIMIT_MIB = 192


def _roots() -> list[Path]:
    roots = [Path(sysconfig.get_paths()["stdlib"]), Path(sysconfig.get_paths()["purelib"])]
    go = shutil.which("go")
    if go:
        goroot = subprocess.run([go, "env", "GOROOT"], capture_output=True, text=True, check=False).stdout.strip()
        if goroot:
            roots.append(Path(goroot) / "src")
    roots += [Path("/usr/share/doc"), Path("/usr/share/man")]
    return [root for root in roots if root.is_dir()]


def _files(root: Path) -> Iterator[Path]:
    for folder, dirs, names in os.walk(root):
        dirs.sort()
        for name in sorted(names):
            path = Path(folder, name)
            if path.is_file() and not path.is_symlink():
                yield path


def corpus(limit_bytes: int) -> dict[str, list[str]]:
    """Texts by group ("ASCII", "non-ASCII", "HTML"), up to `limit_bytes` in all."""
    groups: dict[str, list[str]] = {"ASCII": [], "non-ASCII": [], "HTML": []}
    total = 0
    roots = _roots()
    # Each root gets an equal share first, so a large one (Go's tree) does not crowd out the rest.
    share = limit_bytes // max(1, len(roots))
    for root in roots:
        taken = 0
        for path in _files(root):
            if taken >= share or total >= limit_bytes:
                break
            try:
                if path.stat().st_size > MAX_FILE:
                    continue
                raw = path.read_bytes()
            except OSError:
                continue
            if not raw or b"\x00" in raw:
                continue
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError:
                continue
            group = "HTML" if path.suffix in (".html", ".htm") else ("ASCII" if text.isascii() else "non-ASCII")
            groups[group].append(text)
            taken += len(raw)
            total += len(raw)
    return groups


def cpu(fn: Callable[[str], object], texts: list[str], repeat: int = 3) -> float:
    """Best of `repeat` CPU times for `fn` over every text (CPU, so other load counts less)."""
    best = float("inf")
    for _ in range(repeat):
        started = time.process_time()
        for text in texts:
            fn(text)
        best = min(best, time.process_time() - started)
    return best


def section(limit_mib: int = LIMIT_MIB) -> list[str]:
    sys.path.insert(0, str(ROOT / "src"))
    from promptd.reminders.sanitize import sanitize

    groups = corpus(limit_mib << 20)
    lines = [
        f"## Sanitizer over real files ({time.strftime('%Y-%m-%d', time.gmtime())}, in-process, CPU, best of 3)",
        "",
        "Each file `sanitize(text, nonce)`d on its own, against two baselines over the same files in the same run: "
        '`re.findall("<")` (a pass that reads every character once) and the single-pattern sanitizer a host would '
        "write instead (`re.sub` of `<\\s*/?system[-_]reminder`). The corpus is read from this machine (`bench/sanitize_corpus.py`: "
        "the Python standard library and site-packages, Go's source, /usr/share/doc and man pages), files up to 4 MiB that are UTF-8.",
        "",
        '| files | count | size | promptd | findall("<") | single pattern | promptd vs findall | promptd vs single pattern | changed files |',
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    rates: dict[str, float] = {}
    all_texts: list[str] = []
    spent = {"ours": 0.0, "find": 0.0}
    for name, texts in groups.items():
        if not texts:
            continue
        all_texts += texts
        mib = sum(map(len, texts)) / (1 << 20)
        changed = sum(1 for text in texts if sanitize(text, NONCE).text != text)
        t_ours = cpu(lambda text: sanitize(text, NONCE), texts)
        t_find = cpu(lambda text: re.findall("<", text), texts)
        t_peer = cpu(lambda text: PEER.sub("<untrusted-system-reminder", text), texts)
        rates[name] = mib / t_ours
        spent["ours"] += t_ours
        spent["find"] += t_find
        lines.append(
            f"| {name} | {len(texts):,} | {mib:,.1f} MiB | {mib / t_ours:,.1f} MiB/s | {mib / t_find:,.0f} MiB/s | {mib / t_peer:,.0f} MiB/s "
            f"| {t_find / t_ours:.3f}x | {t_peer / t_ours:.3f}x | {changed} |"
        )
    mib = sum(map(len, all_texts)) / (1 << 20)
    t_ours, t_find = spent["ours"], spent["find"]
    lines += [
        "",
        f"All {len(all_texts):,} files ({mib:,.0f} MiB): promptd {mib / t_ours:,.1f} MiB/s, {t_find / t_ours:.3f}x of findall (target >= 0.25x: "
        f"{'met' if t_find / t_ours >= 0.25 else '**not met**'}). Non-ASCII files are "
        f"{rates.get('ASCII', 0) / max(rates.get('non-ASCII', 1e-9), 1e-9):.2f}x slower than ASCII per MiB (target <= 1.5x); "
        f"HTML at {rates.get('HTML', 0):,.1f} MiB/s (target >= 50). A changed file would be a false change: none of these files holds reminder markup.",
        "",
    ]
    return lines


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit-mib", type=int, default=LIMIT_MIB)
    print("\n".join(section(parser.parse_args().limit_mib)))
