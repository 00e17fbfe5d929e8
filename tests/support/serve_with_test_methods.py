"""Runs the real stdio server with the test-only methods added to the table."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from promptd.config import load  # noqa: E402
from promptd.methods import TABLE  # noqa: E402
from promptd.runtime import Runtime  # noqa: E402
from promptd.transport.server import serve  # noqa: E402
from tests.support.test_methods import TEST_METHODS  # noqa: E402

if __name__ == "__main__":
    runtime = Runtime(load())
    table = dict(TABLE)
    table.update({m.name: m for m in TEST_METHODS})
    serve(runtime, table=table)
