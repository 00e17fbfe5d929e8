"""The system prompt pipeline: context, dialect engine, guard lint, modes and overrides, vault.

Domain layer: must not import promptd.rpc or promptd.methods.
"""

from pathlib import Path

# The shipped templates (plain and sealed), beside this package's modules.
TEMPLATES = Path(__file__).resolve().parent / "templates"
