"""Per-session state held by the process: what the host told us, and the turn accounting.

Domain layer: no wire knowledge. Bounded: an idle timeout and a maximum count (least recently
used evicted); evicting one session never touches another.

A session changes only through its own methods, each the one writer of what it changes:
`update` (`session/update`: the host's facts, under the byte caps), `record_prompt`
(`prompt/render` with a session), `record_delivered` (assembly: the current turn's delivery log),
`complete_turn` (`turn/complete`: TodoNudge's counters, the turn's deliveries made the last) and
`gate_turn` (`todo/gate`: TodoGate's memory of each prompt). The store only marks it used.
"""

from __future__ import annotations

import functools
import hashlib
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import NamedTuple

from promptd.config import SessionsConfig, TodoGateConfig
from promptd.errors import UnknownSession, ValueTooLarge
from promptd.sessions import prompts
from promptd.sessions.todos import NUDGE_KEY, Decision, GateOutcome, Todo, decide

# Prompt ids whose TodoGate fires a session remembers: a session answers one prompt at a time, so
# a few suffice; the oldest is forgotten first.
MAX_PROMPTS_PER_SESSION = 16
# More file notices than a model can use in one reminder anyway; older ones are dropped first.
MAX_MODIFIED_FILES = 200
# What a session keeps of each text it delivered: the first 16 bytes of its SHA-256, enough to
# tell a change (change-only providers compare nothing else), never the text itself, so a host's
# megabyte directives do not stay in memory for the session's life.
DIGEST_BYTES = 16


# Texts delivered turn after turn (a static provider's fragment) are digested once per process;
# small ones only, as the sanitizer remembers them (promptd.reminders.sanitize.sanitize_text).
CACHED_DIGEST_CHARS = 4096


def digest(text: str) -> bytes:
    """The delivery log's record of a text (DIGEST_BYTES of its SHA-256)."""
    if len(text) <= CACHED_DIGEST_CHARS:
        return _digest_small(text)
    return _digest(text)


def _digest(text: str) -> bytes:
    # Lone surrogates (JSON allows them) hash as the bytes they are escaped to.
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()[:DIGEST_BYTES]


_digest_small = functools.lru_cache(maxsize=512)(_digest)


@dataclass
class SessionData:
    """Facts only the host knows; promptd never reads them from its own process."""

    cwd: str | None = None
    date: str | None = None
    os_name: str | None = None
    shell: str | None = None
    env: dict[str, str] = field(default_factory=dict)
    tools: dict[str, str] | None = None


@dataclass
class TurnCounters:
    """TodoNudge's accounting, moved only by `turn/complete`."""

    turns: int = 0
    # A session that never wrote a todo counts from its first turn.
    turns_since_todo_write: int = 0
    # None until the first nudge: no previous reminder puts no spacing constraint.
    turns_since_nudge: int | None = None


class GateTurn(NamedTuple):
    outcome: GateOutcome
    # The prompt reached its cap and had not been told so before: the notice's event goes once.
    first_exhausted: bool


# The keys whose last delivery a session remembers, the least recently delivered forgotten first:
# a host that registers providers under ever new keys must not grow a session without bound. Far
# more keys than a host's providers use; a forgotten key's change-only provider delivers once more.
MAX_DELIVERED_KEYS = 256


