"""kubectl's connection flags against the real lab: who the API server sees (--as, --as-group,
--token), where kschedctl connects (--server, --certificate-authority,
--insecure-skip-tls-verify), -v 6's request lines, and --request-timeout against a socket
that never answers."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from e2e_helpers import run, service_account_token

from kschedctl.kubeclient.client import Cluster
from kschedctl.lab.cluster import Lab

RBAC_API = "/apis/rbac.authorization.k8s.io/v1"


def server_url(lab: Lab) -> str:
    state = lab.state()
    assert state is not None
    return f"https://127.0.0.1:{state.api_port}"


def reader_token(cluster: Cluster, namespace: str) -> str:
    """A fresh token of ServiceAccount ``namespace/reader``, which may list the namespace's
    pods and events and nothing else."""
    cluster.create(
        f"/api/v1/namespaces/{namespace}/serviceaccounts", {"metadata": {"name": "reader"}}
    )
    cluster.create(f"{RBAC_API}/namespaces/{namespace}/roles", {"metadata": {"name": "read"}, "rules": [
        {"apiGroups": ["", "events.k8s.io"], "resources": ["pods", "events"],
         "verbs": ["get", "list"]}]})  # fmt: skip
    cluster.create(f"{RBAC_API}/namespaces/{namespace}/rolebindings", {
        "metadata": {"name": "read"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "read"},
        "subjects": [{"kind": "ServiceAccount", "name": "reader", "namespace": namespace}]})  # fmt: skip
    return service_account_token(cluster, namespace, "reader", 3600)


def without_kubeconfig(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``kschedctl ARGS`` with no kubeconfig at all: only the flags say where to connect."""
    env = {**os.environ, "KUBECONFIG": str(cwd / "missing-kubeconfig")}
    return subprocess.run(
        [sys.executable, "-m", "kschedctl", *args],
        capture_output=True, text=True, cwd=cwd, env=env, timeout=240,
    )  # fmt: skip


def test_as_makes_the_api_server_see_another_user(lab: Lab, tmp_path: Path) -> None:
    done = run(lab, "list", "--as", "jane", cwd=tmp_path)
    assert done.returncode == 4, done.stderr
    assert "forbidden" in done.stderr and '"jane"' in done.stderr
    assert "hint:" in done.stderr
    # the same user in system:masters may do everything: the groups reach the server too
    done = run(lab, "list", "--as", "jane", "--as-group", "system:masters", cwd=tmp_path)
    assert done.returncode == 0, done.stderr


def test_as_group_without_as_is_a_usage_error(lab: Lab, tmp_path: Path) -> None:
    done = run(lab, "list", "--as-group", "system:masters", cwd=tmp_path)
    assert done.returncode == 2
    assert "--as-group needs --as" in done.stderr and "hint: add --as USER" in done.stderr


def test_token_replaces_the_kubeconfig_credentials(
    lab: Lab, cluster: Cluster, namespace: str, tmp_path: Path
) -> None:
    token = reader_token(cluster, namespace)
    # the lab kubeconfig's admin certificate is not used: the token's account is refused
    done = run(lab, "list", "--token", token, cwd=tmp_path)
    assert done.returncode == 4, done.stderr
    assert f"system:serviceaccount:{namespace}:reader" in done.stderr
    assert token not in done.stderr + done.stdout
    # ... and allowed what its Role grants
    done = run(lab, "events", "-n", namespace, "--token", token, cwd=tmp_path)
    assert done.returncode == 0, done.stderr


