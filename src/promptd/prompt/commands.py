"""CLI commands of the prompt pipeline: render, lint, vault."""

from __future__ import annotations

import argparse


def add_commands(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Registers the prompt subcommands; each sets `handler(config, args) -> exit code`."""
