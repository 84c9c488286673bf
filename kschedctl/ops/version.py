"""`kschedctl version`: the client's version, the API server's, and each scheduler's version
skew against it (https://kubernetes.io/releases/version-skew-policy/: kube-scheduler may be as
new as kube-apiserver and at most one minor older)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kschedctl.k8s.inventory import snapshot
from kschedctl.kubeclient.client import Cluster
from kschedctl.observe.containers import is_builtin_container
from kschedctl.observe.discovery import discover
from kschedctl.ops.status import serving_container, version_skew


@dataclass
class SchedulerVersion:
    name: str
    namespace: str | None
    image: str | None
    skew: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "namespace": self.namespace,
            "image": self.image,
            "skew": self.skew,
        }


@dataclass
class VersionReport:
    """The server's part of ``version -o json|yaml`` (the client's is made offline, in the
    CLI): serverVersion (/version as the server gives it) and schedulers (each one the
    cluster serves). The keys are a contract."""

    server: dict[str, Any]
    schedulers: list[SchedulerVersion] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "serverVersion": self.server,
            "schedulers": [s.to_dict() for s in self.schedulers],
        }


def version_report(cluster: Cluster) -> VersionReport:
    """The server's /version and the version skew of every scheduler the cluster serves."""
    server = cluster.server_version()
    snap = snapshot(cluster)
    rows = []
    for entry in discover(snap):
        if not entry.served or entry.instance is None:
            continue  # a name pods ask for that nothing serves: no image to compare
        container = serving_container([], snap.deployments, snap.pods, entry)
        image = str(container.get("image")) if container else None
        builtin = container is not None and is_builtin_container(container)
        skew = (
            "n/a (kschedctl's own scheduler)"
            if builtin
            else version_skew(image, str(server.get("gitVersion", "")))
        )
        rows.append(SchedulerVersion(entry.name, entry.namespace, image, skew))
    return VersionReport(server=server, schedulers=rows)
