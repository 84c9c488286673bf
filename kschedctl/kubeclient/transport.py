"""How :class:`~kschedctl.kubeclient.client.Cluster` reaches its API server.

A kubeconfig of certificates and tokens is opened with urllib3 alone (:class:`DirectTransport`);
exec plugins, auth-providers, basic auth, proxies and in-cluster go through the official
client's ``Configuration`` and pool manager (:class:`ClientTransport`), whose import costs
~0.3 s.
"""

from __future__ import annotations

import base64
import binascii
import os
import ssl
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from kschedctl.base.errors import ClusterError, shown_path
from kschedctl.kubeclient.kubeconfig import DirectPlan, Selection


def kubeconfig_hint() -> str:
    return (
        "pass --kubeconfig FILE and --context NAME, or set KUBECONFIG "
        '(for the lab: eval "$(kschedctl lab env)")'
    )


class Transport(Protocol):
    """What :class:`Cluster` sends requests through."""

    server: str
    verifies_tls: bool  # False: insecure-skip-tls-verify (urllib3's warnings are silenced)

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
        configuration = api_client.configuration
        self.verifies_tls = bool(configuration.verify_ssl) or not self.server.startswith("https")
        if not self.verifies_tls:
            quiet_insecure_warnings()

    def authorization(self) -> str | None:
        # auth_settings() runs the refresh hook (an expired exec or auth-provider token)
        auth = self.api_client.configuration.auth_settings().get("BearerToken")
        return str(auth["value"]) if auth and auth.get("value") else None

    def close(self) -> None:
        self.api_client.close()


def client_transport(chosen: Selection | None, where: str, connections: int = 0) -> ClientTransport:
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
        raise ClusterError(f"cannot use kubeconfig {where}: {err}", hint=kubeconfig_hint()) from err
    return ClientTransport(client.ApiClient(configuration))


def quiet_insecure_warnings() -> None:
    """urllib3 warns (InsecureRequestWarning, several lines through :mod:`warnings`) on every
    request whose server certificate it does not check: ten blocks for one ``list``. The CLI
    says it once instead, in one line (:attr:`Cluster.verifies_tls`)."""
    # on use, as urllib3 in DirectTransport: only a connection needs them
    import warnings

    from urllib3.exceptions import InsecureRequestWarning

    warnings.filterwarnings("ignore", category=InsecureRequestWarning)


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
        self.verifies_tls = plan.verify or not plan.server.startswith("https://")
        if not self.verifies_tls:
            quiet_insecure_warnings()

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
            hint=kubeconfig_hint(),
        )


def _shown(path: str | None, field: str) -> str:
    return shown_path(path) if path else field


def incluster_possible() -> bool:
    # rest.InClusterConfig's conditions (client-go rest/config.go)
    return bool(
        os.environ.get("KUBERNETES_SERVICE_HOST")
        and os.environ.get("KUBERNETES_SERVICE_PORT")
        and Path("/var/run/secrets/kubernetes.io/serviceaccount/token").is_file()
    )


def incluster_namespace() -> str:
    path = Path("/var/run/secrets/kubernetes.io/serviceaccount/namespace")
    try:
        return path.read_text().strip() or "default"
    except OSError:
        return "default"
