"""Builds the OpenRPC document from a method table and the pydantic models.

Below the methods layer (with runtime.py, over api/): the table is handed in, by rpc.discover
(methods/core.py) and by `make protocol` (scripts/generate.py), never imported from promptd.methods, so the
methods that serve this document can import it.

protocol/openrpc.json is this function's output (`make protocol`); a test fails when the committed
file differs, so the schema is never written twice by hand.

Both directions are in it:

- `methods`: what the client sends (the method table in promptd.methods); `x-no-wrapper: true`
  marks a request the clients send themselves as part of their own lifecycle (shutdown, within
  stop() and Close), for which no generated client offers a typed wrapper;
- `x-server-to-client`: what the server sends, in the same OpenRPC method form: the
  `provider/produce` request (params and result from promptd.api.host) and the `event/*`
  notifications (params from promptd.api.events; no result, they are never answered);
- `x-errors`: every error code with its `data.kind` values (promptd.errors), and the `ErrorKind`
  schema, the closed set of kinds;
- `components.schemas`: every model either direction uses. Each method entry also names its params
  model in `x-params-schema`, so clients can give the params one named type (`ComposeParams`,
  `GateFiredEvent`).

Naming convention for components: a method's params are `<Verb>Params` (or `<Area><Verb>Params`
where a verb alone would be ambiguous: `ReminderParseParams`, `CitationParseParams`), its result
`<...>Result`; an event's payload is `<Name>Event` (`event/gate_fired` -> `GateFiredEvent`); a closed
set of strings is a named enum schema (`Scope`, `SkipReason`, `ErrorKind`, `EventName`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import cache
from typing import Any, Protocol

from pydantic import BaseModel, TypeAdapter
from pydantic.json_schema import JsonSchemaMode, models_json_schema

from promptd import PROTOCOL_VERSION, __version__
from promptd.api.events import EVENTS, EventName
from promptd.api.host import ProduceParams, ProduceResult
from promptd.errors import catalogue

OPENRPC_VERSION = "1.3.2"
REF_TEMPLATE = "#/components/schemas/{model}"


class DescribedMethod(Protocol):
    """What the document reads of a method table's entry (promptd.methods.base.Method)."""

    @property
    def params(self) -> type[BaseModel]: ...
    @property
    def result(self) -> type[BaseModel]: ...
    @property
    def summary(self) -> str: ...
    @property
    def notification(self) -> bool: ...
    @property
    def client_driven(self) -> bool: ...


DescribedTable = Mapping[str, DescribedMethod]


def _method_entry(
    name: str,
    summary: str,
    params: type[BaseModel],
    result: type[BaseModel] | None,
    keyed: dict[Any, dict[str, Any]],
    schemas: dict[str, Any],
    params_mode: str,
    result_mode: str,
) -> dict[str, Any]:
    params_ref = keyed[(params, params_mode)]
    params_schema = _resolve(params_ref, schemas)
    required = set(params_schema.get("required", []))
    entry: dict[str, Any] = {
        "name": name,
        "summary": summary,
        "paramStructure": "by-name",
        "params": [{"name": field, "required": field in required, "schema": schema} for field, schema in params_schema.get("properties", {}).items()],
        "x-params-schema": params_ref,
    }
    if result is not None:
        entry["result"] = {"name": "result", "schema": keyed[(result, result_mode)]}
    return entry


def openrpc_document(table: DescribedTable) -> dict[str, Any]:
    """The document describing `table` (promptd.methods.TABLE, or a server's own table). Built once
    per table; callers must not change it."""
    return _document(tuple(table.items()))


