"""Readiness, liveness and startup probes, judged the way the kubelet's prober does.

Only the port changes: the probe's container port (e.g. 10259) is mapped to the port the
process really listens on in the lab. exec and grpc probes are not run (the lab has no
container to exec into) and count as passing; the runner logs that once.
"""

from __future__ import annotations

import socket
import ssl
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

HTTP, TCP = "http", "tcp"


@dataclass(frozen=True)
class ProbeSpec:
    action: str  # http, tcp, or the name of an action the lab does not run (exec, grpc)
    port: int | None = None  # the container port
    path: str = "/"
    scheme: str = "HTTP"
    headers: tuple[tuple[str, str], ...] = ()
    initial_delay: float = 0.0
    period: float = 10.0
    timeout: float = 1.0
    success_threshold: int = 1
    failure_threshold: int = 3


def resolve_port(port: Any, container: Mapping[str, Any]) -> int | None:
    """A probe's port: a number, or the name of one of the container's ports."""
    if isinstance(port, int):
        return port
    text = str(port)
    if text.isdigit():
        return int(text)
    for declared in container.get("ports") or []:
        if declared.get("name") == text:
            return int(declared["containerPort"])
    return None


def parse_probe(
    probe: Mapping[str, Any] | None,
    container: Mapping[str, Any],
    max_period: float | None = None,
) -> ProbeSpec | None:
    """The probe with API defaults; ``max_period`` caps delays and periods (a lab speed-up)."""
    if not probe:
        return None
    period = float(probe.get("periodSeconds") or 10)
    delay = float(probe.get("initialDelaySeconds") or 0)
    if max_period is not None:
        period, delay = min(period, max_period), min(delay, max_period)
    timed = ProbeSpec(
        action=next((k for k in ("exec", "grpc") if k in probe), "unknown"),
        initial_delay=delay,
        period=period,
        timeout=float(probe.get("timeoutSeconds") or 1),
        success_threshold=int(probe.get("successThreshold") or 1),
        failure_threshold=int(probe.get("failureThreshold") or 3),
    )
    if "httpGet" in probe:
        get = probe["httpGet"]
        headers = tuple((h["name"], h["value"]) for h in get.get("httpHeaders") or [])
        return replace(timed, action=HTTP, port=resolve_port(get.get("port"), container),
                       path=get.get("path") or "/", scheme=get.get("scheme") or "HTTP",
                       headers=headers)  # fmt: skip
    if "tcpSocket" in probe:
        return replace(timed, action=TCP,
                       port=resolve_port(probe["tcpSocket"].get("port"), container))  # fmt: skip
    return timed


def check(spec: ProbeSpec, local_port: int | None) -> tuple[bool, str]:
    """Run the probe once against 127.0.0.1:``local_port``: (passed, failure message)."""
    if spec.action not in (HTTP, TCP):
        return True, ""
    if local_port is None:
        return False, f"port {spec.port} is not served by the process in the lab"
    if spec.action == TCP:
        try:
            with socket.create_connection(("127.0.0.1", local_port), timeout=spec.timeout):
                return True, ""
        except OSError as err:
            return False, f"dial tcp 127.0.0.1:{local_port}: {err}"
    scheme = "https" if spec.scheme.upper() == "HTTPS" else "http"
    path = spec.path if spec.path.startswith("/") else "/" + spec.path
    request = urllib.request.Request(
        f"{scheme}://127.0.0.1:{local_port}{path}",
        headers={"User-Agent": "kube-probe/lab", **dict(spec.headers)},
    )
    # Like the kubelet: HTTPS probes do not verify the certificate (it is self-signed).
    opener = urllib.request.build_opener(
        urllib.request.ProxyHandler({}),
        urllib.request.HTTPSHandler(context=ssl._create_unverified_context()),
    )
    try:
        with opener.open(request, timeout=spec.timeout) as response:
            code = response.status
    except urllib.error.HTTPError as err:
        code = err.code
    except (urllib.error.URLError, OSError) as err:
        return False, f"Get {request.full_url}: {getattr(err, 'reason', err)}"
    if 200 <= code < 400:
        return True, ""
    return False, f"HTTP probe failed with statuscode: {code}"


class ProbeTracker:
    """Consecutive results against the thresholds; ``result`` is what the kubelet reports."""

    def __init__(self, spec: ProbeSpec, started_at: float, initial: bool) -> None:
        self.spec = spec
        self.result = initial
        self.next_at = started_at + spec.initial_delay
        self.successes = 0
        self.failures = 0
        self.message = ""

    def due(self, now: float) -> bool:
        return now >= self.next_at

    def record(self, passed: bool, message: str, now: float) -> bool:
        """Count one result; returns whether ``result`` changed."""
        before = self.result
        self.next_at = now + self.spec.period
        if passed:
            self.successes, self.failures = self.successes + 1, 0
            if self.successes >= self.spec.success_threshold:
                self.result = True
        else:
            self.successes, self.failures = 0, self.failures + 1
            self.message = message
            if self.failures >= self.spec.failure_threshold:
                self.result = False
        return self.result != before
