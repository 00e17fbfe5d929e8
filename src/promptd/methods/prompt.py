"""prompt/render and prompt/persist.

Glue layer. The pipeline, engine and vault modules import jinja2 and cryptography, so they are
imported inside the handlers: the server's cold start never pays for them. prompt/lint and
prompt/vars are in methods/authoring.py.
"""

from __future__ import annotations

import asyncio
import functools
import os
import time
import weakref
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

from promptd.api.prompt import PersistParams, PersistResult, PrefixChange, RenderParams, RenderResult
from promptd.methods.base import Context, Method
from promptd.prompt.context import for_persistence
from promptd.prompt.kinds import TemplateName

if TYPE_CHECKING:
    from promptd.config import VaultConfig
    from promptd.prompt.vault import Vault
    from promptd.prompt.worker import Cancellation


def render(params: RenderParams, ctx: Context) -> RenderResult | Awaitable[RenderResult]:
    from promptd.prompt import pipeline

    # No render worker is started here: a host that renders only the shipped templates never has
    # one, and the first turn does not share the two cores with its start. The first caller's
    # template starts it (and it is kept warm from then on).
    if pipeline.renders_inline(params.context, _own_templates(ctx), strict=_strict(params, ctx)):
        return _render(params, ctx)
    return _render_offloaded(params, ctx)


def _own_templates(ctx: Context) -> dict[str, str]:
    settings = ctx.runtime.config.vault
    if not settings.has_own_templates:
        return {}  # the common case, without importing the vault
    from promptd.prompt import vault

    return vault.own_templates(settings)


def _open_vault(settings: VaultConfig, template_id: str) -> Vault | None:
    if template_id != TemplateName.APPLY_PATCH and not settings.has_own_templates:
        return None  # Primary and Subagent renders never import the vault
    from promptd.prompt import vault

    return vault.vault_for(settings, os.environ, template_id)


def _strict(params: RenderParams, ctx: Context) -> bool:
    return params.strict_undefined if params.strict_undefined is not None else ctx.runtime.config.prompt.strict_undefined


_gates: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = weakref.WeakKeyDictionary()


def template_gate() -> asyncio.Semaphore:
    """Taken, on the event loop, by every prompt/render and prompt/lint that runs a template
    promptd did not ship (a caller's, in a worker; a sealed one, in-process) before it takes a
    thread: at most MAX_RUNNING of them hold a thread at once, each running (a worker, or its
    in-process deadline), never waiting. The others wait here, holding no thread of the default
    executor, which the other offloaded requests (file providers, project memory) share. One per
    event loop (an asyncio.Semaphore belongs to the loop it is first used on)."""
    loop = asyncio.get_running_loop()
    gate = _gates.get(loop)
    if gate is None:
        from promptd.prompt.worker import MAX_RUNNING

        gate = _gates[loop] = asyncio.Semaphore(MAX_RUNNING)
    return gate


async def offload(run: Callable[[Cancellation], Any], *, gated: bool) -> Any:
    """`run(cancel)` in a thread of the default executor (after the template gate when `gated`);
    a cancelled request cancels `cancel`, which kills its worker or stops its in-process render."""
    from promptd.prompt import worker

    cancel = worker.Cancellation()
    try:
        if not gated:
            return await asyncio.to_thread(run, cancel)
        async with template_gate():
            return await asyncio.to_thread(run, cancel)
    except asyncio.CancelledError:
        cancel.cancel()
        raise


async def _render_offloaded(params: RenderParams, ctx: Context) -> RenderResult:
    """First compiles and the vault's decrypt-compile-render run in a thread so they never stall
    other requests; the caller's own templates go on from there to a worker process, which a
    cancellation kills (a thread cannot be stopped), and a sealed one renders under its deadline
    in the thread. Renders of templates promptd did not ship first wait for the template gate."""
    from promptd.prompt import pipeline

    gated = pipeline.runs_others_templates(params.context, _own_templates(ctx))
    result: RenderResult = await offload(functools.partial(_render, params, ctx), gated=gated)
    return result


