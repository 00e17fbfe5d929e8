"""Project folders and secrets for the project-memory and environment tests."""

from __future__ import annotations

import base64
from pathlib import Path

MEMORY_SECRET = "sk-promptd-test-secret-0123456789"  # in promptd's environment, never in a memory file's reading
ENV_SECRET = "s3cr3t-value-never-logged"  # a host variable's value, never in a log line


def repo_at(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / ".git").mkdir()
    return folder


def assemble(server, session):
    return server.call("reminder/assemble", {"session": session, "user_message": "hi"}, timeout=60)


def key_spellings(key: bytes) -> dict[str, str]:
    """The vault key written the ways a careless host might copy it under another name."""
    return {
        "TRAILING_NEWLINE": key.hex() + "\n",
        "UPPER_HEX": key.hex().upper(),
        "BASE64": base64.b64encode(key).decode(),
        "URLSAFE_BASE64_UNPADDED": base64.urlsafe_b64encode(key).decode().rstrip("="),
        "LEADING_SPACE": " " + key.hex(),
        "RAW": key.decode("latin-1"),
    }
