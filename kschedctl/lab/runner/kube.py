"""What the runner asks of the lab's API server, on plain dicts through :class:`Cluster`."""

from __future__ import annotations

import base64
import time
from collections.abc import Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from kschedctl.base.errors import ApiError, NotFoundError
from kschedctl.kubeclient.client import Cluster

KWOK_NODE_ANNOTATION = "kwok.x-k8s.io/node"
LOGS_API = "/apis/kwok.x-k8s.io/v1alpha1"
MANAGED_BY = {"app.kubernetes.io/managed-by": "kschedctl-lab-runner"}
NODE_CACHE_SECONDS = 30.0


def pod_path(pod: Mapping[str, Any]) -> str:
    meta = pod["metadata"]
    return f"/api/v1/namespaces/{meta['namespace']}/pods/{meta['name']}"


def logs_path(pod: Mapping[str, Any]) -> str:
    meta = pod["metadata"]
    return f"{LOGS_API}/namespaces/{meta['namespace']}/logs/{meta['name']}"


def port_forward_path(pod: Mapping[str, Any]) -> str:
    meta = pod["metadata"]
    return f"{LOGS_API}/namespaces/{meta['namespace']}/portforwards/{meta['name']}"


def _owned_by(pod: Mapping[str, Any]) -> dict[str, Any]:
    """Metadata of a kwok object for the pod, garbage-collected with it even if no runner is
    there to delete it."""
    meta = pod["metadata"]
    return {
        "name": meta["name"],
        "namespace": meta["namespace"],
        "labels": MANAGED_BY,
        "ownerReferences": [
            {"apiVersion": "v1", "kind": "Pod", "name": meta["name"], "uid": meta["uid"]}
        ],
    }


