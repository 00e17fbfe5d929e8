"""initialize, shutdown, rpc.discover."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from functools import partial

from promptd import PROTOCOL_VERSION, __version__
from promptd.api.base import Empty
from promptd.api.core import CancelParams, DiscoverResult, InitializeParams, InitializeResult, Limits, ServerInfo
from promptd.methods.base import Context, Method

# Versions this server speaks; as in MCP, an unknown request is answered with our own and the
# client decides whether to go on.
SUPPORTED_VERSIONS = (PROTOCOL_VERSION,)


def initialize(params: InitializeParams, ctx: Context, table: Mapping[str, Method]) -> InitializeResult:
    runtime = ctx.runtime
    runtime.initialize(params)
    if runtime.config.prompt.warm_worker:
        threading.Thread(target=_warm_worker, name="promptd-warm-worker", daemon=True).start()
    version = params.protocol_version if params.protocol_version in SUPPORTED_VERSIONS else PROTOCOL_VERSION
    runtime.log.info("initialized", client=runtime.client_name, protocol_version=version, host_providers=runtime.host_providers, offset_unit=runtime.offset_unit)
    config = runtime.config
    return InitializeResult(
        protocol_version=version,
        server_info=ServerInfo(name="promptd", version=__version__),
        methods=sorted(table),
        offset_unit=runtime.offset_unit,
        limits=Limits(max_message_bytes=config.max_message_bytes, provider_timeout_ms=config.reminders.provider_timeout_ms),
    )


def _warm_worker() -> None:
    # In a thread: importing the worker module imports jinja2, and starting one forks; neither
    # may hold up the answer to initialize.
    from promptd.prompt import worker

    worker.pool().warm()


async def shutdown(params: Empty, ctx: Context) -> Empty:
    await ctx.lifecycle.shutdown()
    return Empty()


def discover(params: Empty, ctx: Context, table: Mapping[str, Method]) -> DiscoverResult:
    # Imported here: building the document loads every area of the table.
    from promptd.protocol import openrpc_document

    # The document is generated from our own models and cached: nothing to validate again.
    return DiscoverResult.model_construct(**openrpc_document(table))


def served_by_transport(params: object, ctx: Context) -> Empty:
    # exit and $/cancelRequest are notifications the transport acts on itself; they are listed
    # here so the protocol documents them.
    return Empty()


def lifecycle_methods(table: Mapping[str, Method]) -> list[Method]:
    """The lifecycle methods. initialize and rpc.discover describe the table they are part of, so
    they are given it (promptd.methods builds it) instead of importing their own package back."""
    return [
        Method("initialize", InitializeParams, InitializeResult, partial(initialize, table=table), "Negotiates the protocol version, records client facts, applies config overrides.", lifecycle=True),
        Method("shutdown", Empty, Empty, shutdown, "Drains in-flight work; later requests are refused with -32002.", lifecycle=True, client_driven=True),
        Method("exit", Empty, Empty, served_by_transport, "Notification: ends the process (0 after shutdown, 1 otherwise).", lifecycle=True, notification=True),
        Method("$/cancelRequest", CancelParams, Empty, served_by_transport, "Notification: cancels a running request, which is answered -32800.", lifecycle=True, notification=True),
        Method("rpc.discover", Empty, DiscoverResult, partial(discover, table=table), "The OpenRPC document of this server.", lifecycle=True),
    ]
