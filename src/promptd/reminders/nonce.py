"""The per-process runtime nonce of the runtime provenance rules (docs/security.md)."""

import secrets

# 128 bits, the floor the design sets; hex so it is safe inside attributes and PUA wrappers.
NONCE_BYTES = 16


def new_nonce() -> str:
    return secrets.token_hex(NONCE_BYTES)
