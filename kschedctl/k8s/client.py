"""The one place kschedctl talks to the Kubernetes API.

Requests are raw urllib3 requests, responses parsed with ``json.loads``: everything above this
layer works on plain dicts, and large lists skip the typed models that are slow to build. A
kubeconfig of certificates and tokens is opened with urllib3 alone (:class:`DirectTransport`);
exec plugins, auth-providers, basic auth, proxies and in-cluster go through the official
client's ``Configuration`` and pool manager (:class:`ClientTransport`), whose import costs
~0.3 s. Client exceptions become kschedctl errors here, chained with ``raise … from``.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
import ssl
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any, Protocol
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
from kschedctl.k8s.kubeconfig import (
    DirectPlan,
    Selection,
    direct_plan,
    kubeconfig_paths,
    merge_kubeconfigs,
    read_kubeconfigs,
    select,
)

DEFAULT_TIMEOUT = 30.0
# A GET whose connection broke before any answer is sent again, like client-go's (_call).
GET_ATTEMPTS = 3
Page = list[dict[str, Any]]  # the items of one page of a list (Cluster.pages)
FIELD_MANAGER = "kschedctl"


def _kubeconfig_hint() -> str:
    return (
        "pass --kubeconfig FILE and --context NAME, or set KUBECONFIG "
        '(for the lab: eval "$(kschedctl lab env)")'
    )


class Cluster:
    """A connection to one API server (one kubeconfig context)."""

    def __init__(
        self, transport: Transport, context: str | None, namespace: str = "default"
    ) -> None:
        self.transport = transport
        self.context = context
        self.server = transport.server
        self.namespace = namespace  # the context's namespace: kubectl's default for -n

    @property
    def api_client(self) -> Any:
        """The official client's ``ApiClient`` for this connection (port-forward, websockets):
        built on first use when the connection was opened without it."""
        return self.transport.api_client

    @classmethod
    def connect(
        cls,
        kubeconfig: str | None = None,
        context: str | None = None,
        *,
        cluster: str | None = None,
        user: str | None = None,
        connections: int = 0,
    ) -> Cluster:
        """Connect as kubectl would: ``--kubeconfig`` alone, else every file of
        ``$KUBECONFIG`` (or ``~/.kube/config``) merged with kubectl's rules
        (:mod:`kschedctl.k8s.kubeconfig`), then the ``--context``/``--cluster``/``--user``
        overrides; with no kubeconfig at all, the pod's service account (in-cluster).

        Certificates and tokens are set up with urllib3 alone (:func:`direct_plan`); exec
        plugins, auth-providers, basic auth and proxies go through the official client.
        ``connections``: connections kept per server (0: the official client's cpu_count × 5);
        a caller with more requests in flight at once needs as many, or every request past
        them opens (and closes) a TLS connection of its own."""
        # urllib.request (getproxies) is not loaded by the offline commands
        from urllib.request import getproxies

        paths = kubeconfig_paths(kubeconfig)
        files = read_kubeconfigs(paths, explicit=kubeconfig is not None)
        where = ", ".join(shown_path(path) for path, _ in files) or "in-cluster"
        if not files and not kubeconfig and _incluster_possible():
            # client-go's DeferredLoadingClientConfig: an empty config falls back to
            # the service account (KUBERNETES_SERVICE_HOST/PORT and its token file)
            return cls(_client_transport(None, where, connections), None, _incluster_namespace())
        if not files:
            raise ClusterError(
                f"no kubeconfig found (looked for {', '.join(shown_path(p) for p in paths)})",
                hint=_kubeconfig_hint(),
            )
        chosen = select(merge_kubeconfigs(files), context=context, cluster=cluster, user=user)
        plan = direct_plan(chosen, getproxies())
        if plan is None:
            client = _client_transport(chosen, where, connections)
            return cls(client, chosen.context, chosen.namespace)
        transport = DirectTransport(
            plan, where, lambda: _client_transport(chosen, where, connections), connections
        )
        return cls(transport, chosen.context, chosen.namespace)

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
        from urllib3.exceptions import HTTPError

        params = [(k, _query_value(v)) for k, v in (query or {}).items() if v is not None]
        url = self.server + path + ("?" + urlencode(params) if params else "")
        headers = {"Accept": "application/json", "User-Agent": f"kschedctl/{__version__}"}
        authorization = self.transport.authorization()
        if authorization:
            headers["Authorization"] = authorization
        payload = None
        if body is not None:
            headers["Content-Type"] = content_type
            payload = body if isinstance(body, (str, bytes)) else json.dumps(body)
        if isinstance(timeout, tuple):
            urllib3_timeout = urllib3.Timeout(connect=timeout[0], read=timeout[1])
        else:
            urllib3_timeout = urllib3.Timeout(total=timeout)
        attempt = 0
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
                raise ClusterError(
                    f"cannot reach the API server at {self.server}: {_short(err)}",
                    hint="check that the cluster is running and the kubeconfig points at it "
                    "(`kschedctl lab status` for the lab)",
                ) from err
        if response.status >= 400:
            data = response.data if not stream else response.read()
            raise _translate(response.status, response.reason, data, method, path)
        if stream:
            return response
        return json.loads(response.data) if response.data else {}

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


class Transport(Protocol):
    """What :class:`Cluster` sends requests through."""

    server: str

    @property
    def pool_manager(self) -> Any: ...

    @property
    def api_client(self) -> Any: ...

    def authorization(self) -> str | None: ...

    def close(self) -> None: ...


class ClientTransport:
    """The official client's ``Configuration`` (auth, refreshed exec/auth-provider tokens) and
    its urllib3 pool manager (TLS, proxy). Its ApiClient/RESTClient signatures change between
    releases; these do not."""

    def __init__(self, api_client: Any) -> None:
        self.api_client = api_client
        self.server: str = api_client.configuration.host
        self.pool_manager = api_client.rest_client.pool_manager

    def authorization(self) -> str | None:
        # auth_settings() runs the refresh hook (an expired exec or auth-provider token)
        auth = self.api_client.configuration.auth_settings().get("BearerToken")
        return str(auth["value"]) if auth and auth.get("value") else None

    def close(self) -> None:
        self.api_client.close()


def _client_transport(
    chosen: Selection | None, where: str, connections: int = 0
) -> ClientTransport:
    """The official client loaded with ``chosen`` (``None``: in-cluster)."""
    # the kubernetes client costs ~0.3 s (its ~800 model classes): only this path loads it
    from kubernetes import client, config
    from kubernetes.config.config_exception import ConfigException

    configuration = client.Configuration()
    if connections:
        configuration.connection_pool_maxsize = connections
    try:
        if chosen is None:
            config.load_incluster_config(client_configuration=configuration)
        else:
            config.load_kube_config_from_dict(
                chosen.config,
                context=chosen.context,
                client_configuration=configuration,
                persist_config=False,
            )
    except ConfigException as err:
        raise ClusterError(
            f"cannot use kubeconfig {where}: {err}", hint=_kubeconfig_hint()
        ) from err
    return ClientTransport(client.ApiClient(configuration))


# client-go re-reads a tokenFile once a minute (transport/token_source.go,
# NewCachedFileTokenSource: each token it reads expires a minute later)
TOKEN_FILE_PERIOD = 60.0


class DirectTransport:
    """A urllib3 pool manager set up from a :class:`DirectPlan`, as the official client's
    ``RESTClientObject`` would set it up (same TLS checks, pool size), without loading the
    client. ``api_client`` builds the official client from the same kubeconfig on first use."""

    def __init__(
        self,
        plan: DirectPlan,
        where: str,
        client_factory: Callable[[], ClientTransport],
        connections: int = 0,
    ) -> None:
        import urllib3  # on use: only a direct connection needs it before the client does

        self.server = plan.server
        self._plan = plan
        self._where = where
        self._client_factory = client_factory
        self._client: ClientTransport | None = None
        self._client_lock = threading.Lock()
        self._token_read_at = 0.0
        self._token = plan.token
        if plan.token_file:
            self._read_token_file(plan.token_file)
        pool_args: dict[str, Any] = {
            # RESTClientObject: connection_pool_maxsize defaults to cpu_count * 5
            "maxsize": connections or (os.cpu_count() or 1) * 5,
        }
        if plan.server.startswith("https://"):
            pool_args["ssl_context"] = direct_ssl_context(plan, where)
            pool_args["cert_reqs"] = "CERT_REQUIRED" if plan.verify else "CERT_NONE"
            if plan.tls_server_name:
                pool_args["server_hostname"] = plan.tls_server_name
        self.pool_manager = urllib3.PoolManager(**pool_args)

    def _read_token_file(self, path: str) -> None:
        try:
            text = Path(path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as err:
            raise ClusterError(
                f"cannot use kubeconfig {self._where}: cannot read tokenFile "
                f"{shown_path(path)}: {getattr(err, 'strerror', None) or err}",
                hint="fix the user's tokenFile in the kubeconfig",
            ) from err
        self._token = text.strip()  # client-go trims the file's whitespace
        self._token_read_at = time.monotonic()

    def authorization(self) -> str | None:
        plan = self._plan
        if plan.token_file and time.monotonic() - self._token_read_at >= TOKEN_FILE_PERIOD:
            self._read_token_file(plan.token_file)
        return f"Bearer {self._token}" if self._token else None

    @property
    def api_client(self) -> Any:
        with self._client_lock:  # status reads several replicas' metrics at once
            if self._client is None:
                self._client = self._client_factory()
        return self._client.api_client

    def close(self) -> None:
        self.pool_manager.clear()
        if self._client is not None:
            self._client.close()


def direct_ssl_context(plan: DirectPlan, where: str) -> ssl.SSLContext:
    """urllib3's default TLS context with the plan's CA (else the system's, as urllib3 loads
    them when given none) and client certificate; ``-data`` fields are base64 as in a
    kubeconfig. Problems are :class:`ClusterError` naming the field."""
    from urllib3.util.ssl_ import create_urllib3_context  # on use, as in DirectTransport

    context = create_urllib3_context(cert_reqs=ssl.CERT_REQUIRED if plan.verify else ssl.CERT_NONE)

    def fail(what: str, err: BaseException) -> ClusterError:
        reason = getattr(err, "reason", None) or getattr(err, "strerror", None) or str(err)
        return ClusterError(
            f"cannot use kubeconfig {where}: {what}: {reason}",
            hint="fix the cluster's certificate-authority or the user's client certificate "
            "in the kubeconfig",
        )

    try:
        if plan.ca_data:
            try:
                pem = _decode(plan.ca_data).decode("ascii")
            except (ValueError, UnicodeDecodeError) as err:
                raise fail("certificate-authority-data is not base64 of a PEM file", err) from err
            context.load_verify_locations(cadata=pem)
        elif plan.ca_file:
            _must_exist(plan.ca_file, where)
            context.load_verify_locations(cafile=plan.ca_file)
        else:
            context.load_default_certs()
    except (OSError, ssl.SSLError) as err:
        raise fail(
            f"certificate authority {_shown(plan.ca_file, 'certificate-authority-data')}", err
        ) from err
    if not (plan.cert_file or plan.cert_data):
        return context  # a key alone is ignored, as urllib3 ignores a key_file alone
    for path in (plan.cert_file, plan.key_file):
        if path:
            _must_exist(path, where)
    with tempfile.TemporaryDirectory(prefix="kschedctl-tls-") as tmp:
        # load_cert_chain reads files only: the decoded -data goes to a private file that
        # lives for this call (the official client leaves its copies in /tmp)
        try:
            cert = plan.cert_file or _private_file(tmp, "cert", _decode(plan.cert_data or ""))
            key = plan.key_file or (
                _private_file(tmp, "key", _decode(plan.key_data)) if plan.key_data else None
            )
        except ValueError as err:
            raise fail("client-certificate-data or client-key-data is not base64", err) from err
        try:
            context.load_cert_chain(cert, key)
        except (OSError, ssl.SSLError) as err:
            key_shown = _shown(plan.key_file, "client-key-data" if plan.key_data else "")
            what = f"client certificate {_shown(plan.cert_file, 'client-certificate-data')}"
            raise fail(what + (f" with key {key_shown}" if key_shown else ""), err) from err
    return context


def _decode(data: str) -> bytes:
    try:
        return base64.b64decode(data, validate=False)
    except binascii.Error as err:
        raise ValueError(str(err)) from err


def _private_file(directory: str, name: str, content: bytes) -> str:
    path = os.path.join(directory, name)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as out:
        out.write(content)
    return path


def _must_exist(path: str, where: str) -> None:
    # the official client's wording (FileOrData.as_file), checked before any TLS set-up
    if not os.path.isfile(path):
        raise ClusterError(
            f"cannot use kubeconfig {where}: File does not exist: {path}",
            hint=_kubeconfig_hint(),
        )


def _shown(path: str | None, field: str) -> str:
    return shown_path(path) if path else field


def _incluster_possible() -> bool:
    # rest.InClusterConfig's conditions (client-go rest/config.go)
    return bool(
        os.environ.get("KUBERNETES_SERVICE_HOST")
        and os.environ.get("KUBERNETES_SERVICE_PORT")
        and Path("/var/run/secrets/kubernetes.io/serviceaccount/token").is_file()
    )


def _incluster_namespace() -> str:
    path = Path("/var/run/secrets/kubernetes.io/serviceaccount/namespace")
    try:
        return path.read_text().strip() or "default"
    except OSError:
        return "default"


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
