"""The prompt commands writing into a pipe whose reader goes away: no traceback, the status of
the command itself."""

from __future__ import annotations

import os
import subprocess
import sys


def shell(command, cwd):
    """Runs a pipeline with the venv's promptd first on PATH; returns (status of the first
    command, stderr of the whole pipeline)."""
    env = dict(os.environ, PROMPTD_LOG_LEVEL="warning", PATH=os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"])
    done = subprocess.run(["bash", "-c", command + '; echo "status=${PIPESTATUS[0]}" >&2'], capture_output=True, env=env, cwd=cwd, timeout=60)
    err = done.stderr.decode()
    status = int(err.rsplit("status=", 1)[1])
    return status, err.rsplit("status=", 1)[0]


def test_a_reader_closing_the_pipe_early_gets_no_traceback(tmp_path):
    project = tmp_path
    # 1,500 findings: about 150 KB of output, more than a pipe holds, so `head` closes it mid-write.
    (project / "many.jinja").write_text("${{ tools.by_kind.read }}\n" * 1500)
    status, err = shell("promptd lint many.jinja | head -1 >/dev/null", project)
    assert status == 1 and "Traceback" not in err and "BrokenPipe" not in err
    status, err = shell("promptd render --json | head -c0", project)
    assert "Traceback" not in err and "BrokenPipe" not in err