def _render(params: RenderParams, ctx: Context, cancel: Cancellation | None = None) -> RenderResult:
    from promptd.errors import RenderTimeout
    from promptd.prompt import codecache, pipeline

    runtime = ctx.runtime
    tools = params.tools.by_kind if params.tools is not None else runtime.default_tools
    started = time.perf_counter()
    deadline_s = runtime.config.prompt.render_timeout_ms / 1000
    memory_mb = runtime.config.prompt.render_memory_mb

    def render_callers(source: str, variables: Mapping[str, Any], name: str, strict: bool) -> str:
        # The worker module is imported when a caller's template is rendered, not for every render.
        from promptd.prompt import worker

        return worker.pool().render(source, variables, name, strict, deadline_s=deadline_s, memory_mb=memory_mb, cancel=cancel)

    def bounded(name: str, run: Callable[[], str]) -> str:
        # A sealed template renders in this thread (its plaintext never leaves the process),
        # stopped at the same deadline as a worker's render, or when the request is cancelled.
        from promptd.prompt import worker

        return worker.bounded(run, name, deadline_s=deadline_s, cancel=cancel)

    def cache_skipped(reason: str, template: str) -> None:
        # A compiled-template file that was there and not used (a link, a FIFO, another user's,
        # corrupt): the reason and the template's name only.
        runtime.log.warning("code_cache_skipped", reason=reason, template=template)

    def clean(text: str) -> str:
        # Host values printed into the prompt (alone or side by side) are untrusted text: the
        # rendered prompt is sanitized as such. The same prompt comes every turn, and
        # sanitize_text remembers small texts.
        from promptd.reminders.sanitize import sanitize_text

        return sanitize_text(text, runtime.nonce)

    skipped = codecache.skipped.set(cache_skipped)
    try:
        rendered = pipeline.render(
            params.context,
            tools,
            params.params,
            params.flags,
            open_vault=functools.partial(_open_vault, runtime.config.vault),
            # The wrapper style in use, from configuration (promptd.toml, environment, initialize), so
            # the prompt describes the blocks this process really writes; never from the request.
            reminder_style=runtime.config.reminders.style,
            strict=_strict(params, ctx),
            # The caller's own templates render in a worker process under a CPU deadline.
            render_callers=render_callers,
            bounded=bounded,
            clean=clean,
            volatile=runtime.config.prompt.volatile_variables,
        )
    except RenderTimeout as exc:
        runtime.log.info("render_timeout", template=exc.data.get("template"), limit_ms=exc.data.get("limit_ms"))
        raise
    finally:
        codecache.skipped.reset(skipped)
    if runtime.log.enabled("debug"):
        runtime.log.debug(
            "prompt_rendered",
            template=rendered.template,
            chars=rendered.chars,
            tool_kinds=len(tools),
            elapsed_ms=round((time.perf_counter() - started) * 1000, 3),
        )
    # Recorded so that this exact prompt, stored as a system message, comes back unchanged from
    # history/sanitize (it is the host's own, and a stored system prompt is otherwise read as untrusted).
    from promptd.reminders.ledger import Kind

    runtime.trust.ledger.record(rendered.text, Kind.PROMPT)
    result = RenderResult.model_validate(rendered, from_attributes=True)
    if params.session is not None:
        from promptd.sessions import prompts

        session = runtime.sessions.get(params.session)
        now = prompts.record(rendered.text, rendered.stable_prefix_chars, rendered.variables)
        change = prompts.compare(session.last_prompt, now)
        session.last_prompt = now
        if change is not None:
            result.prefix_change = PrefixChange.model_validate(change, from_attributes=True)
    return result


def persist(params: PersistParams, ctx: Context) -> PersistResult:
    return PersistResult(context=for_persistence(params.context))


METHODS: list[Method] = [
    Method("prompt/render", RenderParams, RenderResult, render, "Renders the system prompt for a prompt context: text, template used, sha256, length."),
    Method("prompt/persist", PersistParams, PersistResult, persist, "The context normalized for storage (subagent role summaries cleared)."),
]