@dataclass
class Session:
    id: str
    data: SessionData = field(default_factory=SessionData)
    counters: TurnCounters = field(default_factory=TurnCounters)
    # Keys delivered in the turn being assembled, with the digest of the text delivered under each.
    delivered: dict[str, bytes] = field(default_factory=dict)
    # The digest of what was delivered under each key in earlier, completed turns (for
    # change-only providers). Digests only: a session's size never grows with what it delivered.
    last_delivered: dict[str, bytes] = field(default_factory=dict)
    # Files the host reported as modified, not yet delivered in a completed turn.
    modified_files: list[str] = field(default_factory=list)
    # TodoGate fires per prompt id, and the prompt ids whose cap was already announced.
    gate_fires: dict[str, int] = field(default_factory=dict)
    gate_exhausted: set[str] = field(default_factory=set)
    # The system prompt this session last rendered (prompt/render with `session`), as hashes.
    last_prompt: prompts.PromptRecord | None = None
    touched: float = field(default_factory=time.monotonic)

    def update(self, limits: SessionsConfig, facts: Mapping[str, str | None], env: Mapping[str, str] | None, tools: Mapping[str, str] | None, modified_files: list[str]) -> None:
        """The host's `session/update`: the facts given replace the session's (None: unchanged),
        modified files are appended. Raises ValueTooLarge, naming the first field over its byte
        cap, before anything changes: a refused update leaves the session as it was."""
        changed = {name: value for name, value in facts.items() if value is not None}
        for name, value in changed.items():
            check_field(name, value, limits)
        for name, value in (env or {}).items():
            check_field(f"env.{name}", name, limits)
            check_field(f"env.{name}", value, limits)
        for kind, name in (tools or {}).items():
            check_field(f"tools.by_kind.{kind}", name, limits)
        for path in modified_files:
            check_field("modified_files", path, limits)
        data = replace(self.data)  # a copy: the session changes only once everything is checked
        for name, value in changed.items():
            setattr(data, name, value)
        if env is not None:
            data.env = dict(env)
        if tools is not None:
            data.tools = dict(tools)
        files = merge_modified_files(self.modified_files, modified_files) if modified_files else self.modified_files
        size = state_bytes(data, files)
        if size > limits.max_session_bytes:
            raise ValueTooLarge(f"session state would be {size} bytes, over sessions.max_session_bytes ({limits.max_session_bytes})", field="session", limit=limits.max_session_bytes, size=size)
        self.data = data
        self.modified_files = files

    def record_prompt(self, text: str, stable_prefix_chars: int, variables: Mapping[str, object]) -> prompts.PrefixChange | None:
        """Remembers the system prompt just rendered for this session (its hashes, never its text)
        and says where it departs from the one before: None for the session's first render."""
        now = prompts.record(text, stable_prefix_chars, variables)
        change = prompts.compare(self.last_prompt, now)
        self.last_prompt = now
        return change

    def record_delivered(self, delivered: Mapping[str, bytes]) -> None:
        """Adds to the current turn's delivery log: the digest (`digest`) of what was delivered
        under each key. Digests only, so what a session keeps never grows with what it delivered."""
        self.delivered.update(delivered)

    def complete_turn(self, todo_write: bool, tools_called: list[str], plan_tool: str | None) -> bool:
        """Turn accounting: the one place TodoNudge's counters move. A call of the plan tool counts
        as a todo write even when the host did not say so. True when the turn delivered the nudge."""
        wrote = todo_write or (plan_tool is not None and plan_tool in tools_called)
        nudged = NUDGE_KEY in self.delivered
        counters = self.counters
        counters.turns += 1
        counters.turns_since_todo_write = 0 if wrote else counters.turns_since_todo_write + 1
        if nudged:
            counters.turns_since_nudge = 0
        elif counters.turns_since_nudge is not None:
            counters.turns_since_nudge += 1
        for key, text_digest in self.delivered.items():
            self.last_delivered.pop(key, None)  # to the end: the log is kept in order of use
            self.last_delivered[key] = text_digest
        while len(self.last_delivered) > MAX_DELIVERED_KEYS:
            del self.last_delivered[next(iter(self.last_delivered))]
        if "file.modified" in self.delivered:
            self.modified_files.clear()
        self.delivered.clear()
        return nudged

    def gate_turn(self, prompt_id: str, todos: list[Todo], backing_task_count: int, last_step_called_tool: bool, settings: TodoGateConfig) -> GateTurn:
        """TodoGate's decision for one end of turn, with the session's memory of the prompt: the
        fires so far are read and a fire is counted (at most MAX_PROMPTS_PER_SESSION prompts
        remembered), and the prompt's exhaustion is recorded once. The prompt id is capped by the
        store (`SessionStore.check_id`) before the session is even looked up."""
        before = self.gate_fires.get(prompt_id, 0)
        outcome = decide(todos, backing_task_count, last_step_called_tool, before, settings.max_fires_per_prompt, settings.enabled)
        first_exhausted = False
        if outcome.decision is Decision.NUDGE:
            self.gate_fires[prompt_id] = outcome.fires
            while len(self.gate_fires) > MAX_PROMPTS_PER_SESSION:
                oldest = next(iter(self.gate_fires))
                del self.gate_fires[oldest]
                self.gate_exhausted.discard(oldest)
        elif outcome.exhausted and prompt_id not in self.gate_exhausted:
            self.gate_exhausted.add(prompt_id)
            first_exhausted = True
        return GateTurn(outcome, first_exhausted)


