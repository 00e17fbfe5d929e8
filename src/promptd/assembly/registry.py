"""The provider registry: built-ins, then providers from config, then those a host registers,
each kept in registration order (which is their priority)."""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import Any, NamedTuple

from promptd.assembly.kinds import ProviderKind, Scope
from promptd.assembly.model import Fragment, ProviderSpec
from promptd.assembly.providers import BUILTINS, PRODUCERS, InstantProducer, Producer, produce_static
from promptd.childenv import is_refused
from promptd.errors import InvalidProvider, ProviderExists, UnknownProvider
from promptd.reminders.keyed import KEY_PATTERN, MAX_KEY_CHARS

# Far beyond what fits in one 6,000-character reminder; a bound so a looping host cannot grow the
# registry (and every turn's work) without limit.
MAX_PROVIDERS = 256
REQUIRED_FIELD = {ProviderKind.STATIC: "text", ProviderKind.FILE: "path", ProviderKind.COMMAND: "argv"}


class Entry(NamedTuple):
    spec: ProviderSpec
    produce: Producer | InstantProducer
    builtin: bool
    # Answered inline (no task, no timer): decided once, at registration (see entry()).
    instant: bool
    # Registered with providers/register (not built in, not from config).
    at_run_time: bool = False
    # What the provider gives every turn, when that never changes (a static provider's text):
    # built once here rather than produced again each turn.
    fixed: Fragment | None = None


def entry(spec: ProviderSpec, produce: Producer | InstantProducer, builtin: bool, at_run_time: bool = False) -> Entry:
    fixed = None
    if produce is produce_static and spec.text and spec.text.strip():
        fixed = Fragment(spec.name, spec.key, spec.text)
    return Entry(spec, produce, builtin, not inspect.iscoroutinefunction(produce), at_run_time, fixed)


class ProviderRegistry:
    def __init__(self, enabled_builtins: set[str]) -> None:
        self._entries: dict[str, Entry] = {}
        # The entries in order, kept between changes: every turn reads them, few change them.
        self._ordered: tuple[Entry, ...] = ()
        for spec, produce, switch in BUILTINS:
            if switch in enabled_builtins:
                self._entries[spec.name] = entry(spec, produce, builtin=True)
        self._ordered = tuple(self._entries.values())

    def register(self, spec: ProviderSpec, at_run_time: bool = False) -> None:
        check_spec(spec)
        if spec.name in self._entries:
            raise ProviderExists("a provider with this name is already registered", provider=spec.name)
        if len(self._entries) >= MAX_PROVIDERS:
            raise InvalidProvider(f"at most {MAX_PROVIDERS} providers can be registered", field="name")
        self._entries[spec.name] = entry(spec, PRODUCERS[spec.kind], builtin=False, at_run_time=at_run_time)
        self._ordered = tuple(self._entries.values())

    def unregister(self, name: str) -> None:
        if self._entries.pop(name, None) is None:
            raise UnknownProvider("no provider with this name", provider=name)
        self._ordered = tuple(self._entries.values())

    def registered_at_run_time(self) -> list[ProviderSpec]:
        return [e.spec for e in self._entries.values() if e.at_run_time]

    def entries(self) -> tuple[Entry, ...]:
        return self._ordered


def check_spec(spec: ProviderSpec) -> None:
    if not KEY_PATTERN.fullmatch(spec.name):
        raise InvalidProvider(f"provider name must match [A-Za-z0-9._-]+, 1 to {MAX_KEY_CHARS} characters", field="name")
    if spec.kind == ProviderKind.BUILTIN:
        raise InvalidProvider("built-in providers cannot be registered", field="kind")
    needed = REQUIRED_FIELD.get(spec.kind)
    if needed is not None and not getattr(spec, needed):
        raise InvalidProvider(f"a {spec.kind.value} provider needs `{needed}`", field=needed)
    # Refused, not quietly dropped: a provider that asks for promptd's own variables (the vault key
    # among them) is told at once that it will never get them.
    refused = [name for name in spec.env if is_refused(name)]
    if refused:
        raise InvalidProvider("`env` cannot name PROMPTD_* variables: they are never passed to a command", field="env", names=refused)


def spec_from_mapping(fields: Mapping[str, Any]) -> ProviderSpec:
    """A spec from the fields of `providers/register` (already validated for type)."""
    argv = fields.get("argv")
    env = fields.get("env")
    return ProviderSpec(
        name=fields["name"],
        scope=Scope(fields.get("scope", "per_turn")),
        kind=ProviderKind(fields["kind"]),
        key=fields["key"],
        text=fields.get("text"),
        path=fields.get("path"),
        argv=tuple(argv) if argv else None,
        timeout_ms=fields.get("timeout_ms"),
        max_bytes=fields.get("max_bytes") or 64 * 1024,
        env=tuple(env) if env else (),
    )
