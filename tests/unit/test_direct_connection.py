"""The direct connection: which kubeconfig shapes kschedctl opens with urllib3 alone (no
kubernetes client), and the TLS it sets up, checked against a real TLS server that asks for
a client certificate (certificates made by the lab's own PKI code, i.e. openssl)."""

from __future__ import annotations

import base64
import json
import ssl
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any

import pytest

from kschedctl.base.errors import ClusterError
from kschedctl.kubeclient import transport as k8s_transport
from kschedctl.kubeclient.client import Cluster
from kschedctl.kubeclient.kubeconfig import DirectPlan, Selection, direct_plan
from kschedctl.kubeclient.transport import DirectTransport
from kschedctl.lab.pki import generate

pytestmark = pytest.mark.client


def selection(cluster: dict[str, Any], user: dict[str, Any] | None) -> Selection:
    config = {
        "current-context": "ctx",
        "contexts": [{"name": "ctx", "context": {"cluster": "c", "user": "u" if user else ""}}],
        "clusters": [{"name": "c", "cluster": cluster}],
        "users": [{"name": "u", "user": user}] if user is not None else [],
    }
    return Selection(context="ctx", namespace="default", cluster="c", config=config)


HTTPS = {"server": "https://api.example:6443/", "certificate-authority": "/pki/ca.crt"}


@pytest.mark.parametrize(
    ("user", "extra_cluster", "proxies"),
    [
        ({"exec": {"command": "aws", "apiVersion": "client.authentication.k8s.io/v1"}}, {}, {}),
        ({"auth-provider": {"name": "oidc"}}, {}, {}),
        ({"username": "admin", "password": "secret"}, {}, {}),
        ({"token": "t", "as": "someone"}, {}, {}),
        ({"token": "t", "as-groups": ["g"]}, {}, {}),
        ({"token": "t"}, {"proxy-url": "http://proxy:3128"}, {}),
        ({"token": "t"}, {}, {"https": "http://proxy:3128"}),
        ({"token": "t"}, {}, {"all": "socks5://proxy:1080"}),
        ({"token": 12}, {}, {}),  # a wrong type: the client's error, not ours
        ({"token": "t"}, {"insecure-skip-tls-verify": "yes"}, {}),
        ({"token": "t"}, {"server": "api.example:6443"}, {}),  # no scheme
    ],
    ids=[
        "exec",
        "auth-provider",
        "basic-auth",
        "impersonation",
        "impersonated-groups",
        "proxy-url",
        "env-https-proxy",
        "env-all-proxy",
        "token-not-a-string",
        "insecure-not-a-bool",
        "server-without-scheme",
    ],  # fmt: skip
)
def test_shapes_that_keep_the_official_client(
    user: dict[str, Any], extra_cluster: dict[str, Any], proxies: dict[str, str]
) -> None:
    assert direct_plan(selection({**HTTPS, **extra_cluster}, user), proxies) is None


def test_certificates_and_token_files_go_direct_with_their_paths() -> None:
    user = {
        "client-certificate": "/pki/admin.crt",
        "client-key": "/pki/admin.key",
        "tokenFile": "/run/token",
        "extensions": [],
    }
    # an http proxy and a no_proxy list do not apply to an https server
    plan = direct_plan(selection(HTTPS, user), {"http": "http://proxy:3128", "no": "x"})
    assert plan == DirectPlan(
        server="https://api.example:6443",
        ca_file="/pki/ca.crt",
        cert_file="/pki/admin.crt",
        key_file="/pki/admin.key",
        token_file="/run/token",
    )


def test_data_fields_win_over_files_and_token_over_token_file() -> None:
    cluster = {**HTTPS, "certificate-authority-data": "Q0E=", "tls-server-name": "kubernetes"}
    user = {
        "client-certificate": "/x.crt",
        "client-certificate-data": "Q0VSVA==",
        "client-key-data": "S0VZ",
        "token": "abc",
        "tokenFile": "/run/token",
    }
    plan = direct_plan(selection(cluster, user), {})
    assert plan == DirectPlan(
        server="https://api.example:6443",
        ca_data="Q0E=",
        tls_server_name="kubernetes",
        cert_data="Q0VSVA==",
        key_data="S0VZ",
        token="abc",
    )


def test_an_empty_data_field_still_hides_its_file() -> None:
    # FileOrData: the -data key, present even empty, is used instead of the file
    plan = direct_plan(selection({**HTTPS, "certificate-authority-data": ""}, {}), {})
    assert plan is not None and plan.ca_file is None and plan.ca_data is None


