"""The process's runtime state: configuration, nonce, key registry, client facts.

Domain-neutral glue held by the server and handed to method handlers; it knows nothing of the
wire. State that belongs to one area is created by that area's module and attached here.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from promptd.childenv import VAULT_KEY_ENV
from promptd.config import Config, RemindersConfig, defaults
from promptd.errors import AlreadyInitialized, ConfigError, PromptdError
from promptd.logs import Logger
from promptd.reminders.keys import KeyRegistry
from promptd.reminders.ledger import Ledger, Trust
from promptd.reminders.signing import Signer
from promptd.text import OffsetUnit

if TYPE_CHECKING:
    from promptd.api.core import InitializeParams
    from promptd.assembly.registry import ProviderRegistry
    from promptd.assembly.spill import SpillStore, Swept
    from promptd.sessions.store import Session, SessionStore


class Runtime:
    def __init__(self, config: Config, log: Logger | None = None) -> None:
        self.log = log or Logger(config.log_level)
        # The nonce is never logged, never returned except inside text the trusted path writes;
        # the keys are never either.
        signer = signer_for(config.reminders)
        self.trust = Trust(signer.nonce, Ledger(config.reminders.ledger_max_entries, config.reminders.ledger_eviction), signer)
        self.client_name: str | None = None
        self.host_providers = False
        self.events: bool | frozenset[str] = False
        self.default_tools: dict[str, str] = {}
        # The unit of offsets in results (initialize's offset_unit).
        self.offset_unit = OffsetUnit.CODE_POINTS
        self.initialized = False
        self.config = config
        self.keys = self._build_keys(config)
        # The provider registry and the session store are built on first use, so a host that only
        # renders prompts or wraps text never pays for the assembly area; providers the
        # configuration declares are checked now, as every other setting is.
        self._sessions: SessionStore | None = None
        self._providers: ProviderRegistry | None = self._build_providers(config) if config.reminders.providers else None
        self._spill: SpillStore | None = None
        self._check_vault(config)

    @property
    def nonce(self) -> str:
        return self.trust.nonce

    @property
    def sessions(self) -> SessionStore:
        if self._sessions is None:
            from promptd.sessions.store import SessionStore

            self._sessions = SessionStore(self.config.sessions)
        return self._sessions

    @property
    def providers(self) -> ProviderRegistry:
        if self._providers is None:
            self._providers = self._build_providers(self.config)
        return self._providers

    @property
    def spill(self) -> SpillStore:
        """Created on first use: most processes never truncate a fragment."""
        if self._spill is None:
            from promptd.assembly.spill import SpillStore

            self._spill = SpillStore(self.config.reminders)
        return self._spill

    def sweep_spill(self) -> Swept:
        """Removes promptd's spill files past retention (at start-up and periodically, off the
        loop); reports what it left alone."""
        return self.spill.sweep()

    def initialize(self, params: InitializeParams) -> None:
        """What a client's `initialize` sets, once: its configuration (all or nothing), its name,
        whether it serves providers, the events it wants, its default tools and offset unit."""
        if self.initialized:
            raise AlreadyInitialized("initialize was already called")
        self.apply_config(params.config)
        self.client_name = params.client_info.name if params.client_info else None
        self.host_providers = params.capabilities.host_providers
        events = params.capabilities.events
        self.events = events if isinstance(events, bool) else frozenset(events)
        if params.tools is not None:
            self.default_tools = dict(params.tools.by_kind)
        self.offset_unit = params.offset_unit
        self.initialized = True

    def apply_config(self, overrides: dict[str, Any]) -> None:
        """Merges `initialize` config over the current one; raises ConfigError and then changes
        nothing. Providers registered at run time are kept across a rebuild of the registry."""
        if not overrides:
            return
        config = self.config.merged(overrides)
        try:
            keys = self._build_keys(config)
        except PromptdError as exc:
            raise ConfigError(f"invalid config at keys.extra: {exc.message}", field="keys.extra") from exc
        reminders_changed = config.reminders != self.config.reminders
        providers = None
        if self._providers is not None and (reminders_changed or config.todo_nudge != self.config.todo_nudge):
            providers = self._build_providers(config)
            for spec in self._providers.registered_at_run_time():
                try:
                    providers.register(spec, at_run_time=True)
                except PromptdError as exc:
                    raise ConfigError(f"config conflicts with the registered provider {spec.name}: {exc.message}", field="reminders.providers") from exc
        elif self._providers is None and config.reminders.providers:
            providers = self._build_providers(config)  # declared providers are checked now, as at start-up
        if config.vault != self.config.vault:
            self._check_vault(config)
        signer = None
        before, after = self.config.reminders, config.reminders
        if (after.provenance_key_file, after.provenance_previous_key_files) != (before.provenance_key_file, before.provenance_previous_key_files):
            # The key this process signed with so far keeps verifying: blocks already written stay genuine.
            signer = signer_for(after, also_verify=(self.trust.signer.key, *self.trust.signer.previous))
        self.config = config
        self.keys = keys
        if self._sessions is not None:
            self._sessions.config = config.sessions
        self.trust.ledger.configure(config.reminders.ledger_max_entries, config.reminders.ledger_eviction)
        if signer is not None:
            self.trust = Trust(signer.nonce, self.trust.ledger, signer)
        if providers is not None:
            self._providers = providers
        if reminders_changed:
            self._spill = None  # rebuilt from the new settings on next use
        self.log.set_level(config.log_level)

    def tools_for(self, session: Session) -> dict[str, str]:
        """The session's own tool set when the host gave one, else initialize's default."""
        return session.data.tools if session.data.tools is not None else self.default_tools

    def wants_event(self, method: str) -> bool:
        if isinstance(self.events, bool):
            return self.events
        return method in self.events

    @staticmethod
    def _build_providers(config: Config) -> ProviderRegistry:
        """Built-ins switched on in config, then the providers config declares; raises ConfigError."""
        from promptd.assembly.registry import ProviderRegistry, spec_from_mapping

        switches = {
            "session_metadata": config.reminders.session_metadata,
            "project_memory": config.reminders.project_memory,
            "file_modified": config.reminders.file_modified,
            "todo_nudge": config.todo_nudge.enabled,
        }
        registry = ProviderRegistry({name for name, on in switches.items() if on})
        if not config.reminders.providers:
            return registry
        # The wire's model checks a declared provider as providers/register does; imported only
        # for a configuration that declares some.
        from promptd.api.providers import RegisterParams

        for index, declared in enumerate(config.reminders.providers):
            try:
                registry.register(spec_from_mapping(RegisterParams.model_validate(declared).model_dump()))
            except (ValidationError, PromptdError) as exc:
                raise ConfigError(f"invalid provider at reminders.providers[{index}]: {exc}", field=f"reminders.providers.{index}") from exc
        return registry

    def _check_vault(self, config: Config) -> None:
        """The vault's key and sealed files, checked before anything is served, so a configured
        key file that is missing stops start-up instead of failing the first render; logs which
        key source is used (its kind and path or variable name, never the key). Raises ConfigError."""
        configured = config.vault != defaults(type(config.vault)) or bool(os.environ.get(VAULT_KEY_ENV))
        if not configured and not self.log.enabled("debug"):
            return  # the shipped key and templates: nothing to check, and nothing to say above debug
        from promptd.prompt import vault

        try:
            report = vault.startup_report(config.vault, os.environ)
        except PromptdError as exc:
            raise ConfigError(f"invalid config at vault: {exc.message}", field="vault", **exc.data) from None
        # Said at info once a key or template of one's own is configured; the shipped defaults are
        # not news.
        self.log.log("info" if configured else "debug", "vault_key", **report)

    @staticmethod
    def _build_keys(config: Config) -> KeyRegistry:
        registry = KeyRegistry(strict=config.keys.strict)
        for entry in config.keys.extra:
            registry.add(entry.key, entry.purpose, entry.introduced_in)
        return registry


def signer_for(settings: RemindersConfig, also_verify: tuple[bytes, ...] = ()) -> Signer:
    """The signer of reminder blocks: the host's provenance key (and its older keys) when
    configured, else a key of this process's own. Raises ConfigError for a key file that cannot
    be used (the reason, never the key)."""
    if settings.provenance_key_file is None and not settings.provenance_previous_key_files:
        return Signer(Signer.fresh().key, also_verify)  # the common start: no key file read or imported
    from promptd import keyfile

    def read(path: str, field: str) -> bytes:
        try:
            return keyfile.read_key_file(path)
        except keyfile.KeyFileError as exc:
            raise ConfigError(f"reminders.{field}: {exc.detail}", field=f"reminders.{field}", reason=exc.reason) from None

    previous = tuple(read(path, "provenance_previous_key_files") for path in settings.provenance_previous_key_files)
    if settings.provenance_key_file is None:
        return Signer(Signer.fresh().key, previous + also_verify)
    return Signer(read(settings.provenance_key_file, "provenance_key_file"), previous + also_verify)
