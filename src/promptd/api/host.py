"""The server-to-client request: `provider/produce`, sent for providers of kind `host` (only to a
client that declared `capabilities.host_providers`). The client answers it; these models are its
params and its result, listed in protocol/openrpc.json under `x-server-to-client`."""

from typing import ClassVar

from pydantic import Field

from promptd.api.base import ApiModel


class ProduceParams(ApiModel):
    METHOD: ClassVar[str] = "provider/produce"

    provider: str = Field(description="The host provider's registered name.")
    session: str = Field(description="The session the turn belongs to.")
    user_message: str = Field(description="This turn's user message, as given to reminder/assemble or turn/compose.")


class ProduceResult(ApiModel):
    text: str | None = Field(description="The fragment's text, or null for nothing this turn.")