def test_plain_http_reads_no_certificates_and_anonymous_is_direct() -> None:
    plan = direct_plan(
        selection({"server": "http://127.0.0.1:8080", "certificate-authority": "/ca"}, None),
        {"https": "http://proxy:3128"},  # for https only
    )
    assert plan == DirectPlan(server="http://127.0.0.1:8080")


def test_insecure_skip_tls_verify() -> None:
    plan = direct_plan(selection({**HTTPS, "insecure-skip-tls-verify": True}, {}), {})
    assert plan is not None and not plan.verify


# -- TLS against a real server -------------------------------------------------------------------


class _Echo(BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        peer = self.connection.getpeercert() or {}  # type: ignore[attr-defined]
        subject = dict(item[0] for item in peer.get("subject", ()))
        body = json.dumps(
            {"cn": subject.get("commonName"), "authorization": self.headers.get("Authorization")}
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def server(pki: Path) -> Iterator[str]:
    """An https server with the lab's serving certificate that requires a client certificate
    of the lab CA, echoing the client's CN and Authorization header."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(pki / "apiserver.crt", pki / "apiserver.key")
    context.load_verify_locations(pki / "ca.crt")
    context.verify_mode = ssl.CERT_OPTIONAL
    httpd = HTTPServer(("127.0.0.1", 0), _Echo)
    httpd.socket = context.wrap_socket(httpd.socket, server_side=True)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"https://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def _b64(path: Path) -> str:
    return base64.b64encode(path.read_bytes()).decode()


def connect(plan: DirectPlan) -> Cluster:
    def no_client() -> k8s_transport.ClientTransport:
        raise AssertionError("the official client is not needed")

    return Cluster(DirectTransport(plan, "test-kubeconfig", no_client), "ctx")


def test_client_certificate_from_files(server: str, pki: Path) -> None:
    plan = DirectPlan(
        server=server,
        ca_file=str(pki / "ca.crt"),
        cert_file=str(pki / "admin.crt"),
        key_file=str(pki / "admin.key"),
    )
    with connect(plan) as cluster:
        assert cluster.get("/version") == {"cn": "kubernetes-admin", "authorization": None}


def test_base64_data_and_token(server: str, pki: Path) -> None:
    plan = DirectPlan(
        server=server,
        ca_data=_b64(pki / "ca.crt"),
        cert_data=_b64(pki / "scheduler.crt"),
        key_data=_b64(pki / "scheduler.key"),
        token="abc",
    )
    with connect(plan) as cluster:
        assert cluster.get("/version") == {
            "cn": "system:kube-scheduler",
            "authorization": "Bearer abc",
        }


def test_tls_server_name_is_the_name_checked(server: str, pki: Path) -> None:
    ca = str(pki / "ca.crt")
    with connect(DirectPlan(server=server, ca_file=ca, tls_server_name="kubernetes")) as cluster:
        assert cluster.get("/")["cn"] is None
    with connect(DirectPlan(server=server, ca_file=ca, tls_server_name="other.example")) as c:
        with pytest.raises(ClusterError, match="cannot reach the API server"):
            c.get("/")


def test_a_server_of_another_ca_is_refused_unless_insecure(server: str, tmp_path: Path) -> None:
    other = tmp_path / "other"
    generate(other, "127.0.0.1")
    with connect(DirectPlan(server=server, ca_file=str(other / "ca.crt"))) as cluster:
        with pytest.raises(ClusterError, match="certificate verify failed") as err:
            cluster.get("/")
    assert err.value.exit_code == 4
    with connect(DirectPlan(server=server, verify=False)) as cluster:
        assert cluster.get("/")["cn"] is None


def test_token_file_is_trimmed_and_read_again_after_a_minute(
    server: str, pki: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    token = tmp_path / "token"
    token.write_text("first\n")
    now = [1000.0]
    monkeypatch.setattr(k8s_transport.time, "monotonic", lambda: now[0])
    plan = DirectPlan(server=server, ca_file=str(pki / "ca.crt"), token_file=str(token))
    with connect(plan) as cluster:
        token.write_text("second\n")
        assert cluster.get("/")["authorization"] == "Bearer first"
        now[0] += k8s_transport.TOKEN_FILE_PERIOD
        assert cluster.get("/")["authorization"] == "Bearer second"


@pytest.mark.parametrize(
    ("plan", "message"),
    [
        (DirectPlan(server="https://x", ca_file="/nonexistent/ca.crt"), "File does not exist"),
        (
            DirectPlan(server="https://x", cert_file="/nonexistent/u.crt", key_file="/x.key"),
            "File does not exist: /nonexistent/u.crt",
        ),
        (DirectPlan(server="https://x", ca_data="bm90IGEgY2VydA=="), "certificate authority"),
        (DirectPlan(server="https://x", token_file="/nonexistent/token"), "tokenFile"),
    ],
    ids=["missing-ca-file", "missing-cert-file", "ca-data-not-a-cert", "missing-token-file"],
)
def test_bad_files_are_cluster_errors_naming_the_kubeconfig(plan: DirectPlan, message: str) -> None:
    with pytest.raises(ClusterError) as err:
        connect(plan)
    assert message in err.value.message and "test-kubeconfig" in err.value.message
    assert err.value.exit_code == 4


def test_a_ca_file_that_is_not_a_certificate(tmp_path: Path, pki: Path) -> None:
    bad = tmp_path / "ca.crt"
    bad.write_text("not a certificate\n")
    with pytest.raises(ClusterError, match=f"certificate authority {bad}"):
        connect(DirectPlan(server="https://x", ca_file=str(bad)))
    with pytest.raises(ClusterError, match="client certificate"):
        connect(DirectPlan(server="https://x", cert_file=str(pki / "admin.crt"), key_file=str(bad)))


def test_the_official_client_is_built_lazily_from_the_same_kubeconfig(
    tmp_path: Path, pki: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import yaml

    kubeconfig = tmp_path / "config"
    kubeconfig.write_text(
        yaml.safe_dump(
            {
                "current-context": "lab",
                "contexts": [{"name": "lab", "context": {"cluster": "c", "user": "u"}}],
                "clusters": [
                    {
                        "name": "c",
                        "cluster": {
                            "server": "https://127.0.0.1:1",
                            "certificate-authority": str(pki / "ca.crt"),
                        },
                    }
                ],
                "users": [{"name": "u", "user": {"token": "abc"}}],
            }
        )
    )
    monkeypatch.delenv("HTTPS_PROXY", raising=False)
    monkeypatch.delenv("https_proxy", raising=False)
    monkeypatch.delenv("ALL_PROXY", raising=False)
    monkeypatch.delenv("all_proxy", raising=False)
    with Cluster.connect(str(kubeconfig)) as cluster:
        assert isinstance(cluster.transport, DirectTransport)
        configuration = cluster.api_client.configuration
        assert configuration.host == "https://127.0.0.1:1"
        assert configuration.ssl_ca_cert == str(pki / "ca.crt")
        # auth_settings(), as Cluster reads it: api_key's own key differs between client releases
        assert configuration.auth_settings()["BearerToken"]["value"] == "Bearer abc"
        assert cluster.api_client is cluster.api_client  # built once


def test_an_environment_proxy_keeps_the_official_client(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import yaml

    kubeconfig = tmp_path / "config"
    kubeconfig.write_text(
        yaml.safe_dump(
            {
                "current-context": "x",
                "contexts": [{"name": "x", "context": {"cluster": "c", "user": ""}}],
                "clusters": [{"name": "c", "cluster": {"server": "https://10.0.0.1:6443"}}],
            }
        )
    )
    monkeypatch.setenv("HTTPS_PROXY", "http://127.0.0.1:3128")
    with Cluster.connect(str(kubeconfig)) as cluster:
        assert isinstance(cluster.transport, k8s_transport.ClientTransport)
        configuration = cluster.api_client.configuration
        if hasattr(type(configuration), "_env_proxy"):  # releases that honour the environment
            assert configuration.proxy == "http://127.0.0.1:3128"


@pytest.mark.parametrize("proxy", [False, True], ids=["direct", "official-client"])
def test_connections_sets_the_pool_size(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, proxy: bool
) -> None:
    """The scheduler keeps one connection per request in flight (kschedctl.model.scheduling.loop
    CONNECTIONS): on both transports the pool holds that many."""
    kubeconfig = tmp_path / "config"
    kubeconfig.write_text(
        json.dumps(
            {
                "current-context": "x",
                "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
                "clusters": [{"name": "c", "cluster": {"server": "https://10.0.0.1:6443"}}],
                "users": [{"name": "u", "user": {"token": "abc"}}],
            }
        )
    )
    for var in ("HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(var, raising=False)
    if proxy:  # an environment proxy: the official client's transport
        monkeypatch.setenv("HTTPS_PROXY", "http://127.0.0.1:3128")
    with Cluster.connect(str(kubeconfig), connections=44) as cluster:
        assert cluster.transport.pool_manager.connection_pool_kw["maxsize"] == 44
    with Cluster.connect(str(kubeconfig)) as cluster:
        assert cluster.transport.pool_manager.connection_pool_kw["maxsize"] != 44
