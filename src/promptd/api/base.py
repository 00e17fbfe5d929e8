"""Shared base model and small value types used by several areas."""

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, GetJsonSchemaHandler
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema


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
