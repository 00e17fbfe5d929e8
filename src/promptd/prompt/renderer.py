"""prompt/render's render: the one object that owns what a system prompt is rendered with.

Domain layer: must not import promptd.rpc or promptd.methods; imported on the first render (the
engine imports jinja2; the vault, imported for a sealed template only, `cryptography`).

Which templates a context renders and what they see is pipeline.py's (plain functions over the
context). What runs them is here: the engine, in this process, for the shipped templates (compiled
once, their code kept on disk) and for a sealed one (opened from the vault into a buffer that is
wiped, rendered under the render deadline in this thread: its plaintext never leaves the
process); the render worker for the caller's own templates (a custom override, a body: a killable
process under a CPU deadline and a memory budget). The rendered text is then sanitized and
recorded in the ledger of the prompts this process rendered.

A failure is an error naming the template, never an empty prompt
(docs/template-compatibility.md lists where that differs from the reference pipeline).
"""

from __future__ import annotations

import functools
import hashlib
import time
from collections.abc import Awaitable, Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

from promptd.errors import InvalidContext, RenderTimeout, TemplateRender
from promptd.prompt import codecache, pipeline
from promptd.prompt.context import CustomOverride, PromptContext, SealedOverride
from promptd.prompt.engine import engine
from promptd.prompt.kinds import PromptMode, TemplateName
from promptd.reminders.ledger import Kind

if TYPE_CHECKING:
    from promptd.config import Config
    from promptd.logs import Logger
    from promptd.prompt.vault import Vault
    from promptd.prompt.worker import Cancellation
    from promptd.reminders.ledger import Trust


class Rendered(NamedTuple):
    text: str
    template: str  # primary | subagent | apply_patch | custom | full
    sha256: str
    chars: int
    # The leading characters, up to a line start, that depend on no volatile variable.
    stable_prefix_chars: int
    # What the template saw (for a caller that compares one render with the next).
    variables: Mapping[str, Any]


