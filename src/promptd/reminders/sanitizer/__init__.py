"""The sanitizer's parts: character folding, escape decoding and forged-markup detection.

Domain layer: must not import promptd.rpc or promptd.methods. The public entry points are in
promptd.reminders.sanitize; these modules are its internals.
"""
