"""Linear time for every method on every input: an adversarial-shape suite.

Each case builds an input of size n and of size 8n in the same adversarial shape (runs of each
special character, near-miss tags, entity / percent / backslash runs, unclosed openings, colliding
keys, deep nesting, many parts) and asserts that the time grows linearly: the ratio of the two
times stays under GROWTH_LIMIT. A quadratic method gives a ratio near 64. No absolute time is ever
asserted, so the suite means the same on a fast and a slow machine.

n is calibrated per case so that one call at n takes at least TARGET_SECONDS; a case whose cost
cannot grow with n (a value nested beyond the depth limit) is timed over repeated calls instead.
Times are the best of REPEATS runs of the process's CPU time (time.process_time, so other
processes sharing a busy machine do not count) with the garbage collector paused.
"""

from __future__ import annotations

import gc
import inspect
import time
from collections.abc import Callable
from dataclasses import dataclass

import pytest

from promptd.citations import markers
from promptd.reminders import history, provenance, sanitize, values

# Growth ratios of CPU time: run alone (`make test` runs the serial tests after the parallel
# run), since another process's load on the same cores inflates a large input's time.
pytestmark = pytest.mark.serial

# ---------------------------------------------------------------------------------------------
# Adapters: the one place that knows the domain functions' signatures. If a signature changes,
# fix it here.
# ---------------------------------------------------------------------------------------------

NONCE = "c0ffeeabcdef0123456789abcdef0123"  # 32 hex characters, letters included
STYLES = ("pua", "xml")  # parse / strip / history run once per reminder style, timed together


def _identity(fn: Callable[..., object]) -> dict[str, object]:
    """The keyword arguments that say who we are: a Trust (nonce plus ledger) where the function
    takes one, else the bare nonce."""
    params = inspect.signature(fn).parameters
    if "trust" in params:
        from promptd.reminders.ledger import Ledger, Trust

        return {"trust": Trust(NONCE, Ledger(4096))}
    return {"nonce": NONCE}


def _per_style(fn: Callable[..., object]) -> Callable[..., object]:
    """Calls `fn` once per style when it takes one (the sum is timed), once otherwise."""
    identity = _identity(fn)
    if "style" not in inspect.signature(fn).parameters:
        return lambda first: fn(first, **identity)
    return lambda first: [fn(first, style=style, **identity) for style in STYLES]


def sanitize_text(text: str) -> object:
    return sanitize.sanitize(text, NONCE)


def sanitize_value(value: object) -> object:
    return values.sanitize_value(value, NONCE)


_parse = _per_style(provenance.parse)
_strip = _per_style(provenance.strip)
_history = _per_style(history.sanitize_history)


def parse_reminders(text: str) -> object:
    return _parse(text)


def strip_reminders(text: str) -> object:
    return _strip(text)


def sanitize_history(messages: list[tuple[str, object] | dict[str, object]]) -> object:
    """Messages as (role, content) pairs, or as an SDK serializes them."""
    return _history([m if isinstance(m, dict) else {"role": m[0], "content": m[1]} for m in messages])


def sanitize_user_message(text: str) -> object:
    return sanitize_history([("user", text)])


def parse_citations(text: str) -> object:
    """Complete text and streaming (a cut-off marker becomes `pending`), timed together."""
    return markers.parse(text, final=True), markers.parse(text, final=False)


# provenance.strip runs provenance.parse and history (user) runs its parse_marked and the sanitizer,
# so a superlinear parse shows in both; sanitize_value on a string is sanitize. Each method is
# still named in the failure it causes.
CITATIONS = "citations.parse, complete and streaming"
TEXT_METHODS: dict[str, Callable[[str], object]] = {
    "sanitize": sanitize_text,
    "provenance.parse and strip": lambda text: (parse_reminders(text), strip_reminders(text)),
    "history/sanitize of a user message": sanitize_user_message,
    CITATIONS: parse_citations,
}

# ---------------------------------------------------------------------------------------------
# Measurement
# ---------------------------------------------------------------------------------------------

