"""When a container starts again and why it stopped: the kubelet's restart back-off, the exit
code a runtime reports, and the memory limit the lab enforces (OOMKilled)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kschedctl.model.filters.quantity import QuantityError, parse_quantity, to_units


class Backoff:
    """The kubelet's restart back-off: the first restart is immediate, then the window doubles
    from ``initial`` up to ``maximum``; a container that ran for 2 × ``maximum`` starts over."""

    def __init__(self, initial: float, maximum: float) -> None:
        self.initial, self.maximum = initial, maximum
        self.window: float | None = None
        self.last_update = 0.0

    def _expired(self, at: float) -> bool:
        return self.window is None or at - self.last_update > 2 * self.maximum

    def delay(self, finished_at: float, now: float) -> float:
        """Seconds from ``now`` until a container that exited at ``finished_at`` may restart."""
        if self._expired(finished_at):
            return 0.0
        assert self.window is not None
        return max(0.0, finished_at + self.window - now)

    def restarted(self, now: float) -> None:
        if self._expired(now) or self.window is None:
            self.window = self.initial
        else:
            self.window = min(self.window * 2, self.maximum)
        self.last_update = now


def memory_limit(container: Mapping[str, Any]) -> int | None:
    """resources.limits.memory in bytes (None: no limit, or not a quantity)."""
    limit = ((container.get("resources") or {}).get("limits") or {}).get("memory")
    if limit is None:
        return None
    try:
        return to_units(parse_quantity(limit))
    except QuantityError:
        return None


def resident_bytes(pid: int) -> int | None:
    """VmRSS of a process (/proc/PID/status), None if it cannot be read."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii", errors="replace") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def exit_code(returncode: int) -> int:
    """Popen's -N (killed by signal N) as a runtime reports it: 128 + N."""
    return 128 - returncode if returncode < 0 else returncode
