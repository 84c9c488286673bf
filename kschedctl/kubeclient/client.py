"""The one place kschedctl talks to the Kubernetes API.

Requests are raw urllib3 requests, responses parsed with ``json.loads``: everything above this
layer works on plain dicts, and large lists skip the typed models that are slow to build. The
connection they go through is set up in :mod:`kschedctl.kubeclient.transport`. Client
exceptions become kschedctl errors here, chained with ``raise … from``.
"""

from __future__ import annotations

import json
import ssl
import time
from collections.abc import Callable, Iterator, Mapping, MutableMapping
from typing import Any
from urllib.parse import urlencode

from kschedctl import __version__
from kschedctl.base.errors import (
    ApiError,
    ClusterError,
    ConflictError,
    ForbiddenError,
    KschedError,
    NotFoundError,
    shown_path,
)
from kschedctl.kubeclient.kubeconfig import (
    Overrides,
    direct_plan,
    kubeconfig_paths,
    merge_kubeconfigs,
    read_kubeconfigs,
    select,
)
from kschedctl.kubeclient.transport import (
    DirectTransport,
    Transport,
    client_transport,
    incluster_namespace,
    incluster_possible,
    kubeconfig_hint,
)

DEFAULT_TIMEOUT = 30.0
# A GET whose connection broke before any answer is sent again, like client-go's (_call).
GET_ATTEMPTS = 3
Page = list[dict[str, Any]]  # the items of one page of a list (Cluster.pages)
FIELD_MANAGER = "kschedctl"
NO_OVERRIDES = Overrides()
Trace = Callable[[str], None]  # where each request's line goes (-v 6): the CLI's stderr


