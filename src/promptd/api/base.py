"""Shared base model and small value types used by several areas."""

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, GetJsonSchemaHandler, field_validator
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema

from promptd.errors import EmptyToolName


class ApiModel(BaseModel):
    """Every wire model: snake_case fields, unknown fields refused (a typo is an error, not a
    silently ignored option)."""

    # defer_build: a model's validator is built on first use, not at import, which keeps the
    # cold start of `promptd serve` down (most processes use a few methods only).
    model_config = ConfigDict(extra="forbid", defer_build=True)


class Verbatim:
    """`Annotated[JsonValue, VERBATIM]`: a result field that holds the host's own JSON, written out
    exactly as it is held. pydantic's JSON mode writes a lone surrogate in a dict key as one U+FFFD
    per UTF-8 byte of it; methods.boundary dumps the fields marked so in Python mode, which keeps
    every key. Only a result's own fields can be marked; the marked value must be plain JSON."""

    __slots__ = ()


VERBATIM = Verbatim()


class Empty(ApiModel):
    """No fields: the params of parameterless methods and the result `{}`."""


class Tools(ApiModel):
    """The host's tool set by kind: `{"read": "read_file", "plan": "todo_write"}`."""

    by_kind: dict[str, str] = {}

    @field_validator("by_kind")
    @classmethod
    def _named(cls, by_kind: dict[str, str]) -> dict[str, str]:
        # An empty name is a host's bug, never a choice: it silently drops the kind's sections
        # (`if tools.by_kind.plan` is false for "") and prints as nothing wherever a template
        # lists the kinds. Raised as a domain error, which pydantic lets through, so it reaches
        # the wire with its own kind.
        for kind, name in by_kind.items():
            if not name.strip():
                raise EmptyToolName(f"tools.by_kind.{kind}: a tool name must not be empty; leave the kind out when the host has no such tool", field=f"tools.by_kind.{kind}", tool_kind=kind)
        return by_kind


class Inline:
    """`Annotated[SomeEnum, Inline(SomeEnum)]`: the enum's values written in place in the field's
    schema instead of as a named component. For the closed sets the protocol has always listed
    inline (the clients name their types after the field: TodoItem.status is TodoItemStatus), so
    that declaring them once, in the domain, leaves the generated clients as they were."""

    __slots__ = ("enum",)

    def __init__(self, enum: type[StrEnum]) -> None:
        self.enum = enum

    def __get_pydantic_json_schema__(self, schema: CoreSchema, handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        # Not handler(schema): that would add the enum to the document's named components.
        return {"enum": [member.value for member in self.enum], "type": "string"}


class CallerType:
    """`Annotated[list[HistoryMessage], CallerType("Message")]`: a field that holds the caller's own
    data and comes back in the same shape (history/sanitize's messages, content/sanitize_value's
    value). The field's schema gets `x-caller-type: "Message"`; the generated clients read it and
    make the params and result types generic over a type parameter of that name, standing for the
    field's type (its items' type, for a list), so an SDK's own message type goes in without a cast
    and comes back as itself. The schema itself is unchanged: the server accepts any such value."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __get_pydantic_json_schema__(self, schema: CoreSchema, handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        return {**handler(schema), "x-caller-type": self.name}
