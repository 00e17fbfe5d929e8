"""Renders through the one renderer prompt/render uses, in the test's own thread, under settings
a test names (the rest are the defaults)."""

from __future__ import annotations

import io
from collections.abc import Collection, Mapping
from typing import Any

from promptd.config import Config, VaultConfig
from promptd.logs import Logger
from promptd.prompt.context import PromptContext
from promptd.prompt.renderer import Rendered, Renderer
from support.trust import make_trust

NONCE = "rendering-test-nonce"


def renderer(
    *,
    reminder_style: str = "pua",
    volatile: Collection[str] = (),
    vault: VaultConfig | None = None,
    environ: Mapping[str, str] | None = None,
    log: Logger | None = None,
) -> Renderer:
    """No volatile variables unless named (the configuration has two), no key in the
    environment unless given."""
    config = Config().merged({"reminders": {"style": reminder_style}, "prompt": {"volatile_variables": list(volatile)}})
    if vault is not None:
        config = config.model_copy(update={"vault": vault})
    return Renderer(config, make_trust(NONCE), log or Logger("error", io.StringIO()), environ or {})


def render(
    context: PromptContext,
    tools: Mapping[str, str],
    params: Mapping[str, Mapping[str, str]] | None = None,
    flags: Mapping[str, bool] | None = None,
    *,
    strict: bool | None = None,
    **settings: Any,
) -> Rendered:
    return renderer(**settings).render_here(context, tools, params, flags, strict=strict)
