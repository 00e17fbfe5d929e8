"""A render worker imports nothing from promptd's working directory: that is often the repository
the agent works in, and a `struct.py` or `orjson/` there would run with promptd's rights."""

from __future__ import annotations

import subprocess

import pytest
from conftest import PROMPTD


@pytest.mark.parametrize("planted", ["struct.py", "orjson/__init__.py", "select.py"])
def test_a_repository_module_in_promptds_working_directory_never_runs_in_the_render_worker(tmp_path, planted):
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    marker = tmp_path / "ran"
    module = repo / planted
    module.parent.mkdir(parents=True, exist_ok=True)
    module.write_text(f"open({str(marker)!r}, 'w').write('ran')\nraise ImportError('planted')\n")
    requests = (
        b'{"jsonrpc":"2.0","id":1,"method":"prompt/render","params":{"context":{"system_prompt":{"custom":"${{ 1 + 1 }} ok"}}}}\n'
        b'{"jsonrpc":"2.0","id":2,"method":"prompt/lint","params":{"template":"${{ x }}"}}\n'
    )
    done = subprocess.run([*PROMPTD, "serve"], input=requests, cwd=repo, capture_output=True, timeout=120)
    assert b'"text":"2 ok"' in done.stdout and b'"id":2,"result"' in done.stdout
    assert not marker.exists()
