"""What a test reads of another process: its resident memory."""

from __future__ import annotations

MIB = 1 << 20


def rss_kib(pid: int, field: str = "VmRSS") -> int:
    """A memory figure of /proc/PID/status in KiB: VmRSS now, VmHWM the peak."""
    with open(f"/proc/{pid}/status", encoding="ascii") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise AssertionError(f"no {field}")
