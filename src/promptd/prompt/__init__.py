"""The system prompt pipeline: context, dialect engine, guard lint, modes and overrides, vault.

Domain layer: must not import promptd.rpc or promptd.methods.
"""
