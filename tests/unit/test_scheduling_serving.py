"""/healthz, /readyz and /metrics over plain HTTP."""

from __future__ import annotations

import urllib.error
import urllib.request

import pytest

from kschedctl.ops.serving import HealthServer


def get(port: int, path: str) -> tuple[int, str, str]:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as r:
            return r.status, r.headers["Content-Type"], r.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, err.headers["Content-Type"], err.read().decode()


@pytest.fixture()
def state() -> dict[str, object]:
    return {"healthy": (True, "ok"), "ready": False}


def test_endpoints_follow_the_scheduler_state(state: dict[str, object]) -> None:
    server = HealthServer(
        "127.0.0.1", 0,
        lambda: state["healthy"],  # type: ignore[arg-type,return-value]
        lambda: bool(state["ready"]),
        lambda: "kschedctl_scheduler_is_leader 1\n",
    )  # fmt: skip
    server.start()
    try:
        assert get(server.port, "/healthz") == (200, "text/plain", "ok\n")
        assert get(server.port, "/livez")[0] == 200
        assert get(server.port, "/readyz") == (503, "text/plain", "caches not synced\n")
        state["ready"] = True
        assert get(server.port, "/readyz")[0] == 200
        state["healthy"] = (False, "the worker thread died")
        assert get(server.port, "/healthz") == (500, "text/plain", "the worker thread died\n")
        code, kind, body = get(server.port, "/metrics")
        assert code == 200 and kind.startswith("text/plain; version=0.0.4")
        assert body == "kschedctl_scheduler_is_leader 1\n"
        assert get(server.port, "/nope")[0] == 404
    finally:
        server.stop()


def test_a_busy_port_is_an_os_error() -> None:
    first = HealthServer("127.0.0.1", 0, lambda: (True, ""), lambda: True, lambda: "")
    try:
        with pytest.raises(OSError):
            HealthServer("127.0.0.1", first.port, lambda: (True, ""), lambda: True, lambda: "")
    finally:
        first.server.server_close()
