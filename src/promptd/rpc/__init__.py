"""Sans-IO JSON-RPC 2.0 core: framing, message decoding, frame building, id bookkeeping, and the
protocol's state machine (connection.py: lifecycle, in-flight ids, batches, cancellation).

Protocol layer. Must not import asyncio, sys, os or anything from promptd's domain modules: it
turns bytes into messages and messages into bytes, and is tested synchronously in memory.
"""
