"""System reminders: keyed formatting, the key registry, provenance, assembly and providers.

Domain layer: must not import promptd.rpc or promptd.methods.
"""