class Renderer:
    """Renders system prompts under one configuration (`prompt`, `vault`, `reminders.style`),
    sanitizing with the nonce of `trust` and recording what it returns in `trust`'s ledger.
    Cheap to make: a server makes one per request, from the configuration then in force."""

    __slots__ = ("_config", "_trust", "_log", "_environ")

    def __init__(self, config: Config, trust: Trust, log: Logger, environ: Mapping[str, str]) -> None:
        self._config = config
        self._trust = trust
        self._log = log
        # Where the vault key may come from (PROMPTD_VAULT_KEY): the process's environment.
        self._environ = environ

    def render(
        self,
        context: PromptContext,
        tools: Mapping[str, str],
        params: Mapping[str, Mapping[str, str]] | None = None,
        flags: Mapping[str, bool] | None = None,
        *,
        strict: bool | None = None,
    ) -> Rendered | Awaitable[Rendered]:
        """The render of `context`, at once when it needs only an already-compiled shipped
        template (cheap and bounded); otherwise an awaitable that renders in a thread, so first
        compiles and the vault's decrypt-compile-render never stall other requests. A render that
        runs a template promptd did not ship first waits for the template gate (offload.py), and
        a cancellation kills its worker or stops its in-process render.

        No render worker is started for the first: a host that renders only the shipped templates
        never has one, and the first turn does not share the two cores with its start. The first
        caller's template starts it (and it is kept warm from then on)."""
        strict = self._strict(strict)
        sealed = self._own_templates()
        if pipeline.renders_inline(context, sealed, strict=strict):
            return self.render_here(context, tools, params, flags, strict=strict)
        from promptd.prompt.offload import offload

        def run(cancel: Cancellation) -> Rendered:
            return self.render_here(context, tools, params, flags, strict=strict, cancel=cancel)

        return offload(run, gated=pipeline.runs_others_templates(context, sealed))

    def render_here(
        self,
        context: PromptContext,
        tools: Mapping[str, str],
        params: Mapping[str, Mapping[str, str]] | None = None,
        flags: Mapping[str, bool] | None = None,
        *,
        strict: bool | None = None,
        cancel: Cancellation | None = None,
    ) -> Rendered:
        """The render of `context` in this thread (and the worker, for the caller's templates);
        raises InvalidContext, TemplateSyntax, TemplateRender, RenderTimeout, VaultLocked, or the
        worker's Cancelled once `cancel` is cancelled. `strict` is strict undefined
        (docs/templates.md): the request's, else config `prompt.strict_undefined`.

        The prompt it returns is recorded in the ledger, so that this exact prompt, stored as a
        system message, comes back unchanged from history/sanitize (it is the host's own, and a
        stored system prompt is otherwise read as untrusted)."""
        started = time.perf_counter()
        skipped = codecache.skipped.set(self._cache_skipped)
        try:
            rendered = self._rendered(context, tools, params, flags, self._strict(strict), cancel)
        except RenderTimeout as exc:
            self._log.info("render_timeout", template=exc.data.get("template"), limit_ms=exc.data.get("limit_ms"))
            raise
        finally:
            codecache.skipped.reset(skipped)
        if self._log.enabled("debug"):
            self._log.debug(
                "prompt_rendered",
                template=rendered.template,
                chars=rendered.chars,
                tool_kinds=len(tools),
                elapsed_ms=round((time.perf_counter() - started) * 1000, 3),
            )
        self._trust.ledger.record(rendered.text, Kind.PROMPT)
        return rendered

    def _rendered(
        self,
        context: PromptContext,
        tools: Mapping[str, str],
        params: Mapping[str, Mapping[str, str]] | None,
        flags: Mapping[str, bool] | None,
        strict: bool,
        cancel: Cancellation | None,
    ) -> Rendered:
        """`prompt.volatile_variables` names the variables whose part of the prompt cannot be
        cached: when any of them has a value a template reads, the prompt is rendered a second
        time with those values changed at every character, and the text both renders share, cut
        back to a line start, is the stable prefix (so a value the template only tests or slices
        counts too)."""
        # The wrapper style in use, from configuration (promptd.toml, environment, initialize), so
        # the prompt describes the blocks this process really writes; never from the request.
        values = pipeline.variables(context, tools, params, flags, reminder_style=self._config.reminders.style)
        name, text = self._text(context, values, strict, cancel)
        text = self._clean(text)
        if not text.strip():
            raise TemplateRender(f"template {name!r} rendered to empty text", template=name, line=None, cause="empty output", error="empty")
        probed = {key: pipeline.probe(values[key]) for key in self._config.prompt.volatile_variables if isinstance(values.get(key), str) and values[key]}
        if probed:
            # A volatile value no template reads cannot move the prefix: render a second time only
            # for those that are read (all of them when a template's text is sealed away).
            sources, complete = pipeline.template_sources(context)
            if complete:
                read = frozenset().union(*(pipeline.names_read(source) for _, source in sources))
                probed = {key: value for key, value in probed.items() if key in read}
        stable = len(text)
        if probed:
            _, other = self._text(context, {**values, **probed}, strict, cancel)
            stable = pipeline.stable_prefix(text, self._clean(other))
        digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
        return Rendered(text=text, template=name, sha256=digest, chars=len(text), stable_prefix_chars=stable, variables=values)

    def _clean(self, text: str) -> str:
        """Host values printed into the prompt (a role instruction read from a repository, a
        folder name, two list items a template prints side by side) are untrusted text: they must
        not put a reminder tag, a delimiter or the nonce into a prompt that history/sanitize then
        keeps as the host's own. The whole text is sanitized, the template's own words included:
        a prompt describes reminder blocks in words, never in their markup. The same prompt comes
        every turn, and sanitize_text remembers small texts."""
        from promptd.reminders.sanitize import sanitize_text

        return sanitize_text(text, self._trust.nonce)

    def _text(self, context: PromptContext, values: Mapping[str, Any], strict: bool, cancel: Cancellation | None) -> tuple[str, str]:
        """The template's name and its text. Extend mode renders the base template, then the
        body, joined by one blank line; full mode renders the body alone."""
        body = context.body
        if context.prompt_mode is PromptMode.FULL:
            if body is None:
                raise InvalidContext("full mode renders prompt_body alone, and prompt_body is empty", field="prompt_body", reason="missing_body")
            return "full", self._callers(body, values, "body", strict, cancel)
        name = pipeline.base_template(context)
        text = self._base(context, name, values, strict, cancel)
        if body is not None:
            text = text + pipeline.BODY_SEPARATOR + self._callers(body, values, "body", strict, cancel)
        return name, text

    def _base(self, context: PromptContext, name: str, values: Mapping[str, Any], strict: bool, cancel: Cancellation | None) -> str:
        """The base template chosen by the override (custom > sealed > codex's Apply-Patch >
        none), then by the audience; a base with a sealed file configured is opened from the vault."""
        override = context.system_prompt
        if isinstance(override, CustomOverride):
            if not override.custom.strip():
                raise InvalidContext("the custom template is empty", field="system_prompt.custom", reason="empty")
            return self._callers(override.custom, values, "custom", strict, cancel)
        template_id = pipeline.vault_id(context)
        sealed = self._open_vault(template_id)
        if sealed is None:
            if isinstance(override, SealedOverride):
                raise InvalidContext(f"no sealed template {template_id!r} is configured (config vault.templates)", field="system_prompt.sealed", reason="unknown_sealed")
            if name == "apply_patch":
                raise InvalidContext("the codex override needs the template vault", field="system_prompt", reason="no_vault")
            # Shipped: its compiled code is kept on disk, so the next process skips compiling it.
            return engine().render(pipeline.shipped_source(name), values, name, strict=strict, persist=True)
        # Under the deadline: whoever holds a key (the shipped one is public) can seal a loop.
        from promptd.prompt import worker

        run = functools.partial(_render_sealed, sealed, values, name, strict)
        return worker.bounded(run, name, deadline_s=self._deadline_s, cancel=cancel)

    def _callers(self, source: str, values: Mapping[str, Any], name: str, strict: bool, cancel: Cancellation | None) -> str:
        """A caller's own template, in a worker process under a CPU deadline (imported when a
        caller's template is rendered, not for every render)."""
        from promptd.prompt import worker

        memory_mb = self._config.prompt.render_memory_mb
        return worker.pool().render(source, values, name, strict, deadline_s=self._deadline_s, memory_mb=memory_mb, cancel=cancel)

    @property
    def _deadline_s(self) -> float:
        return self._config.prompt.render_timeout_ms / 1000

    def _strict(self, strict: bool | None) -> bool:
        return self._config.prompt.strict_undefined if strict is None else strict

    def _own_templates(self) -> dict[str, str]:
        """Template id -> sealed file of one's own (vault.templates, vault.template_file)."""
        settings = self._config.vault
        if not settings.has_own_templates:
            return {}  # the common case, without importing the vault
        from promptd.prompt import vault

        return vault.own_templates(settings)

    def _open_vault(self, template_id: str) -> Vault | None:
        """The vault of a sealed template, or None when none is configured for that id."""
        if template_id != TemplateName.APPLY_PATCH and not self._config.vault.has_own_templates:
            return None  # Primary and Subagent renders never import the vault
        from promptd.prompt import vault

        return vault.vault_for(self._config.vault, self._environ, template_id)

    def _cache_skipped(self, reason: str, template: str) -> None:
        # A compiled-template file that was there and not used (a link, a FIFO, another user's,
        # corrupt): the reason and the template's name only.
        self._log.warning("code_cache_skipped", reason=reason, template=template)


def _render_sealed(sealed: Vault, values: Mapping[str, Any], name: str, strict: bool) -> str:
    # Never cached: the compiled template would keep the plaintext alive.
    with sealed.opened() as source:
        return engine().render(source, values, name, cache=False, strict=strict)
