"""Short-lived ServiceAccount tokens from the TokenRequest API (``serviceaccounts/token``): the
one place kschedctl mints a credential, so that nothing it sends to a pod is the caller's own.

Audience: none is asked for, so the API server issues the token for its own audiences
(``--api-audiences``, by default its ``--service-account-issuer``). kube-scheduler's delegated
authentication reviews a bearer token with a TokenReview that names no audience either
(k8s.io/apiserver pkg/server/options/authentication.go leaves ``APIAudiences`` empty), and the
API server then checks it against those same audiences: a token minted for an audience of its
own ("kschedctl-metrics") is refused there with 401 (tried in the lab). What limits the token
is its ServiceAccount's rights and its lifetime.

Not bound to the pod it is sent to: the API server refuses to bind a token to a pod that runs
as another ServiceAccount ("cannot bind token for serviceaccount … to pod running with
different serviceaccount name", tried in the lab), and a reader that may only get /metrics is
no scheduler's own ServiceAccount.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import datetime
from urllib.parse import quote

from kschedctl.base.errors import ClusterError, ForbiddenError, NotFoundError
from kschedctl.kubeclient.client import Cluster

# The shortest lifetime the API server grants (a TokenRequest of less is refused: 10 minutes,
# pkg/apis/authentication/validation: expirationSeconds >= 600).
MIN_SECONDS = 600


@dataclass(frozen=True)
class MintedToken:
    token: str
    service_account: str  # namespace/name
    seconds: int  # lifetime granted

    def describe(self) -> str:
        """One line for the output (never the token itself)."""
        return f"ServiceAccount {self.service_account} ({self.seconds}s)"

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
    cluster: Cluster, namespace: str, service_account: str, *, seconds: int = MIN_SECONDS
) -> MintedToken:
    """A token of ServiceAccount ``namespace/service_account`` valid ``seconds`` (at least the
    API's minimum); ForbiddenError when the caller may not create ``serviceaccounts/token``
    there."""
    where = f"{namespace}/{service_account}"
    asked = max(seconds, MIN_SECONDS)
    spec = {"expirationSeconds": asked}
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