class Cluster:
    """A connection to one API server (one kubeconfig context)."""

    def __init__(
        self,
        transport: Transport,
        context: str | None,
        namespace: str = "default",
        overrides: Overrides = NO_OVERRIDES,
        trace: Trace | None = None,
    ) -> None:
        self.transport = transport
        self.context = context
        self.server = transport.server
        # False with insecure-skip-tls-verify: the CLI warns once (urllib3's warnings are off)
        self.verifies_tls: bool = getattr(transport, "verifies_tls", True)
        self.namespace = namespace  # the context's namespace: kubectl's default for -n
        self.overrides = overrides
        self.trace = trace
        # --as, --as-group: client-go's impersonation headers, on every request
        self.impersonation: list[tuple[str, str]] = []
        if overrides.impersonate is not None:
            self.impersonation.append(("Impersonate-User", overrides.impersonate))
        self.impersonation += [("Impersonate-Group", g) for g in overrides.impersonate_groups]

    @property
    def api_client(self) -> Any:
        """The official client's ``ApiClient`` for this connection (port-forward, websockets):
        built on first use when the connection was opened without it."""
        api_client = self.transport.api_client
        for header, value in self.impersonation:
            api_client.set_default_header(header, value)  # one per header: its last group
        return api_client

    @classmethod
    def connect(
        cls,
        kubeconfig: str | None = None,
        context: str | None = None,
        *,
        cluster: str | None = None,
        user: str | None = None,
        connections: int = 0,
        overrides: Overrides = NO_OVERRIDES,
        trace: Trace | None = None,
    ) -> Cluster:
        """Connect as kubectl would: ``--kubeconfig`` alone, else every file of
        ``$KUBECONFIG`` (or ``~/.kube/config``) merged with kubectl's rules
        (:mod:`kschedctl.kubeclient.kubeconfig`), then the ``--context``/``--cluster``/``--user``
        overrides; with no kubeconfig at all, the pod's service account (in-cluster).

        Certificates and tokens are set up with urllib3 alone (:func:`direct_plan`); exec
        plugins, auth-providers, basic auth and proxies go through the official client.
        ``connections``: connections kept per server (0: the official client's cpu_count × 5);
        a caller with more requests in flight at once needs as many, or every request past
        them opens (and closes) a TLS connection of its own. ``overrides``: kubectl's
        connection flags (--server, --token, --as, --request-timeout, …); ``trace``: where
        each request's line goes (kubectl -v 6), never a header."""
        # urllib.request (getproxies) is not loaded by the offline commands
        from urllib.request import getproxies

        paths = kubeconfig_paths(kubeconfig)
        files = read_kubeconfigs(paths, explicit=kubeconfig is not None)
        where = ", ".join(shown_path(path) for path, _ in files) or "in-cluster"
        given = overrides.server is not None
        if not files and not kubeconfig and not given and incluster_possible():
            # client-go's DeferredLoadingClientConfig: an empty config falls back to
            # the service account (KUBERNETES_SERVICE_HOST/PORT and its token file)
            client = client_transport(None, where, connections)
            return cls(client, None, incluster_namespace(), overrides, trace)
        if not files and not given:
            raise ClusterError(
                f"no kubeconfig found (looked for {', '.join(shown_path(p) for p in paths)})",
                hint=kubeconfig_hint() + ", or pass --server URL",
            )
        chosen = select(
            merge_kubeconfigs(files), context=context, cluster=cluster, user=user,
            overrides=overrides,
        )  # fmt: skip
        plan = direct_plan(chosen, getproxies())
        if plan is None:
            client = client_transport(chosen, where, connections)
            return cls(client, chosen.context, chosen.namespace, overrides, trace)
        transport = DirectTransport(
            plan, where, lambda: client_transport(chosen, where, connections), connections
        )
        return cls(transport, chosen.context, chosen.namespace, overrides, trace)

    # -- raw requests -------------------------------------------------------------------------

    def _call(
        self,
        method: str,
        path: str,
        *,
        query: Mapping[str, Any] | None = None,
        body: Any = None,
        content_type: str = "application/json",
        timeout: float | tuple[float, float | None] | None = DEFAULT_TIMEOUT,
        stream: bool = False,
    ) -> Any:
        # urllib3: loaded by the commands that talk to a cluster
        import urllib3
        from urllib3._collections import HTTPHeaderDict  # urllib3 1.x and 2.x
        from urllib3.exceptions import HTTPError, TimeoutError

        params = [(k, _query_value(v)) for k, v in (query or {}).items() if v is not None]
        url = self.server + path + ("?" + urlencode(params) if params else "")
        headers: MutableMapping[str, str] = {
            "Accept": "application/json",
            "User-Agent": f"kschedctl/{__version__}",
        }
        authorization = self.transport.authorization()
        if authorization:
            headers["Authorization"] = authorization
        if self.impersonation:
            # one Impersonate-Group line per group: the API server reads each line as one
            # group (net/http does not split on commas); a dict holds each name once
            headers = HTTPHeaderDict(headers)
            for header, value in self.impersonation:
                headers.add(header, value)
        payload = None
        if body is not None:
            headers["Content-Type"] = content_type
            payload = body if isinstance(body, (str, bytes)) else json.dumps(body)
        limit = self.overrides.request_timeout
        if limit is not None:
            # --request-timeout bounds every request, streams too (kubectl's); 0: none
            bound = limit or None
            if isinstance(timeout, tuple):
                timeout = (_at_most(timeout[0], bound), _at_most(timeout[1], bound))  # type: ignore[assignment]
            else:
                timeout = bound
        if isinstance(timeout, tuple):
            urllib3_timeout = urllib3.Timeout(connect=timeout[0], read=timeout[1])
        else:
            urllib3_timeout = urllib3.Timeout(total=timeout)
        attempt = 0
        started = time.monotonic()
        while True:
            try:
                response = self.transport.pool_manager.request(
                    method,
                    url,
                    body=payload,
                    headers=headers,
                    timeout=urllib3_timeout,
                    retries=False,
                    preload_content=not stream,
                )
                break
            except HTTPError as err:
                attempt += 1
                if method == "GET" and attempt < GET_ATTEMPTS and _connection_broke(err):
                    time.sleep(0.1 * attempt)
                    continue
                self._traced(method, url, "no answer", started)
                if isinstance(err, TimeoutError) and limit:
                    raise ClusterError(
                        f"the API server at {self.server} did not answer {method} {path} "
                        f"within --request-timeout {limit:g}s",
                        hint="check that the API server is up and reachable, or pass a longer "
                        "--request-timeout (0: no limit)",
                    ) from err
                raise ClusterError(
                    f"cannot reach the API server at {self.server}: {_short(err)}",
                    hint="check that the cluster is running and the kubeconfig points at it "
                    "(`kschedctl lab status` for the lab)",
                ) from err
        self._traced(method, url, f"{response.status} {response.reason or ''}".strip(), started)
        if response.status >= 400:
            data = response.data if not stream else response.read()
            raise _translate(response.status, response.reason, data, method, path)
        if stream:
            return response
        return json.loads(response.data) if response.data else {}

    def _traced(self, method: str, url: str, status: str, started: float) -> None:
        """kubectl -v 6's line for one request: method, URL, status, time; never a header
        (the token and client certificate stay out of the terminal and of logs)."""
        if self.trace is not None:
            took = round((time.monotonic() - started) * 1000)
            self.trace(f"{method} {url} {status} in {took} milliseconds")

    def request(self, method: str, path: str, **kwargs: Any) -> dict[str, Any]:
        result: dict[str, Any] = self._call(method, path, **kwargs)
        return result

    def get(self, path: str, **query: Any) -> dict[str, Any]:
        return self.request("GET", path, query=query)

    def list(self, path: str, **query: Any) -> list[dict[str, Any]]:
        """All items of a collection, following ``continue`` tokens."""
        items: list[dict[str, Any]] = []
        token = None
        while True:
            page = self.get(path, limit=query.pop("limit", 500), **query, **{"continue": token})
            items.extend(page.get("items") or [])
            token = (page.get("metadata") or {}).get("continue")
            if not token:
                return items

    def pages(self, path: str, *, limit: int = 500, **query: Any) -> Iterator[Page]:
        """The items of a collection one page at a time (``continue`` tokens followed): a
        caller that reduces each page never holds every object of a large cluster at once."""
        token = None
        while True:
            page = self.get(path, limit=limit, **query, **{"continue": token})
            yield page.get("items") or []
            token = (page.get("metadata") or {}).get("continue")
            if not token:
                return

    def create(self, path: str, body: Mapping[str, Any], **query: Any) -> dict[str, Any]:
        return self.request("POST", path, body=body, query=query)

    def delete(self, path: str, **query: Any) -> dict[str, Any]:
        return self.request("DELETE", path, query=query)

    def patch(self, path: str, body: Any, *, merge: bool = True, **query: Any) -> dict[str, Any]:
        kind = "merge-patch" if merge else "strategic-merge-patch"
        return self.request(
            "PATCH", path, body=body, query=query, content_type=f"application/{kind}+json"
        )

    def apply(
        self, path: str, body: Mapping[str, Any], *, dry_run: bool = False, force: bool = True
    ) -> dict[str, Any]:
        """Server-side apply of one object at its own URL (field manager ``kschedctl``)."""
        return self.request(
            "PATCH",
            path,
            body=body,  # the client JSON-encodes it; JSON is valid apply YAML
            query={
                "fieldManager": FIELD_MANAGER,
                "force": force,
                "dryRun": "All" if dry_run else None,
            },
            content_type="application/apply-patch+yaml",
        )

    def stream_lines(
        self,
        path: str,
        *,
        read_timeout: float | None = None,
        partial: bool = True,
        **query: Any,
    ) -> Iterator[bytes]:
        """Lines of a streaming response (watch, follow logs); ends when the server closes it.

        ``read_timeout`` bounds the silence between chunks (a watch should pass a little more
        than its ``timeoutSeconds``), so a connection that died without a FIN cannot hang the
        caller forever. A stream broken midway raises :class:`ClusterError`. ``partial=False``
        drops an unterminated last line: a log follow that is reopened reads it again whole.
        """
        # urllib3: loaded by the commands that talk to a cluster
        from urllib3.exceptions import HTTPError

        response = self._call("GET", path, query=query, timeout=(10, read_timeout), stream=True)
        try:
            buffer = b""
            try:
                for chunk in response.stream(4096, decode_content=True):
                    buffer += chunk
                    while b"\n" in buffer:
                        line, buffer = buffer.split(b"\n", 1)
                        yield line
            except HTTPError as err:
                raise ClusterError(
                    f"the stream from {self.server} broke: {_short(err)}",
                    hint="the API server restarted or the connection dropped; retry",
                ) from err
            if buffer and partial:
                yield buffer
        finally:
            response.release_conn()

    def server_version(self) -> dict[str, Any]:
        return self.get("/version")

    def close(self) -> None:
        self.transport.close()

    def __enter__(self) -> Cluster:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _at_most(value: float | None, bound: float | None) -> float | None:
    """The smaller of two timeouts, ``None`` being no limit."""
    if value is None or bound is None:
        return bound if value is None else value
    return min(value, bound)