def check_field(name: str, value: str, limits: SessionsConfig) -> None:
    size = utf8_len(value)
    if size > limits.max_field_bytes:
        raise ValueTooLarge(f"{name} is {size} bytes, over sessions.max_field_bytes ({limits.max_field_bytes})", field=name, limit=limits.max_field_bytes, size=size)


def state_bytes(data: SessionData, modified_files: list[str]) -> int:
    """What the host's facts of one session weigh, in UTF-8 bytes (names and values)."""
    scalars = (data.cwd, data.date, data.os_name, data.shell)
    pairs = [*data.env.items(), *(data.tools or {}).items()]
    return sum(utf8_len(v) for v in scalars if v) + sum(utf8_len(k) + utf8_len(v) for k, v in pairs) + sum(map(utf8_len, modified_files))


def utf8_len(text: str) -> int:
    # Lone surrogates (JSON allows them) count as the 3 bytes they are escaped to.
    return len(text.encode("utf-8", "surrogatepass"))


def merge_modified_files(known: list[str], reported: list[str]) -> list[str]:
    """The session's modified files after a report: newest last, each once, at most
    MAX_MODIFIED_FILES, so a host that reports and never completes a turn cannot grow a session
    without bound. Linear in the report's size."""
    merged = dict.fromkeys(known)
    for path in reported[-MAX_MODIFIED_FILES:]:
        merged.pop(path, None)
        merged[path] = None
    return list(merged)[-MAX_MODIFIED_FILES:]


class SessionStore:
    def __init__(self, config: SessionsConfig, clock: Callable[[], float] = time.monotonic) -> None:
        self.config = config
        self._clock = clock
        self._sessions: OrderedDict[str, Session] = OrderedDict()

    def get(self, session_id: str) -> Session:
        """The session, created on first use; marks it most recently used. Raises ValueTooLarge
        for an id over sessions.max_id_bytes (every method that names a session goes here)."""
        self._check_id(session_id)
        self._expire()
        session = self._sessions.get(session_id)
        if session is None:
            session = Session(session_id)
            self._sessions[session_id] = session
            while len(self._sessions) > self.config.max_sessions:
                self._sessions.popitem(last=False)
        else:
            self._sessions.move_to_end(session_id)
        session.touched = self._clock()
        return session

    def existing(self, session_id: str) -> Session:
        """The session, which must exist (UnknownSession otherwise: a misspelled id must not
        pass as a new, empty session); marks it most recently used."""
        self._check_id(session_id)
        if session_id not in self:
            raise UnknownSession(f"no session {session_id[:64]!r} in this process (never used, closed or evicted)", session=session_id[:200])
        return self.get(session_id)

    def close(self, session_id: str) -> bool:
        return self._sessions.pop(session_id, None) is not None

    def _check_id(self, session_id: str) -> None:
        self.check_id(session_id, "session", "the session id")

    def check_id(self, value: str, name: str, what: str) -> None:
        """Raises ValueTooLarge for an id a session keeps (its own, a TodoGate prompt id) over
        sessions.max_id_bytes, naming the field `name`."""
        size = utf8_len(value)
        if size > self.config.max_id_bytes:
            raise ValueTooLarge(f"{what} is {size} bytes, over sessions.max_id_bytes ({self.config.max_id_bytes})", field=name, limit=self.config.max_id_bytes, size=size)

    def __len__(self) -> int:
        return len(self._sessions)

    def __contains__(self, session_id: object) -> bool:
        """Held now (an expired session is not: it is dropped first)."""
        self._expire()
        return session_id in self._sessions

    def _expire(self) -> None:
        deadline = self._clock() - self.config.idle_timeout_s
        # Least recently used first: stop at the first one still fresh.
        while self._sessions:
            oldest = next(iter(self._sessions.values()))
            if oldest.touched >= deadline:
                break
            self._sessions.popitem(last=False)