GROWTH = 8
GROWTH_LIMIT = GROWTH * 2.5  # linear with slack; quadratic is ~64
TARGET_SECONDS = 0.004  # 4 ms at n, 32 ms at 8n: far above the CPU clock's resolution (ns) and the best of REPEATS evens out noise
REPEATS = 3
# Rounds of REPEATS runs of the large input before a case is called superlinear.
ATTEMPTS = 3
MAX_UNITS = 1 << 18  # the builders' n never goes past this (memory); calls are repeated instead


def _time_once(fn: Callable[[object], object], value: object, calls: int) -> float:
    gc.disable()
    try:
        started = time.process_time()
        for _ in range(calls):
            fn(value)
        return time.process_time() - started
    finally:
        gc.enable()


def _best(fn: Callable[[object], object], value: object, calls: int) -> float:
    return min(_time_once(fn, value, calls) for _ in range(REPEATS))


@dataclass
class Growth:
    n: int
    calls: int
    small: float
    large: float

    @property
    def ratio(self) -> float:
        return self.large / self.small

    def __str__(self) -> str:
        return (
            f"n={self.n:,} -> {GROWTH * self.n:,} (x{self.calls} calls): {self.small * 1000:.1f} ms -> "
            f"{self.large * 1000:.1f} ms, ratio {self.ratio:.1f} (limit {GROWTH_LIMIT:.0f}, quadratic ~{GROWTH * GROWTH})"
        )


def growth(fn: Callable[[object], object], build: Callable[[int], object], start: int = 256) -> Growth:
    """Calibrates n (then the number of calls) until one measurement at n takes TARGET_SECONDS,
    then times n and GROWTH * n."""
    n, calls = start, 1
    gc.collect()
    fn(build(n))  # warm caches (fold tables, compiled patterns)
    while True:
        # A single run decides whether to grow; the best of REPEATS confirms (a busy machine
        # makes single runs long, and the best is what is compared).
        elapsed = _time_once(fn, build(n), calls)
        if elapsed >= TARGET_SECONDS:
            small = _best(fn, build(n), calls)
            if small >= TARGET_SECONDS / 2:
                break
            elapsed = small
        # Grow fast while far off, by 2 when near: a quadratic case must not overshoot far, as
        # its 8n run costs 64 times its n run.
        factor = 2 if elapsed * 8 >= TARGET_SECONDS else 8
        if n * GROWTH * factor <= MAX_UNITS:
            n *= factor
        else:
            calls *= factor
    large_input = build(GROWTH * n)
    large = float("inf")
    for attempt in range(ATTEMPTS):
        for _ in range(REPEATS):
            large = min(large, _time_once(fn, large_input, calls))
            # The best of the runs can only go down: once under the limit it passes. Far over it
            # is no reason to stop: one slow phase of the machine (a page-fault storm on a 1 MB
            # input) made a linear case measure 40x; a quadratic one stays near 64x however often
            # it is measured.
            if large / small < GROWTH_LIMIT:
                return Growth(n, calls, small, large)
        if attempt < ATTEMPTS - 1:  # in between: a busy machine may have slowed the small runs too
            small = min(small, _best(fn, build(n), calls))
    return Growth(n, calls, small, large)


def assert_linear(fn: Callable[[object], object], build: Callable[[int], object]) -> None:
    result = growth(fn, build)
    print(result)
    assert result.ratio < GROWTH_LIMIT, f"superlinear: {result}"


