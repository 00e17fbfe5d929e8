"""prompt/render and prompt/persist.

Glue layer. The renderer imports jinja2 (and, for a sealed template, cryptography), so it is
imported inside the handler: the server's cold start never pays for it. prompt/lint and
prompt/vars are in methods/authoring.py.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Awaitable
from typing import TYPE_CHECKING

from promptd.api.prompt import PersistParams, PersistResult, PrefixChange, RenderParams, RenderResult
from promptd.later import then
from promptd.methods.base import Context, Method
from promptd.prompt.context import for_persistence

if TYPE_CHECKING:
    from promptd.prompt.renderer import Rendered


def render(params: RenderParams, ctx: Context) -> RenderResult | Awaitable[RenderResult]:
    """Answered at once when the renderer can (a compiled shipped template); awaited otherwise."""
    from promptd.prompt.renderer import Renderer

    runtime = ctx.runtime
    tools = params.tools.by_kind if params.tools is not None else runtime.default_tools
    renderer = Renderer(runtime.config, runtime.trust, runtime.log, os.environ)
    outcome = renderer.render(params.context, tools, params.params, params.flags, strict=params.strict_undefined)
    return then(outcome, functools.partial(_result, params, ctx))


def _result(params: RenderParams, ctx: Context, rendered: Rendered) -> RenderResult:
    result = RenderResult.model_validate(rendered, from_attributes=True)
    if params.session is not None:
        change = ctx.runtime.sessions.get(params.session).record_prompt(rendered.text, rendered.stable_prefix_chars, rendered.variables)
        if change is not None:
            result.prefix_change = PrefixChange.model_validate(change, from_attributes=True)
    return result


def persist(params: PersistParams, ctx: Context) -> PersistResult:
    return PersistResult(context=for_persistence(params.context))


METHODS: list[Method] = [
    Method("prompt/render", RenderParams, RenderResult, render, "Renders the system prompt for a prompt context: text, template used, sha256, length."),
    Method("prompt/persist", PersistParams, PersistResult, persist, "The context normalized for storage (subagent role summaries cleared)."),
]