def test_server_and_certificate_authority_without_a_kubeconfig(
    lab: Lab, cluster: Cluster, namespace: str, tmp_path: Path
) -> None:
    token = reader_token(cluster, namespace)
    server = server_url(lab)
    flags = ("events", "-n", namespace, "--server", server, "--token", token)
    done = without_kubeconfig(
        *flags, "--certificate-authority", str(lab.pki / "ca.crt"), cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    # a CA that did not sign the server's certificate: refused, named, exit 4
    other_ca = lab.pki / "front-proxy-ca.crt"
    if not other_ca.exists():
        other_ca = tmp_path / "other-ca.crt"
        other_ca.write_text((lab.pki / "admin.crt").read_text())
    done = without_kubeconfig(*flags, "--certificate-authority", str(other_ca), cwd=tmp_path)
    assert done.returncode == 4, done.stderr
    assert "certificate" in done.stderr.lower() and "hint:" in done.stderr
    # no CA at all: the system's CAs do not know the lab's, unless the check is skipped
    done = without_kubeconfig(*flags, "--insecure-skip-tls-verify", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    both = without_kubeconfig(
        *flags, "--insecure-skip-tls-verify", "--certificate-authority", str(other_ca),
        cwd=tmp_path,
    )  # fmt: skip
    assert both.returncode == 2 and "contradict" in both.stderr


def test_v6_prints_each_request_but_never_the_token(
    lab: Lab, cluster: Cluster, namespace: str, tmp_path: Path
) -> None:
    token = reader_token(cluster, namespace)
    for spelling in (("-v", "6"), ("-v=6",), ("--v=7",), ("--verbosity", "6")):
        done = run(lab, "events", "-n", namespace, "--token", token, *spelling, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        lines = [line for line in done.stderr.splitlines() if line.startswith("GET ")]
        assert lines, done.stderr
        assert any(
            f"{server_url(lab)}/apis/events.k8s.io/v1/namespaces/{namespace}/events" in line
            and " 200 OK in " in line
            and line.endswith(" milliseconds")
            for line in lines
        ), lines
        assert token not in done.stderr + done.stdout
        assert "Bearer" not in done.stderr and "Authorization" not in done.stderr
    quiet = run(lab, "events", "-n", namespace, "-v", "5", cwd=tmp_path)
    assert quiet.returncode == 0 and "GET " not in quiet.stderr


@pytest.fixture()
def silent_server() -> Iterator[str]:
    """A listening socket that accepts connections and never says a word: an API server
    that hangs."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    accepted: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            accepted.append(conn)

    worker = threading.Thread(target=accept, daemon=True)
    worker.start()
    try:
        yield f"https://127.0.0.1:{listener.getsockname()[1]}"
    finally:
        stop.set()
        listener.close()
        for conn in accepted:
            conn.close()
        worker.join(10)


def test_request_timeout_against_a_server_that_never_answers(
    silent_server: str, tmp_path: Path
) -> None:
    flags = ("list", "--server", silent_server, "--insecure-skip-tls-verify")
    done = without_kubeconfig(*flags, "--request-timeout", "2s", cwd=tmp_path)
    assert done.returncode == 4, done.stderr
    assert f"the API server at {silent_server} did not answer" in done.stderr
    assert "within --request-timeout 2s" in done.stderr
    assert "hint:" in done.stderr and "--request-timeout" in done.stderr.split("hint:")[1]
    assert "Traceback" not in done.stderr
    bad = without_kubeconfig(*flags, "--request-timeout", "soon", cwd=tmp_path)
    assert bad.returncode == 2 and "--request-timeout" in bad.stderr and "hint:" in bad.stderr


def test_tab_asks_the_cluster_with_the_connection_flags(
    lab: Lab, cluster: Cluster, namespace: str, tmp_path: Path
) -> None:
    """A TAB connects as the command would: --server/--token/--certificate-authority with no
    kubeconfig at all, and --as is who the API server sees."""
    from e2e_helpers import pod_manifest

    cluster.create(f"/api/v1/namespaces/{namespace}/pods",
                   pod_manifest("waiting", schedulerName="nobody-serves-this"))  # fmt: skip
    token = reader_token(cluster, namespace)

    def complete(line: str, kubeconfig: Path) -> list[str]:
        env = {**os.environ, "KUBECONFIG": str(kubeconfig), "KSCHEDCTL_COMPLETION_TIMEOUT": "60",
               "_KSCHEDCTL_COMPLETE": "complete_bash", "COMP_WORDS": line,
               "COMP_CWORD": str(len(line.split(" ")) - 1)}  # fmt: skip
        done = subprocess.run([sys.executable, "-m", "kschedctl"], capture_output=True,
                              text=True, cwd=tmp_path, env=env, timeout=240)  # fmt: skip
        assert done.returncode == 0 and done.stderr == "", done.stderr
        return done.stdout.split()

    flags = (
        f"--server {server_url(lab)} --token {token} --certificate-authority {lab.pki / 'ca.crt'}"
    )
    missing = tmp_path / "missing-kubeconfig"
    assert complete(f"kschedctl why -n {namespace} {flags} ", missing) == ["waiting"]
    # the token's account may not list schedulers: no candidates rather than the admin's
    assert complete(f"kschedctl status {flags} ", missing) == []
    assert complete("kschedctl status --as jane ", lab.kubeconfig) == []
    as_admin = complete("kschedctl status --as jane --as-group system:masters ", lab.kubeconfig)
    assert "default-scheduler" in as_admin