def _query_value(value: Any) -> Any:
    if isinstance(value, bool):
        return "true" if value else "false"
    return value


def _connection_broke(err: BaseException) -> bool:
    """Whether ``err`` is a connection that broke before an answer came (reset, closed, a TLS
    alert or EOF in the handshake): client-go retries a GET then (``IsConnectionReset``,
    ``IsProbableEOF``), since a read is safe to send again. A server certificate that fails
    the check, a refused connection or a timeout are answers of their own: not retried."""
    # urllib3: loaded by the commands that talk to a cluster
    from urllib3.exceptions import ProtocolError, SSLError

    if isinstance(err, ProtocolError):
        return True
    if isinstance(err, SSLError):
        return not any(isinstance(arg, ssl.SSLCertVerificationError) for arg in err.args)
    return False


def _short(err: BaseException) -> str:
    reason = getattr(err, "reason", None)
    return str(reason or err).split("\n")[0][:300]


def _translate(status: int, http_reason: str, data: bytes, method: str, path: str) -> KschedError:
    try:
        body = json.loads(data or b"{}")
    except (TypeError, ValueError):
        body = {}
    if not isinstance(body, dict):
        body = {}
    message = body.get("message") or http_reason or f"HTTP {status}"
    reason = body.get("reason") or ""
    if status == 401:
        return ClusterError(
            f"the API server rejected our credentials: {message}",
            hint="the kubeconfig's credentials are invalid or expired",
        )
    if status == 403:
        return ForbiddenError(
            f"forbidden: {message}",
            hint="ask a cluster admin for that permission, or use a context that has it",
        )
    if status == 404:
        nf = NotFoundError(message)
        nf.status = status  # type: ignore[attr-defined]
        return nf
    if status == 409:
        return ConflictError(status, reason, message)
    return ApiError(status, reason, f"{method} {path}: {message}")
