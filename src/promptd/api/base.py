"""Shared base model and small value types used by several areas."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class ApiModel(BaseModel):
    """Every wire model: snake_case fields, unknown fields refused (a typo is an error, not a
    silently ignored option)."""

    # defer_build: a model's validator is built on first use, not at import, which keeps the
    # cold start of `promptd serve` down (most processes use a few methods only).
    model_config = ConfigDict(extra="forbid", defer_build=True)


class Empty(ApiModel):
    """No fields: the params of parameterless methods and the result `{}`."""


class Tools(ApiModel):
    """The host's tool set by kind: `{"read": "read_file", "plan": "todo_write"}`."""

    by_kind: dict[str, str] = Field(default_factory=dict)
