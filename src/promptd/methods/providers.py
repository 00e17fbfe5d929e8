"""providers/register, providers/unregister, providers/list: the provider registry's methods.

Glue layer, an area of its own so that a turn never imports these models.
"""

from __future__ import annotations

from promptd.api.base import Empty
from promptd.api.providers import NameParams, ProviderInfo, ProvidersResult, RegisterParams
from promptd.assembly.registry import spec_from_mapping
from promptd.methods.base import Context, Method


def register(params: RegisterParams, ctx: Context) -> Empty:
    ctx.runtime.keys.require(params.key)
    ctx.runtime.providers.register(spec_from_mapping(params.model_dump()), at_run_time=True)
    ctx.runtime.log.info("provider_registered", provider=params.name, kind=params.kind, scope=params.scope)
    return Empty()


def unregister(params: NameParams, ctx: Context) -> Empty:
    ctx.runtime.providers.unregister(params.name)
    return Empty()


def list_providers(params: Empty, ctx: Context) -> ProvidersResult:
    return ProvidersResult(
        providers=[
            ProviderInfo(name=e.spec.name, scope=e.spec.scope, kind=e.spec.kind, key=e.spec.key, builtin=e.builtin, timeout_ms=e.spec.timeout_ms, env=list(e.spec.env))
            for e in ctx.runtime.providers.entries()
        ]
    )


METHODS: list[Method] = [
    Method("providers/register", RegisterParams, Empty, register, "Registers a static, file, command or host provider (registration order is priority)."),
    Method("providers/unregister", NameParams, Empty, unregister, "Removes a provider by name."),
    Method("providers/list", Empty, ProvidersResult, list_providers, "Lists providers in priority order, built-ins first."),
]
