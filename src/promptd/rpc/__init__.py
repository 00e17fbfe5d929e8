"""Sans-IO JSON-RPC 2.0 core: framing, message decoding, frame building, id bookkeeping.

Protocol layer. Must not import asyncio, sys, os or anything from promptd's domain modules: it
turns bytes into messages and messages into bytes, and is tested synchronously in memory.
"""
