"""Short-lived ServiceAccount tokens from the TokenRequest API (``serviceaccounts/token``): the
one place kschedctl mints a credential, so that nothing it sends to a pod is the caller's own.

Audience: none is asked for, so the API server issues the token for its own audiences
(``--api-audiences``, by default its ``--service-account-issuer``). kube-scheduler's delegated
authentication reviews a bearer token with a TokenReview that names no audience either
(k8s.io/apiserver pkg/server/options/authentication.go leaves ``APIAudiences`` empty), and the
API server then checks it against those same audiences: a token minted for an audience of its
own ("kschedctl-metrics") is refused there with 401 (tried in the lab). What limits the token
is its ServiceAccount's rights, its lifetime and the pod it is bound to.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import datetime
from urllib.parse import quote

from kschedctl.errors import ClusterError, ForbiddenError, NotFoundError
from kschedctl.k8s.client import Cluster

# The shortest lifetime the API server grants (a TokenRequest of less is refused: 10 minutes,
# pkg/apis/authentication/validation: expirationSeconds >= 600).
MIN_SECONDS = 600


@dataclass(frozen=True)
class MintedToken:
    token: str
    service_account: str  # namespace/name
    seconds: int  # lifetime granted
    bound_pod: str | None  # namespace/name: the token stops working when that pod goes

    def describe(self) -> str:
        """One line for the output (never the token itself)."""
        bound = f", bound to pod {self.bound_pod}" if self.bound_pod else ""
        return f"ServiceAccount {self.service_account} ({self.seconds}s{bound})"

    def __repr__(self) -> str:  # the token must not reach a log or a traceback
        return f"MintedToken({self.describe()})"


def service_account_exists(cluster: Cluster, namespace: str, name: str) -> bool:
    try:
        cluster.get(f"/api/v1/namespaces/{quote(namespace, safe='')}/serviceaccounts/"
                    f"{quote(name, safe='')}")  # fmt: skip
    except NotFoundError:
        return False
    return True


def mint_token(
    cluster: Cluster,
    namespace: str,
    service_account: str,
    *,
    pod: tuple[str, str] | None = None,
    seconds: int = MIN_SECONDS,
) -> MintedToken:
    """A token of ServiceAccount ``namespace/service_account`` valid ``seconds``; with ``pod``
    (name, uid) of a pod in ``namespace``, bound to it (boundObjectRef): deleting the pod
    invalidates the token. ForbiddenError when the caller may not create
    ``serviceaccounts/token`` there."""
    where = f"{namespace}/{service_account}"
    asked = max(seconds, MIN_SECONDS)
    spec: dict[str, object] = {"expirationSeconds": asked}
    if pod is not None:
        spec["boundObjectRef"] = {"apiVersion": "v1", "kind": "Pod", "name": pod[0], "uid": pod[1]}
    try:
        answer = cluster.create(
            f"/api/v1/namespaces/{quote(namespace, safe='')}/serviceaccounts/"
            f"{quote(service_account, safe='')}/token",
            {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": spec},
        )
    except ForbiddenError as err:
        raise ForbiddenError(
            f"you may not mint a token for ServiceAccount {where}",
            hint=f"it needs `create` on serviceaccounts/token in namespace {namespace}",
        ) from err
    status = answer.get("status") or {}
    token = status.get("token")
    if not isinstance(token, str) or not token:
        raise ClusterError(f"the TokenRequest for ServiceAccount {where} returned no token")
    return MintedToken(
        token=token,
        service_account=where,
        seconds=_lifetime(status.get("expirationTimestamp"), asked),
        bound_pod=f"{namespace}/{pod[0]}" if pod else None,
    )


def _lifetime(expires: object, asked: int) -> int:
    """The lifetime the API server granted, from now (it caps it at its
    --service-account-max-token-expiration)."""
    if not isinstance(expires, str):
        return asked
    try:
        at = datetime.fromisoformat(expires.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return asked
    return max(0, round(at - time.time()))