@cache
def _document(entries: tuple[tuple[str, DescribedMethod], ...]) -> dict[str, Any]:
    models: list[tuple[type[BaseModel], JsonSchemaMode]] = []
    for _, method in entries:
        models.append((method.params, "validation"))
        models.append((method.result, "serialization"))
    # The other direction: what the server sends is serialized, what it receives validated.
    models.append((ProduceParams, "serialization"))
    models.append((ProduceResult, "validation"))
    for event in EVENTS.values():
        models.append((event, "serialization"))
    keyed, definitions = models_json_schema(models, ref_template=REF_TEMPLATE)
    schemas = definitions.get("$defs", {})

    methods = []
    for name, method in sorted(entries, key=lambda entry: entry[0]):
        entry = _method_entry(name, method.summary, method.params, None if method.notification else method.result, keyed, schemas, "validation", "serialization")
        if method.client_driven:
            # The clients send it themselves (stop(), Close), so none generates a wrapper for it.
            entry["x-no-wrapper"] = True
        methods.append(entry)

    server_to_client = [
        _method_entry(
            ProduceParams.METHOD,
            "Request, only to a client that declared capabilities.host_providers: the text of a `host` provider for this turn.",
            ProduceParams,
            ProduceResult,
            keyed,
            schemas,
            "serialization",
            "validation",
        )
    ]
    for event in EVENTS.values():
        entry = _method_entry(event.METHOD, f"Notification. {event.SUMMARY}", event, None, keyed, schemas, "serialization", "")
        server_to_client.append(entry)

    errors = catalogue()
    kinds = [kind for error in errors for kind, _ in error.kinds]
    schemas.setdefault("EventName", {**TypeAdapter(EventName).json_schema(), "title": "EventName"})
    schemas["EventName"].setdefault("description", "The name of an event notification (`capabilities.events` lists some of them).")
    schemas["ErrorKind"] = {
        "title": "ErrorKind",
        "description": "`data.kind` of an error: what went wrong, machine-readable (see `x-errors` for the code each comes with).",
        "type": "string",
        "enum": kinds,
    }

    # Enums written inline (api.base.Inline) still leave a component of their own behind.
    schemas = _reachable(schemas, [methods, server_to_client], extra=("EventName", "ErrorKind"))

    return {
        "x-do-not-edit": "generated by `make protocol` from src/promptd/api and src/promptd/errors.py; edit those instead",
        "openrpc": OPENRPC_VERSION,
        "info": {
            "title": "promptd",
            "version": __version__,
            "description": f"promptd sidecar protocol {PROTOCOL_VERSION}: line-delimited JSON-RPC 2.0 over stdio.",
        },
        "methods": methods,
        "components": {
            "schemas": dict(sorted(schemas.items())),
            "errors": {error.name: {"code": error.code, "message": error.message} for error in errors},
        },
        "x-server-to-client": server_to_client,
        "x-errors": [{"code": error.code, "name": error.name, "message": error.message, "kinds": [{"kind": kind, "description": text} for kind, text in error.kinds]} for error in errors],
        "x-protocol-version": PROTOCOL_VERSION,
    }


def _reachable(schemas: dict[str, Any], roots: list[Any], extra: tuple[str, ...]) -> dict[str, Any]:
    """The components that `roots` refer to, directly or through other components, and `extra`."""
    kept: set[str] = set(extra)
    pending: list[Any] = [*roots, *(schemas[name] for name in extra)]
    while pending:
        node = pending.pop()
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith(REF_TEMPLATE.split("{")[0]):
                name = ref.rsplit("/", 1)[-1]
                if name not in kept:
                    kept.add(name)
                    pending.append(schemas[name])
            pending.extend(node.values())
        elif isinstance(node, list):
            pending.extend(node)
    return {name: schema for name, schema in schemas.items() if name in kept}


def _resolve(schema: dict[str, Any], schemas: dict[str, Any]) -> dict[str, Any]:
    ref = schema.get("$ref")
    if ref:
        named: dict[str, Any] = schemas[ref.rsplit("/", 1)[-1]]
        return named
    return schema


def render(table: DescribedTable) -> bytes:
    """protocol/openrpc.json's bytes."""
    return (json.dumps(openrpc_document(table), indent=2, ensure_ascii=False, sort_keys=False) + "\n").encode("utf-8")