class LabApi:
    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self._nodes: dict[str, tuple[bool, str, float, dict[str, Any]]] = {}

    # -- nodes ---------------------------------------------------------------------------------

    def _node(self, name: str) -> tuple[bool, str, dict[str, Any]]:
        """(managed by kwok, InternalIP, the node), cached briefly: asked for every bound pod."""
        cached = self._nodes.get(name)
        if cached and time.monotonic() - cached[2] < NODE_CACHE_SECONDS:
            return cached[0], cached[1], cached[3]
        try:
            node = self.cluster.get(f"/api/v1/nodes/{name}")
        except NotFoundError:
            return False, "", {}
        annotations = (node.get("metadata") or {}).get("annotations") or {}
        managed = annotations.get(KWOK_NODE_ANNOTATION) == "fake"
        addresses = (node.get("status") or {}).get("addresses") or []
        ip = next((a["address"] for a in addresses if a.get("type") == "InternalIP"), "")
        if ip:  # kwok fills the addresses in a moment after the node appears
            self._nodes[name] = (managed, ip, time.monotonic(), node)
        return managed, ip, node

    def is_kwok_node(self, name: str) -> bool:
        return self._node(name)[0]

    def node(self, name: str) -> dict[str, Any]:
        """The node as last read (``{}`` if it does not exist)."""
        return self._node(name)[2]

    def node_ip(self, name: str) -> str:
        return self._node(name)[1]

    # -- objects a pod refers to ---------------------------------------------------------------

    def get_object(self, kind: str, namespace: str, name: str) -> dict[str, Any] | None:
        resource = {"ConfigMap": "configmaps", "Secret": "secrets"}[kind]
        try:
            return self.cluster.get(f"/api/v1/namespaces/{namespace}/{resource}/{name}")
        except NotFoundError:
            return None

    def lookup(self, kind: str, namespace: str, name: str) -> dict[str, str] | None:
        """ConfigMap or Secret data as text (for environment variables)."""
        obj = self.get_object(kind, namespace, name)
        if obj is None:
            return None
        if kind == "Secret":
            return {
                k: base64.b64decode(v).decode(errors="replace")
                for k, v in (obj.get("data") or {}).items()
            }
        return dict(obj.get("data") or {})

    def request_token(
        self, pod: Mapping[str, Any], audience: str | None, expiration: int
    ) -> tuple[str, float]:
        """A TokenRequest for the pod's ServiceAccount, bound to the pod (invalid once it goes)."""
        meta = pod["metadata"]
        account = (pod.get("spec") or {}).get("serviceAccountName") or "default"
        body = {
            "apiVersion": "authentication.k8s.io/v1",
            "kind": "TokenRequest",
            "spec": {
                "audiences": [audience] if audience else [],
                "expirationSeconds": expiration,
                "boundObjectRef": {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "name": meta["name"],
                    "uid": meta["uid"],
                },
            },
        }
        result = self.cluster.create(
            f"/api/v1/namespaces/{meta['namespace']}/serviceaccounts/{account}/token", body
        )
        status = result.get("status") or {}
        lifetime = float(expiration)
        expires = status.get("expirationTimestamp")
        if expires:
            at = datetime.fromisoformat(expires.replace("Z", "+00:00")).timestamp()
            lifetime = max(60.0, at - time.time())
        return status["token"], lifetime

    # -- status, events and logs -------------------------------------------------------------

    def record_event(
        self, pod: Mapping[str, Any], field_path: str, kind: str, reason: str, message: str
    ) -> None:
        """A core/v1 Event as the kubelet writes them (source and reporting component kubelet)."""
        meta = pod["metadata"]
        node = (pod.get("spec") or {}).get("nodeName") or ""
        now = datetime.now(timezone.utc)
        involved = {"apiVersion": "v1", "kind": "Pod", "name": meta["name"],
                    "namespace": meta["namespace"], "uid": meta["uid"]}  # fmt: skip
        if field_path:
            involved["fieldPath"] = field_path
        body = {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"generateName": f"{meta['name']}.", "namespace": meta["namespace"]},
            "involvedObject": involved,
            "type": kind,
            "reason": reason,
            "message": message[:1024],
            "source": {"component": "kubelet", "host": node},
            "reportingComponent": "kubelet",
            "reportingInstance": node,
            "firstTimestamp": now.strftime("%Y-%m-%dT%H:%M:%SZ"),
            "lastTimestamp": now.strftime("%Y-%m-%dT%H:%M:%SZ"),
            "count": 1,
        }
        self.cluster.create(f"/api/v1/namespaces/{meta['namespace']}/events", body)

    def patch_status(self, pod: Mapping[str, Any], status: Mapping[str, Any]) -> dict[str, Any]:
        return self.cluster.patch(pod_path(pod) + "/status", {"status": status}, merge=False)

    def apply_logs(self, pod: Mapping[str, Any], logs: list[dict[str, Any]]) -> None:
        """kwok's ``Logs`` for the pod: where ``kubectl logs`` finds each container's file."""
        body = {
            "apiVersion": "kwok.x-k8s.io/v1alpha1",
            "kind": "Logs",
            "metadata": _owned_by(pod),
            "spec": {"logs": logs},
        }
        self.cluster.apply(logs_path(pod), body)

    def apply_port_forward(self, pod: Mapping[str, Any], ports: Mapping[int, int]) -> None:
        """kwok's ``PortForward`` for the pod: each pod port (a program's serving port) to
        127.0.0.1:<the port the process really listens on>, so pods/portforward (``kubectl
        port-forward``) reaches the process as it would reach a container."""
        body = {
            "apiVersion": "kwok.x-k8s.io/v1alpha1",
            "kind": "PortForward",
            "metadata": _owned_by(pod),
            "spec": {
                "forwards": [
                    {"ports": [serving], "target": {"address": "127.0.0.1", "port": local}}
                    for serving, local in sorted(ports.items())
                ]
            },
        }
        self.cluster.apply(port_forward_path(pod), body)

    def delete_logs(self, pod: Mapping[str, Any], pod_dir: Path) -> None:
        """Delete the pod's ``Logs`` unless it now belongs to a newer pod of the same name."""
        try:
            logs = self.cluster.get(logs_path(pod))
        except NotFoundError:
            return
        files = [entry.get("logsFile", "") for entry in (logs.get("spec") or {}).get("logs") or []]
        if not any(f.startswith(str(pod_dir) + "/") for f in files):
            return
        version = logs["metadata"]["resourceVersion"]
        try:
            self.cluster.request(
                "DELETE", logs_path(pod), body={"preconditions": {"resourceVersion": version}}
            )
        except (NotFoundError, ApiError):
            pass  # gone, or changed by a newer pod meanwhile: theirs now
