"""The process's runtime state: configuration, nonce, key registry, client facts.

Domain-neutral glue held by the server and handed to method handlers; it knows nothing of the
wire. State that belongs to one area is created by that area's module and attached here.
"""

from __future__ import annotations

from typing import Any

from promptd.config import Config
from promptd.logs import Logger
from promptd.reminders.keys import KeyRegistry
from promptd.reminders.nonce import new_nonce


class Runtime:
    def __init__(self, config: Config, log: Logger | None = None) -> None:
        self.log = log or Logger(config.log_level)
        # Never logged, never returned except inside text the trusted wrapper writes.
        self.nonce = new_nonce()
        self.client_name: str | None = None
        self.host_providers = False
        self.events: bool | frozenset[str] = False
        self.default_tools: dict[str, str] = {}
        self.initialized = False
        self.config = config
        self.keys = self._build_keys(config)

    def apply_config(self, overrides: dict[str, Any]) -> None:
        """Merges `initialize` config over the current one; raises ConfigError."""
        if not overrides:
            return
        self.config = self.config.merged(overrides)
        self.keys = self._build_keys(self.config)
        self.log.set_level(self.config.log_level)

    def wants_event(self, method: str) -> bool:
        if isinstance(self.events, bool):
            return self.events
        return method in self.events

    @staticmethod
    def _build_keys(config: Config) -> KeyRegistry:
        registry = KeyRegistry(strict=config.keys.strict)
        for entry in config.keys.extra:
            registry.add(entry.key, entry.purpose, entry.introduced_in)
        return registry
