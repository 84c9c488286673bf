"""``/healthz`` (alias ``/livez``), ``/readyz`` and ``/metrics`` over plain HTTP.

- ``/healthz``: the process and its threads are alive (liveness probe);
- ``/readyz``: the node, pod and volume caches have synced (readiness probe);
- ``/metrics``: Prometheus text format.

Plain HTTP on purpose: the endpoints carry no secrets, and a Python scheduler should not need
a serving certificate to be probed. Bind it to 127.0.0.1 on shared hosts (``--metrics-address``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

__all__ = ["HealthServer"]

CONTENT_TYPE_METRICS = "text/plain; version=0.0.4; charset=utf-8"


class HealthServer:
    def __init__(
        self,
        address: str,
        port: int,
        healthy: Callable[[], tuple[bool, str]],
        ready: Callable[[], bool],
        metrics: Callable[[], str],
    ) -> None:
        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - http.server's naming
                path = self.path.split("?", 1)[0]
                if path in ("/healthz", "/livez"):
                    alive, why = healthy()
                    self._send(200 if alive else 500, "ok\n" if alive else f"{why}\n")
                elif path == "/readyz":
                    synced = ready()
                    self._send(200 if synced else 503, "ok\n" if synced else "caches not synced\n")
                elif path == "/metrics":
                    self._send(200, metrics(), CONTENT_TYPE_METRICS)
                else:
                    self._send(404, "not found\n")

            def _send(self, code: int, body: str, content_type: str = "text/plain") -> None:
                data = body.encode()
                self.send_response(code)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: object) -> None:  # noqa: A002
                pass  # probes every few seconds would drown the scheduler's own log

        self.server = ThreadingHTTPServer((address, port), Handler)
        self.server.daemon_threads = True
        self.port = int(self.server.server_address[1])
        self._thread = threading.Thread(
            target=self.server.serve_forever, name="health", daemon=True
        )

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
