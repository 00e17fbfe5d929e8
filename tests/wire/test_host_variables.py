"""`promptd serve` started with host variables in its environment: it serves, and warns once,
by name only."""

from __future__ import annotations

import json

from support.projects import ENV_SECRET as SECRET


def test_a_served_sidecar_starts_with_host_variables_and_warns_once_by_name(spawn):
    server = spawn(env={"PROMPTD_BIN": "/usr/local/bin/promptd", "PROMPTD_HOST_TOKEN": SECRET})
    result = server.call("initialize", {"client_info": {"name": "env-test"}})
    assert result["server_info"]["name"] == "promptd"
    assert server.close() == 0
    stderr = server.stderr_text()
    warnings = [json.loads(line) for line in stderr.splitlines() if '"env_ignored"' in line]
    assert len(warnings) == 1
    assert warnings[0]["level"] == "warning"
    assert {"PROMPTD_BIN", "PROMPTD_HOST_TOKEN"} <= set(warnings[0]["names"])
    assert warnings[0]["count"] == len(warnings[0]["names"])
    assert SECRET not in stderr and "/usr/local/bin/promptd" not in stderr
