"""The one place kschedctl talks to the Kubernetes API.

Requests go through the official client's ``ApiClient`` (auth, TLS, exec plugins, proxies) but
responses are read raw and parsed with ``json.loads``: everything above this layer works on
plain dicts, and large lists skip the typed models that are slow to build. Client exceptions
become kschedctl errors here, chained with ``raise … from``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from kschedctl import __version__
from kschedctl.config.kubeconfig import (
    kubeconfig_paths,
    merge_kubeconfigs,
    read_kubeconfigs,
    select,
)
from kschedctl.errors import (
    ApiError,
    ClusterError,
    ConflictError,
    ForbiddenError,
    KschedError,
    NotFoundError,
    shown_path,
)

DEFAULT_TIMEOUT = 30.0
FIELD_MANAGER = "kschedctl"


def _kubeconfig_hint() -> str:
    return (
        "pass --kubeconfig FILE and --context NAME, or set KUBECONFIG "
        '(for the lab: eval "$(kschedctl lab env)")'
    )


class Cluster:
    """A connection to one API server (one kubeconfig context)."""

    def __init__(self, api_client: Any, context: str | None, namespace: str = "default") -> None:
        self.api_client = api_client
        self.context = context
        self.server = api_client.configuration.host
        self.namespace = namespace  # the context's namespace: kubectl's default for -n

    @classmethod
    def connect(
        cls,
        kubeconfig: str | None = None,
        context: str | None = None,
        *,
        cluster: str | None = None,
        user: str | None = None,
    ) -> Cluster:
        """Connect as kubectl would: ``--kubeconfig`` alone, else every file of
        ``$KUBECONFIG`` (or ``~/.kube/config``) merged with kubectl's rules
        (:mod:`kschedctl.config.kubeconfig`), then the ``--context``/``--cluster``/``--user``
        overrides; with no kubeconfig at all, the pod's service account (in-cluster)."""
        # the kubernetes client costs ~0.3 s: loaded on the first connection
        from kubernetes import client, config
        from kubernetes.config.config_exception import ConfigException

        paths = kubeconfig_paths(kubeconfig)
        files = read_kubeconfigs(paths, explicit=kubeconfig is not None)
        configuration = client.Configuration()
        try:
            if not files and not kubeconfig and _incluster_possible():
                # client-go's DeferredLoadingClientConfig: an empty config falls back to
                # the service account (KUBERNETES_SERVICE_HOST/PORT and its token file)
                config.load_incluster_config(client_configuration=configuration)
                return cls(client.ApiClient(configuration), None, _incluster_namespace())
            if not files:
                raise ClusterError(
                    f"no kubeconfig found (looked for {', '.join(shown_path(p) for p in paths)})",
                    hint=_kubeconfig_hint(),
                )
            chosen = select(merge_kubeconfigs(files), context=context, cluster=cluster, user=user)
            config.load_kube_config_from_dict(
                chosen.config,
                context=chosen.context,
                client_configuration=configuration,
                persist_config=False,
            )
        except ConfigException as err:
            where = ", ".join(shown_path(path) for path, _ in files) or "in-cluster"
            raise ClusterError(
                f"cannot use kubeconfig {where}: {err}", hint=_kubeconfig_hint()
            ) from err
        return cls(client.ApiClient(configuration), chosen.context, chosen.namespace)

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
        # The client's ApiClient/RESTClient signatures change between releases; its
        # Configuration (auth, refreshed tokens) and urllib3 pool manager (TLS, proxy) do not.
        import urllib3

        # urllib3 arrives with the kubernetes client
        from urllib3.exceptions import HTTPError

        params = [(k, _query_value(v)) for k, v in (query or {}).items() if v is not None]
        url = self.server + path + ("?" + urlencode(params) if params else "")
        headers = {"Accept": "application/json", "User-Agent": f"kschedctl/{__version__}"}
        auth = self.api_client.configuration.auth_settings().get("BearerToken")
        if auth and auth.get("value"):
            headers[auth["key"]] = auth["value"]
        payload = None
        if body is not None:
            headers["Content-Type"] = content_type
            payload = body if isinstance(body, (str, bytes)) else json.dumps(body)
        if isinstance(timeout, tuple):
            urllib3_timeout = urllib3.Timeout(connect=timeout[0], read=timeout[1])
        else:
            urllib3_timeout = urllib3.Timeout(total=timeout)
        try:
            response = self.api_client.rest_client.pool_manager.request(
                method,
                url,
                body=payload,
                headers=headers,
                timeout=urllib3_timeout,
                retries=False,
                preload_content=not stream,
            )
        except HTTPError as err:
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
        # urllib3 arrives with the kubernetes client
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
        self.api_client.close()

    def __enter__(self) -> Cluster:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


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
