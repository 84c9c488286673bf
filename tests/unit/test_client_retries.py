"""A GET whose connection breaks before any answer is sent again (as client-go does); a write
never is. Checked against real servers on loopback that break their first connections."""

from __future__ import annotations

import contextlib
import socket
import ssl
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from kschedctl.base.errors import ClusterError
from kschedctl.kubeclient import client as k8s_client
from kschedctl.kubeclient.client import Cluster
from kschedctl.kubeclient.kubeconfig import DirectPlan
from kschedctl.kubeclient.transport import ClientTransport, DirectTransport
from kschedctl.lab.pki import generate

pytestmark = pytest.mark.client

OK = b'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 12\r\n\r\n{"ok": true}'


class BreakingServer:
    """Accepts connections on loopback; the first ``broken`` of them are closed unanswered —
    at once (before any TLS handshake: the client reads EOF), or with ``read_first`` after the
    request was read — the others answer one request with ``OK``. ``requests`` counts the
    requests that reached the server (read whole), answered or not."""

    def __init__(self, broken: int, tls: ssl.SSLContext | None, read_first: bool = False) -> None:
        self.broken = broken
        self.tls = tls
        self.read_first = read_first
        self.connections = 0
        self.requests = 0
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"{'https' if self.tls else 'http'}://127.0.0.1:{self.port}"

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.connections += 1
            try:
                if self.connections <= self.broken:
                    if self.read_first:
                        self._read_request(conn)  # the request arrived; no answer
                    continue
                if self.tls is not None:
                    conn = self.tls.wrap_socket(conn, server_side=True)
                self._read_request(conn)
                conn.sendall(OK)
            except (OSError, ssl.SSLError):
                pass
            finally:
                conn.close()

    def _read_request(self, conn: socket.socket) -> None:
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = conn.recv(4096)
            if not chunk:
                return
            data += chunk
        self.requests += 1

    def close(self) -> None:
        # shutdown wakes the accept() blocked in the thread (close alone does not, on Linux);
        # the socket is closed only once the thread is gone. Closed first, its fd number could
        # be reused by the next test's server while the thread is between reading it and
        # calling accept(): the thread would then steal that server's connections (seen under
        # load: test_direct_connection's echo server answered {"ok": true}).
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_RDWR)
        self.thread.join(timeout=60)
        self.sock.close()


@pytest.fixture
def tls(pki: Path) -> ssl.SSLContext:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(pki / "apiserver.crt", pki / "apiserver.key")
    return context


def connect(server: BreakingServer, pki: Path) -> Cluster:
    def no_client() -> ClientTransport:
        raise AssertionError("the official client is not needed")

    plan = DirectPlan(server=server.url, ca_file=str(pki / "ca.crt") if server.tls else None)
    return Cluster(DirectTransport(plan, "test-kubeconfig", no_client), "ctx")


@pytest.fixture
def servers() -> Iterator[list[BreakingServer]]:
    made: list[BreakingServer] = []
    yield made
    for server in made:
        server.close()


def test_a_get_whose_tls_handshake_broke_is_sent_again(
    servers: list[BreakingServer], tls: ssl.SSLContext, pki: Path
) -> None:
    servers.append(BreakingServer(2, tls))
    with connect(servers[0], pki) as cluster:
        assert cluster.get("/version") == {"ok": True}
    assert (servers[0].connections, servers[0].requests) == (3, 1)


def test_a_get_answered_by_nothing_is_sent_again(servers: list[BreakingServer], pki: Path) -> None:
    servers.append(BreakingServer(1, None, read_first=True))
    with connect(servers[0], pki) as cluster:
        assert cluster.get("/version") == {"ok": True}
    assert servers[0].requests == 2


def test_a_write_is_never_sent_twice(servers: list[BreakingServer], pki: Path) -> None:
    servers.append(BreakingServer(1, None, read_first=True))
    with connect(servers[0], pki) as cluster, pytest.raises(ClusterError) as caught:
        cluster.create("/api/v1/namespaces", {"metadata": {"name": "once"}})
    assert "cannot reach the API server" in caught.value.message
    assert servers[0].requests == 1


def test_a_get_that_keeps_breaking_gives_up_after_three_attempts(
    servers: list[BreakingServer], tls: ssl.SSLContext, pki: Path
) -> None:
    servers.append(BreakingServer(10, tls))
    with connect(servers[0], pki) as cluster, pytest.raises(ClusterError) as caught:
        cluster.get("/version")
    assert caught.value.message.startswith(f"cannot reach the API server at {servers[0].url}: ")
    assert servers[0].connections == k8s_client.GET_ATTEMPTS


def test_a_server_certificate_of_another_ca_is_not_retried(
    servers: list[BreakingServer], tmp_path: Path, pki: Path
) -> None:
    other = tmp_path / "other"
    generate(other, "127.0.0.1")
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(other / "apiserver.crt", other / "apiserver.key")
    servers.append(BreakingServer(0, context))
    with connect(servers[0], pki) as cluster, pytest.raises(ClusterError) as caught:
        cluster.get("/version")
    assert "CERTIFICATE_VERIFY_FAILED" in caught.value.message
    assert servers[0].connections == 1