def test_the_measure_tells_a_quadratic_function_from_a_linear_one():
    # The harness itself, at its short calibration target: a scan per character of a prefix is
    # quadratic, one scan is linear.
    def quadratic(text: str) -> object:
        return [text.count(ch) for ch in text[: len(text) // 64]]

    def build(n: int) -> str:
        return "a" * n

    assert growth(quadratic, build).ratio > GROWTH_LIMIT
    assert growth(lambda text: text.count("x"), build).ratio < GROWTH_LIMIT


# ---------------------------------------------------------------------------------------------
# Text shapes: build(n) gives about n units of the shape
# ---------------------------------------------------------------------------------------------


def run(unit: str) -> Callable[[int], str]:
    return lambda n: unit * n


TAG_A = "\U000e0041"
ZWJ = "\u200d"

TEXT_SHAPES: dict[str, Callable[[int], str]] = {
    # runs of each special character
    "a run of <": run("<"),
    "a run of &": run("&"),
    "a run of %": run("%"),
    "a run of backslashes": run("\\"),
    "a run of fullwidth ＜": run("\uff1c"),
    "a run of ‹": run("\u2039"),
    "a run of U+E203": run("\ue203"),
    "a run of U+E204": run("\ue204"),
    "a run of Unicode tag characters": run(TAG_A),
    "a run of zero-width joiners": run(ZWJ),
    "a run of [": run("["),
    "a run of U+E200": run("\ue200"),
    "a run of U+FFFC": run("\ufffc"),
    "a run of < separated by zero-width joiners": run("<" + ZWJ),
    # near-miss tags repeated
    "repeated <system-reminde": run("<system-reminde"),
    "repeated <system-reminder without >": run("<system-reminder"),
    "repeated <display-trigge": run("<display-trigge"),
    "repeated &lt;system-reminde": run("&lt;system-reminde"),
    "repeated %3Csystem-reminde": run("%3Csystem-reminde"),
    "repeated \\u003csystem-reminde": run("\\u003csystem-reminde"),
    "repeated <s-y-s-t-e-m-r-e-m-i-n-d-e": run("<s-y-s-t-e-m-r-e-m-i-n-d-e"),
    "repeated < system reminde with invisibles": run("<" + ZWJ * 3 + "system" + ZWJ + "reminde"),
    # markup a renderer hides, read through inside a name
    "repeated <sys<b></b>": run("<sys<b></b>"),
    "a name prefix then n markup pieces": lambda n: "<sys" + "<b>" * n + "tem-reminder>",
    "a name prefix then n tags that begin a name": lambda n: "<sy" + "<s>" * n,
    'repeated <sys<b title=" unclosed': run('<sys<b title="'),
    "repeated <sys<!-- unclosed": run("<sys<!--"),
    "repeated <sys then Markdown markers": run("<sys**`~"),
    # operators applied to calls, letters TR39 does not list, spacing marks read as letters
    "repeated a <- system_reminder(": run("a <- system_reminder("),
    "repeated <\u023fy\u023f\u0288\u1d92 (hooked letters)": run("<\u023fy\u023f\u0288\u1d92"),
    "a name prefix then a run of ogoneks": lambda n: "<system-rem" + "\u02db" * n,
    "repeated [[cite: without a closer": run("[[cite:t0_src_1"),
    "repeated U+E200 cite U+E202 without a closer": run("\ue200cite\ue202t0"),
    "repeated U+FFFC cite U+FFFC without a closer": run("\ufffccite\ufffct0"),
    # entity runs
    "one entity nested n times (&amp;amp;amp;…)": lambda n: "&" + "amp;" * n + "lt;system-reminder>",
    "repeated &#x3c;": run("&#x3c;"),
    "&lt; followed by a run of &amp;": lambda n: "&lt;" + "&amp;" * n,
    # percent runs
    "a run of %25": run("%25"),
    "a run of %25 then 3C": lambda n: "%25" * n + "3Csystem-reminder>",
    # backslash runs
    "a run of backslashes then u003c": lambda n: "\\" * n + "u003csystem-reminder>",
    "repeated \\\\u003c": run("\\\\u003c"),
    # unclosed openings
    "unclosed PUA openings": run("\ue203" + "0" * 32 + "\n"),
    "unclosed PUA openings with the nonce": run("\ue203" + NONCE + "\n"),
    "unclosed PUA openings before one closing delimiter": lambda n: ("\ue203" + NONCE + "\n") * n + "\n" + NONCE + "\ue204",
    "unclosed XML openings": run('<system-reminder nonce="x">'),
    "unclosed XML openings before one closing tag": lambda n: '<system-reminder nonce="x">' * n + "</system-reminder>",
    "repeated closing XML tags": run("</system-reminder>"),
    "nonce copies in alternating case": lambda n: (NONCE + NONCE.upper()) * n,
    "nonce prefixes": run(NONCE[:-1]),
}

# Shapes known to be superlinear, (method, shape) -> reason, each marked xfail(strict=True) so a
# fix shows up as XPASS and the mark must go. Empty since the sanitizer's backslash-run fix.
KNOWN_SUPERLINEAR: dict[tuple[str, str], str] = {}
CITATION_OPENERS = ("[", "\ue200", "\ufffc")


def _applies(method: str, shape: str) -> bool:
    """The citation parser's opener regex passes over everything but its three openers in C,
    so it is timed only on shapes that hold one (the rest cost time without telling anything)."""
    return method != CITATIONS or any(opener in TEXT_SHAPES[shape](4) for opener in CITATION_OPENERS)


def _text_cases() -> list[object]:
    cases = []
    for shape in TEXT_SHAPES:
        for method in TEXT_METHODS:
            if not _applies(method, shape):
                continue
            marks = []
            reason = KNOWN_SUPERLINEAR.get((method, shape))
            if reason:
                marks.append(pytest.mark.xfail(strict=True, reason=reason))
            cases.append(pytest.param(method, shape, id=f"{method} on {shape}", marks=marks))
    return cases


@pytest.mark.parametrize(("method", "shape"), _text_cases())
def test_every_text_method_takes_linear_time_on_every_adversarial_shape(method: str, shape: str) -> None:
    assert_linear(TEXT_METHODS[method], TEXT_SHAPES[shape])


# ---------------------------------------------------------------------------------------------
# Structured shapes
# ---------------------------------------------------------------------------------------------


def _digits(i: int, base: int, width: int) -> list[int]:
    out = []
    for _ in range(width):
        out.append(i % base)
        i //= base
    return out


def keys_differing_by_tag_characters(n: int) -> dict[str, int]:
    """n keys that all become "k" once Unicode tag characters are removed; each key is short."""
    return {"k" + "".join(chr(0xE0000 + d) for d in _digits(i, 128, 4)): i for i in range(n)}


def keys_differing_by_nonce_case(n: int) -> dict[str, int]:
    """n keys that all become "k[nonce]": each holds the nonce in a different letter case."""
    letters = [i for i, ch in enumerate(NONCE) if ch.isalpha()]
    keys = {}
    for i in range(n):
        chars = list(NONCE)
        for bit, position in enumerate(letters):
            if i >> bit & 1:
                chars[position] = chars[position].upper()
        high = "".join(chr(0xE0000 + d) for d in _digits(i >> len(letters), 128, 2))
        keys["k" + "".join(chars) + high] = i
    return keys


def keys_with_taken_duplicate_names(n: int) -> dict[str, int]:
    """Keys "k [duplicate key 2]" … already present, then n more keys that all become "k"."""
    keys: dict[str, int] = {f"k [duplicate key {i}]": i for i in range(2, n + 2)}
    keys.update(keys_differing_by_tag_characters(n))
    return keys


def nested_lists(depth: int, leaf: object = "<") -> object:
    value = leaf
    for _ in range(depth):
        value = [value]
    return value


def nested_dicts(depth: int, leaf: object = "<") -> object:
    value = leaf
    for _ in range(depth):
        value = {"<k": value}
    return value


LIMIT = values.MAX_VALUE_DEPTH

VALUE_SHAPES: dict[str, Callable[[int], object]] = {
    "a dict whose keys all collide once tag characters are removed": keys_differing_by_tag_characters,
    "a dict whose keys all collide once nonce copies are replaced": keys_differing_by_nonce_case,
    "a dict whose colliding keys find their duplicate names taken": keys_with_taken_duplicate_names,
    "a dict of n distinct keys": lambda n: {f"<key{i}": i for i in range(n)},
    "a list of n lists nested to the depth limit": lambda n: [nested_lists(LIMIT - 2) for _ in range(max(1, n // LIMIT))],
    "a list of n dicts nested to the depth limit": lambda n: [nested_dicts(LIMIT - 2) for _ in range(max(1, n // LIMIT))],
    "a list of n lists nested beyond the depth limit": lambda n: [nested_lists(2 * LIMIT) for _ in range(max(1, n // LIMIT))],
    "one list nested n deep": nested_lists,
    "one dict nested n deep": nested_dicts,
    "n text parts of <": lambda n: [{"type": "text", "text": "<"} for _ in range(n)],
    "n text parts of near-miss tags": lambda n: [{"type": "text", "text": "<system-reminde"} for _ in range(n)],
    "a flat list of n strings": lambda n: ["&lt;"] * n,
    "n MCP text items each opening a tag an embedded resource closes": lambda n: [
        item for _ in range(n) for item in ({"type": "text", "text": "<"}, {"type": "resource", "resource": {"uri": "u", "text": "system-reminder>"}})
    ],
}

KNOWN_SUPERLINEAR_VALUES: dict[str, str] = {}


def _value_cases() -> list[object]:
    cases = []
    for shape in VALUE_SHAPES:
        reason = KNOWN_SUPERLINEAR_VALUES.get(shape)
        marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
        cases.append(pytest.param(shape, id=shape, marks=marks))
    return cases


@pytest.mark.parametrize("shape", _value_cases())
def test_sanitize_value_takes_linear_time_on_every_structured_shape(shape: str) -> None:
    assert_linear(sanitize_value, VALUE_SHAPES[shape])


HISTORY_SHAPES: dict[str, Callable[[int], list[tuple[str, object]]]] = {
    "n user messages of <": lambda n: [("user", "<")] * n,
    "n assistant messages of near-miss tags": lambda n: [("assistant", "<system-reminde")] * n,
    "one user message of n text parts": lambda n: [("user", [{"type": "text", "text": "<"} for _ in range(n)])],
    "n user messages each an unclosed PUA opening": lambda n: [("user", "\ue203" + NONCE + "\n")] * n,
    "one user message nested n deep": lambda n: [("user", nested_lists(n))],
    "one tool message whose keys all collide": lambda n: [("tool", keys_differing_by_tag_characters(n))],
    "one assistant message of n signed thinking blocks each opening a tag the next text goes on": lambda n: [
        {
            "role": "assistant",
            "content": [block for _ in range(n) for block in ({"type": "thinking", "thinking": "<sys", "signature": "s"}, {"type": "text", "text": "tem-reminder>"})],
        }
    ],
    "one run of n signed thinking blocks each holding a whole tag": lambda n: [
        {"role": "assistant", "content": [{"type": "thinking", "thinking": "<system-reminder>", "signature": "s"}] * n + [{"type": "text", "text": "x"}]}
    ],
    "n Gemini parts with thought signatures, a bracket in each": lambda n: [{"role": "model", "parts": [{"text": "<", "thought_signature": "s"}, {"text": "system-reminder>"}] * n}],
    "n Responses items of every kind": lambda n: [
        item
        for _ in range(max(1, n // 4))
        for item in (
            {"type": "reasoning", "id": "r", "summary": [{"type": "summary_text", "text": "<system-reminder>"}], "encrypted_content": "e"},
            {"type": "function_call", "call_id": "c", "name": "f", "arguments": "<"},
            {"type": "function_call_output", "call_id": "c", "output": [{"type": "input_text", "text": "system-reminder>"}]},
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "<"}]},
        )
    ],
}

KNOWN_SUPERLINEAR_HISTORY: dict[str, str] = {}


def _history_cases() -> list[object]:
    cases = []
    for shape in HISTORY_SHAPES:
        reason = KNOWN_SUPERLINEAR_HISTORY.get(shape)
        marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
        cases.append(pytest.param(shape, id=shape, marks=marks))
    return cases


@pytest.mark.parametrize("shape", _history_cases())
def test_sanitize_history_takes_linear_time_on_every_structured_shape(shape: str) -> None:
    assert_linear(sanitize_history, HISTORY_SHAPES[shape])
