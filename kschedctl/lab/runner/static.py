"""Static pods: the kubelet part that reads a manifest directory and posts mirror pods.

A kubeadm node's kubelet runs every manifest under /etc/kubernetes/manifests and shows it in
the API as a *mirror pod* named ``<name>-<node>`` (annotation ``kubernetes.io/config.mirror``,
owned by the Node). In the lab the directory is ``<lab>/manifests`` and the node is the first
simulated node; the mirror pod is then run like any other runnable pod (hostPath volumes map
under ``<lab>/host``). A changed manifest replaces the mirror pod; a removed one deletes it.
"""

from __future__ import annotations

import hashlib
import logging
from pathlib import Path
from typing import Any

import yaml

from kschedctl.base.errors import KschedError, NotFoundError
from kschedctl.kubeclient.client import Cluster

log = logging.getLogger("kschedctl.lab.runner.static")

MIRROR = "kubernetes.io/config.mirror"
SOURCE = "kubernetes.io/config.source"
KWOK_NODE = "kwok.x-k8s.io/node"


def manifests(directory: Path) -> dict[str, tuple[dict[str, Any], str]]:
    """Manifest file name -> (pod, content hash); unreadable files are logged and skipped."""
    found: dict[str, tuple[dict[str, Any], str]] = {}
    for path in sorted(directory.glob("*")):
        if path.suffix not in (".yaml", ".yml", ".json") or not path.is_file():
            continue
        text = path.read_text()
        try:
            pod = yaml.safe_load(text)
        except yaml.YAMLError as err:
            log.warning("static pod manifest %s is not valid YAML: %s", path, err)
            continue
        named = isinstance(pod, dict) and (pod.get("metadata") or {}).get("name")
        if not named or pod.get("kind") != "Pod":
            log.warning("static pod manifest %s is not a Pod with a name; skipped", path)
            continue
        found[path.name] = (pod, hashlib.sha256(text.encode()).hexdigest()[:32])
    return found


def mirror_pod(pod: dict[str, Any], config_hash: str, node: dict[str, Any]) -> dict[str, Any]:
    meta = dict(pod.get("metadata") or {})
    node_name = node["metadata"]["name"]
    meta["name"] = f"{meta['name']}-{node_name}"
    meta.setdefault("namespace", "default")
    meta["annotations"] = {
        **(meta.get("annotations") or {}),
        MIRROR: config_hash,
        "kubernetes.io/config.hash": config_hash,
        SOURCE: "file",
    }
    meta["ownerReferences"] = [{
        "apiVersion": "v1", "kind": "Node", "name": node_name,
        "uid": node["metadata"]["uid"], "controller": True,
    }]  # fmt: skip
    spec = {**(pod.get("spec") or {}), "nodeName": node_name}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


class StaticPods:
    """Keeps one mirror pod per manifest in ``directory`` on the lab's first simulated node."""

    def __init__(self, cluster: Cluster, directory: Path) -> None:
        self.cluster = cluster
        self.directory = directory

    def _node(self) -> dict[str, Any] | None:
        nodes = [
            n for n in self.cluster.list("/api/v1/nodes")
            if (n["metadata"].get("annotations") or {}).get(KWOK_NODE) == "fake"
        ]  # fmt: skip
        return min(nodes, key=lambda n: n["metadata"]["name"]) if nodes else None

    def sync(self) -> None:
        if not self.directory.is_dir():
            return
        try:
            self._sync()
        except KschedError as err:
            log.warning("static pods: %s; retrying", err.message)

    def _sync(self) -> None:
        wanted = manifests(self.directory)
        node = self._node()
        if node is None:
            return
        node_name = node["metadata"]["name"]
        existing = {
            (p["metadata"]["namespace"], p["metadata"]["name"]): p
            for p in self.cluster.list("/api/v1/pods", fieldSelector=f"spec.nodeName={node_name}")
            if MIRROR in (p["metadata"].get("annotations") or {})
        }
        keep = set()
        for file_name, (pod, config_hash) in wanted.items():
            mirror = mirror_pod(pod, config_hash, node)
            key = (mirror["metadata"]["namespace"], mirror["metadata"]["name"])
            keep.add(key)
            live = existing.get(key)
            if live is not None and live["metadata"].get("deletionTimestamp"):
                continue  # still stopping; recreated once it is gone
            if live is not None and live["metadata"]["annotations"][MIRROR] == config_hash:
                continue
            if live is not None:
                log.info("static pod %s changed; replacing mirror pod %s/%s", file_name, *key)
                self._delete(key)
                continue  # created on the next sync, once the old one is gone
            try:
                self.cluster.create(f"/api/v1/namespaces/{key[0]}/pods", mirror)
                log.info("static pod %s: mirror pod %s/%s created", file_name, *key)
            except KschedError as err:
                log.warning(
                    "static pod %s: cannot create its mirror pod: %s", file_name, err.message
                )
        for key in set(existing) - keep:
            log.info("static pod manifest gone; deleting mirror pod %s/%s", *key)
            self._delete(key)

    def _delete(self, key: tuple[str, str]) -> None:
        try:
            self.cluster.delete(f"/api/v1/namespaces/{key[0]}/pods/{key[1]}")
        except NotFoundError:
            pass
