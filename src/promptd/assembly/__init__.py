"""Reminder assembly: providers, their concurrent time-boxed run, the budget, spill, and the
assembled block.

Domain layer: must not import promptd.rpc, promptd.methods or promptd.transport. It is the one domain
area that uses asyncio (providers are awaited with per-provider timeouts); host callbacks reach it
only through the `HostChannel` protocol it defines.
"""
