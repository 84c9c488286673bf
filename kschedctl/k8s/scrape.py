"""A GET on a pod's own port through the API server's ``pods/portforward`` — what ``kubectl
port-forward`` does — with the caller's own credentials.

Why port-forward and not ``pods/proxy``: the API server's proxy reaches the pod WITHOUT the
caller's credentials (its authentication filter removes the Authorization header and the proxy
transport has no client certificate: k8s.io/apiserver pkg/endpoints/filters/authentication.go,
pkg/registry/core/pod/rest/subresources.go), so kube-scheduler, which authorizes ``/metrics``
by delegated authn/authz (k8s.io/apiserver pkg/server/options/authorization.go: only
/healthz, /readyz and /livez are always allowed), sees ``system:anonymous`` and answers 403.
Through a port-forward the TLS session is end to end: kube-scheduler authenticates the caller
by its client certificate (the cluster's client CA) or bearer token (TokenReview) and
authorizes ``get`` on the non-resource URL with a SubjectAccessReview — exactly what
Prometheus needs, so a figure shown here is one a scraper with the same RBAC can read.

kube-scheduler serves a self-signed certificate unless given one (``--tls-cert-file``), so the
server certificate is not verified (as kube-prometheus scrapes it); the tunnel itself is the
API server's, to the pod the scheduler's objects name.
"""

from __future__ import annotations

import http.client
import queue
import ssl
import threading
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from kschedctl.errors import ClusterError, ForbiddenError, KschedError
from kschedctl.k8s.client import Cluster

MAX_BODY = 32 * 1024 * 1024  # kube-scheduler's /metrics is ~300 KB; a bound, not an estimate


@dataclass(frozen=True)
class Target:
    namespace: str
    pod: str
    port: int
    https: bool  # kube-scheduler: https; kschedctl's own scheduler: plain http


def get_via_port_forward(
    cluster: Cluster, target: Target, path: str = "/metrics", timeout: float = 5.0
) -> str:
    """The body of GET ``path`` on ``target``'s port; ForbiddenError when the API server
    refuses the port-forward or the pod refuses the caller (the message says which), ClusterError
    when it cannot be reached or does not answer within ``timeout`` seconds."""
    answers: queue.Queue[tuple[str | None, KschedError | None]] = queue.Queue()

    def run() -> None:
        try:
            answers.put((_get(cluster, target, path, timeout), None))
        except KschedError as err:
            answers.put((None, err))
        except Exception as err:  # noqa: BLE001 - a network stack's any failure: unreachable
            answers.put((None, ClusterError(f"{_where(target)}: {type(err).__name__}: {err}")))

    # The client's websocket handshake has no timeout of its own: the whole exchange runs in a
    # daemon thread, given up on (and left to die with the process) after the timeout.
    threading.Thread(target=run, name="port-forward", daemon=True).start()
    try:
        text, error = answers.get(timeout=timeout)
    except queue.Empty:
        raise ClusterError(f"{_where(target)}: no answer within {timeout:g}s") from None
    if error is not None:
        raise error
    assert text is not None
    return text


def _where(target: Target) -> str:
    return f"pod {target.namespace}/{target.pod} port {target.port}"


def _get(cluster: Cluster, target: Target, path: str, timeout: float) -> str:
    # the websocket stream client: loaded by the one command that forwards a port. Called
    # directly, not through CoreV1Api, whose typed models take seconds to import.
    from kubernetes.client.rest import ApiException
    from kubernetes.stream.ws_client import portforward_call

    configuration = cluster.api_client.configuration
    url = (
        f"{configuration.host}/api/v1/namespaces/{quote(target.namespace, safe='')}"
        f"/pods/{quote(target.pod, safe='')}/portforward"
    )
    headers = {}
    token = configuration.get_api_key_with_prefix("BearerToken", alias="authorization")
    if token:
        headers["authorization"] = token
    try:
        forward = portforward_call(
            configuration, "GET", url, query_params=[("ports", str(target.port))], headers=headers
        )
    except ApiException as err:
        reason = str(err.reason or err)
        if "403" in reason:
            raise ForbiddenError(
                f"{_where(target)}: the API server refused the port-forward",
                hint="it needs `get` and `create` on pods/portforward in that namespace (a "
                "websocket port-forward is a GET, and since 1.35 the API server checks create "
                "too: pkg/registry/core/pod/rest/subresources.go)",
            ) from err
        raise ClusterError(f"{_where(target)}: cannot open a port-forward: {reason[:300]}") from err
    try:
        return _request(configuration, forward, target, path, timeout, token)
    finally:
        forward.close()


def _request(
    configuration: Any, forward: Any, target: Target, path: str, timeout: float, token: str | None
) -> str:
    sock = forward.socket(target.port)
    sock.settimeout(timeout)
    headers = {"Accept": "text/plain", "User-Agent": "kschedctl"}
    if target.https:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        # Self-signed unless configured otherwise (see the module's docstring).
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
        if configuration.cert_file and configuration.key_file:
            context.load_cert_chain(configuration.cert_file, configuration.key_file)
        if token and not configuration.cert_file:
            headers["Authorization"] = token
        try:
            sock = context.wrap_socket(sock, server_hostname=target.pod)
        except (OSError, ssl.SSLError) as err:
            problem = forward.error(target.port) or str(err)
            raise ClusterError(
                f"{_where(target)}: no TLS answer: {str(problem).strip()[:300]}",
                hint="is the scheduler running and serving on that port?",
            ) from err
    connection = http.client.HTTPConnection(target.pod, target.port, timeout=timeout)
    connection.sock = sock  # the forwarded stream; HTTPConnection does not connect again
    try:
        connection.request("GET", path, headers=headers)
        response = connection.getresponse()
        body = response.read(MAX_BODY + 1)
    except (OSError, http.client.HTTPException) as err:
        problem = forward.error(target.port) or str(err)
        raise ClusterError(f"{_where(target)}: {str(problem).strip()[:300]}") from err
    finally:
        connection.close()
    if response.status == 401:
        raise ForbiddenError(
            f"{_where(target)}: the scheduler answered 401 {response.reason}: it could not "
            "authenticate you",
            hint="it accepts client certificates signed by the cluster's client CA and bearer "
            "tokens it can review (TokenReview); its delegated authentication needs the "
            "kube-system/extension-apiserver-authentication ConfigMap",
        )
    if response.status == 403:
        raise ForbiddenError(
            f"{_where(target)}: the scheduler answered {response.status} "
            f"{response.reason} for {path}",
            hint=f"your user needs `get` on the non-resource URL {path} "
            f"(a ClusterRole with nonResourceURLs: [{path}], verbs: [get])",
        )
    if response.status != 200:
        raise ClusterError(f"{_where(target)}: {path} answered {response.status} {response.reason}")
    if len(body) > MAX_BODY:
        raise ClusterError(f"{_where(target)}: {path} is larger than {MAX_BODY} bytes")
    return body.decode("utf-8", errors="replace")
