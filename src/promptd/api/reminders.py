"""The keyed reminder format (`<system-reminder key="...">`) and the reserved-key registry."""

from pydantic import Field

from promptd.api.base import ApiModel


class WrapParams(ApiModel):
    key: str = Field(description="Reminder key, [A-Za-z0-9._-]+")
    body: str
    # Adds this process's nonce as a `nonce` attribute: the block then parses as authenticated.
    nonce: bool = False
    session: str | None = Field(None, min_length=1, description="With `nonce`: the session the block is for; it then authenticates only in that session (none: a block of no session).")


class WrapResult(ApiModel):
    text: str


class ReminderPart(ApiModel):
    key: str
    body: str


class WrapManyParams(ApiModel):
    parts: list[ReminderPart]
    nonce: bool = False
    session: str | None = Field(None, min_length=1, description="With `nonce`: the session the block is for; it then authenticates only in that session (none: a block of no session).")


class KeyInfo(ApiModel):
    key: str
    purpose: str
    introduced_in: str


class KeysResult(ApiModel):
    keys: list[KeyInfo]
