"""GETs on a pod's own port through the API server's ``pods/portforward`` — what ``kubectl
port-forward`` does. The caller's credentials open the tunnel (a websocket to the API server)
and go nowhere else: inside it, the pod receives the bearer token it is handed (one minted for
the purpose, :mod:`kschedctl.k8s.tokens`) or nothing at all — never the caller's token, never
the caller's client certificate. A pod is not trusted: whoever can edit it can make it log what
it receives (kube-scheduler at ``--v=10`` logs the TokenReview of every token it is sent).

Why port-forward and not ``pods/proxy``: the API server's proxy reaches the pod with no
credentials at all (its authentication filter removes the Authorization header and the proxy
transport has no client certificate: k8s.io/apiserver pkg/endpoints/filters/authentication.go,
pkg/registry/core/pod/rest/subresources.go), so kube-scheduler, which authorizes ``/metrics``
by delegated authn/authz (k8s.io/apiserver pkg/server/options/authorization.go: only
/healthz, /readyz and /livez are always allowed), sees ``system:anonymous`` and answers 403.
Through a port-forward the TLS session is end to end: kube-scheduler reviews the token it is
sent (TokenReview) and authorizes ``get`` on the non-resource URL with a SubjectAccessReview —
exactly what Prometheus needs, so a figure shown here is one a scraper with the same RBAC reads.

kube-scheduler serves a self-signed certificate unless given one (``--tls-cert-file``), so the
server certificate is not verified (as kube-prometheus scrapes it); the tunnel itself is the
API server's, to the pod the scheduler's objects name.
"""

from __future__ import annotations

import http.client
import queue
import ssl
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import quote

from kschedctl.base.errors import ClusterError, ForbiddenError, KschedError
from kschedctl.kubeclient.client import Cluster

MAX_BODY = 32 * 1024 * 1024  # kube-scheduler's /metrics is ~300 KB; a bound, not an estimate
T = TypeVar("T")


@dataclass(frozen=True)
class Target:
    namespace: str
    pod: str
    port: int
    https: bool  # kube-scheduler: https; kschedctl's own scheduler: plain http


@dataclass(frozen=True)
class Answer:
    status: int
    reason: str
    body: str


def get_via_port_forward(
    cluster: Cluster,
    target: Target,
    path: str = "/metrics",
    timeout: float = 5.0,
    *,
    bearer: str | None = None,
) -> str:
    """The body of GET ``path`` on ``target``'s port, sending ``bearer`` (a token minted for
    this, not the caller's) or no credentials at all; ForbiddenError when the API server
    refuses the port-forward or the pod refuses the token (the message says which),
    ClusterError when it cannot be reached or does not answer within ``timeout`` seconds."""
    (answer,) = _in_thread(target, timeout, lambda: _get(cluster, target, [path], timeout, bearer))
    if answer.status == 401:
        raise ForbiddenError(
            f"{_where(target)}: the scheduler answered 401 {answer.reason}: it could not "
            f"authenticate {'the token it was sent' if bearer else 'an anonymous request'}",
            hint="it reviews bearer tokens with a TokenReview: its delegated authentication "
            "needs the kube-system/extension-apiserver-authentication ConfigMap",
        )
    if answer.status == 403:
        raise ForbiddenError(
            f"{_where(target)}: the scheduler answered 403 {answer.reason} for {path}",
            hint=f"the token's ServiceAccount needs `get` on the non-resource URL {path} "
            f"(a ClusterRole with nonResourceURLs: [{path}], verbs: [get])",
        )
    if answer.status != 200:
        raise ClusterError(f"{_where(target)}: {path} answered {answer.status} {answer.reason}")
    return answer.body


def probe_via_port_forward(
    cluster: Cluster, target: Target, paths: list[str], timeout: float = 5.0
) -> dict[str, Answer]:
    """GET each of ``paths`` on ``target``'s port with no credentials at all (kube-scheduler
    serves /healthz, /readyz and /livez to anyone), through one port-forward: path → answer."""
    answers = _in_thread(target, timeout, lambda: _get(cluster, target, paths, timeout, None))
    return dict(zip(paths, answers, strict=True))


