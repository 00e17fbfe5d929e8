"""Per-session state and the todo reminders (domain layer): `store` (bounded session state and turn
accounting), `todos` (TodoNudge and TodoGate). No wire knowledge.
"""