def _in_thread(target: Target, timeout: float, work: Callable[[], T]) -> T:
    answers: queue.Queue[tuple[T | None, KschedError | None]] = queue.Queue()

    def run() -> None:
        try:
            answers.put((work(), None))
        except KschedError as err:
            answers.put((None, err))
        except Exception as err:  # noqa: BLE001 - a network stack's any failure: unreachable
            answers.put((None, ClusterError(f"{_where(target)}: {type(err).__name__}: {err}")))

    # The client's websocket handshake has no timeout of its own: the whole exchange runs in a
    # daemon thread, given up on (and left to die with the process) after the timeout.
    threading.Thread(target=run, name="port-forward", daemon=True).start()
    try:
        result, error = answers.get(timeout=timeout)
    except queue.Empty:
        raise ClusterError(f"{_where(target)}: no answer within {timeout:g}s") from None
    if error is not None:
        raise error
    assert result is not None
    return result


def _where(target: Target) -> str:
    return f"pod {target.namespace}/{target.pod} port {target.port}"


def _get(
    cluster: Cluster, target: Target, paths: list[str], timeout: float, bearer: str | None
) -> list[Answer]:
    # the websocket stream client: loaded by the one command that forwards a port. Called
    # directly, not through CoreV1Api, whose typed models take seconds to import.
    from kubernetes.client.rest import ApiException
    from kubernetes.stream.ws_client import portforward_call

    configuration = cluster.api_client.configuration
    url = (
        f"{configuration.host}/api/v1/namespaces/{quote(target.namespace, safe='')}"
        f"/pods/{quote(target.pod, safe='')}/portforward"
    )
    # The caller's credentials authenticate this websocket to the API server (its client
    # certificate is in ``configuration``), and nothing past it.
    headers = {}
    # auth_settings(): the one accessor every supported client release has the same way
    # (get_api_key_with_prefix's arguments changed after 30.1.0); it runs the refresh hook.
    own = (configuration.auth_settings().get("BearerToken") or {}).get("value")
    if own:
        headers["authorization"] = own
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
        return _request(forward, target, paths, timeout, bearer)
    finally:
        forward.close()


class _Forwarded(http.client.HTTPConnection):
    """An HTTP connection over the forwarded stream only: never a connection of its own (an
    HTTPConnection whose socket closed would otherwise dial the pod's name itself)."""

    def connect(self) -> None:
        raise ConnectionError("the forwarded stream was closed")


def _request(
    forward: Any, target: Target, paths: list[str], timeout: float, bearer: str | None
) -> list[Answer]:
    sock = forward.socket(target.port)
    sock.settimeout(timeout)
    headers = {"Accept": "text/plain", "User-Agent": "kschedctl"}
    if bearer:
        headers["Authorization"] = f"Bearer {bearer}"
    if target.https:
        # No client certificate: the caller's is for the API server alone. The server's is
        # self-signed unless configured otherwise (see the module's docstring).
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
        try:
            sock = context.wrap_socket(sock, server_hostname=target.pod)
        except (OSError, ssl.SSLError) as err:
            problem = forward.error(target.port) or str(err)
            raise ClusterError(
                f"{_where(target)}: no TLS answer: {str(problem).strip()[:300]}",
                hint="is the scheduler running and serving on that port?",
            ) from err
    connection = _Forwarded(target.pod, target.port, timeout=timeout)
    connection.sock = sock  # the forwarded stream
    answers = []
    try:
        for path in paths:  # one keep-alive connection: Go's servers and http.server keep it
            connection.request("GET", path, headers=headers)
            response = connection.getresponse()
            body = response.read(MAX_BODY + 1)
            if len(body) > MAX_BODY:
                raise ClusterError(f"{_where(target)}: {path} is larger than {MAX_BODY} bytes")
            answers.append(
                Answer(response.status, response.reason, body.decode("utf-8", errors="replace"))
            )
    except (OSError, http.client.HTTPException) as err:
        problem = forward.error(target.port) or str(err)
        raise ClusterError(f"{_where(target)}: {str(problem).strip()[:300]}") from err
    finally:
        connection.close()
    return answers
