"""Objects written straight into the lab's etcd, under the API server's own keys.

The lab's kube-apiserver stores JSON (``--storage-media-type=application/json``, a lab-only
choice no client sees) under ``/registry/<resource>/[<namespace>/]<name>``. :class:`EtcdLoader`
puts objects shaped by :mod:`kschedctl.lab.stored` there through etcd's v3 JSON gateway
(``POST /v3/kv/txn``) with the API server's own etcd client certificate, each only if its key
is free (as the API server's create does), :data:`WRITERS` requests in flight. The API server's
watch cache sees the writes as it sees its own (it watches etcd), and each object gets a
revision of its own as resourceVersion: one key per transaction, as the API server writes. (A
transaction of many keys gives them one revision, and the watch cache, which takes a revision
for one object, then served a list holding part of them at that revision and a watch from it
that never sent the rest.)
"""

from __future__ import annotations

import base64
import http.client
import json
import threading
import time
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from kschedctl.base.errors import ConflictError, LabError
from kschedctl.lab import pki, stored
from kschedctl.lab.components import etcd_tls
from kschedctl.lab.parallel import in_parallel
from kschedctl.lab.state import LabDir

PREFIX = "/registry"
# The API server's resource prefixes (k8s.io/kubernetes pkg/registry/*/storage): nodes keep
# their historic name.
RESOURCE_PREFIXES = {"Node": "minions", "Pod": "pods", "Lease": "leases"}
WRITERS = 8  # requests in flight: etcd's JSON gateway takes ~1,000 a second on 2 cores


def key_of(obj: Mapping[str, Any], kind: str | None = None) -> str:
    """The object's key; ``kind`` for an item of a list, which names none."""
    meta = obj["metadata"]
    where = f"{meta['namespace']}/" if meta.get("namespace") else ""
    return f"{PREFIX}/{RESOURCE_PREFIXES[kind or obj['kind']]}/{where}{meta['name']}"


def _b64(text: str | bytes) -> str:
    raw = text.encode() if isinstance(text, str) else text
    return base64.b64encode(raw).decode()


def encode(obj: Mapping[str, Any]) -> bytes:
    """The stored bytes: compact JSON, ``kind`` and ``apiVersion`` first, as the API server's
    JSON serializer writes them."""
    head = {"kind": obj["kind"], "apiVersion": obj["apiVersion"]}
    return json.dumps({**head, **obj}, separators=(",", ":")).encode()


class EtcdLoader:
    """Writes to the lab's etcd (its client port, the API server's client certificate)."""

    def __init__(self, lab: LabDir) -> None:
        state = lab.state()
        if state is None or "etcd" not in state.components:
            raise LabError(f"no etcd is recorded in {lab.dir}", hint="start the lab first")
        self.port = state.components["etcd"].port
        kwok = state.components.get("kwok")
        self.kubelet_port = kwok.port if kwok else 0  # what kwok gives its nodes' status
        self._context = etcd_tls(lab, pki.ETCD_APISERVER_CLIENT)
        self._local = threading.local()

    def _connection(self) -> http.client.HTTPSConnection:
        """This thread's connection to etcd, kept open between requests."""
        connection: http.client.HTTPSConnection | None = getattr(self._local, "connection", None)
        if connection is None:
            connection = http.client.HTTPSConnection(
                "127.0.0.1", self.port, context=self._context, timeout=120
            )
            self._local.connection = connection
        return connection

    def _post(self, path: str, body: Mapping[str, Any]) -> dict[str, Any]:
        connection = self._connection()
        try:
            connection.request("POST", path, json.dumps(body),
                               {"Content-Type": "application/json"})  # fmt: skip
            response = connection.getresponse()
            text = response.read()
        except OSError as err:
            connection.close()
            raise LabError(f"cannot write to the lab's etcd on port {self.port}: {err}",
                           hint="is the lab up? `kschedctl lab status`") from err  # fmt: skip
        if response.status != 200:
            raise LabError(f"the lab's etcd refused a write ({response.status}): "
                           f"{text[:300].decode(errors='replace')}")  # fmt: skip
        result: dict[str, Any] = json.loads(text)
        return result

    def create(self, objects: Sequence[Mapping[str, Any]], *, exist_ok: bool = False) -> None:
        """Put each object if its key is free; a taken key raises ConflictError (what was
        written stays) unless ``exist_ok``."""

        def put(obj: Mapping[str, Any]) -> None:
            key = _b64(key_of(obj))
            body = {
                "compare": [{"key": key, "target": "CREATE", "result": "EQUAL",
                             "create_revision": "0"}],
                "success": [{"request_put": {"key": key, "value": _b64(encode(obj))}}],
            }  # fmt: skip
            if not self._post("/v3/kv/txn", body).get("succeeded") and not exist_ok:
                raise ConflictError(409, "AlreadyExists", f"{key_of(obj)} already exists")

        in_parallel(put, objects, WRITERS, "etcd-load")

    def delete(self, keys: Sequence[str]) -> None:
        """Remove these keys, each in a request of its own (those already gone are no error)."""

        def delete(key: str) -> None:
            self._post("/v3/kv/deleterange", {"key": _b64(key)})

        in_parallel(delete, keys, WRITERS, "etcd-load")

    def load_nodes(self, nodes: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        """The nodes as kwok and the node lifecycle controller leave them (Ready, untainted),
        and their Leases, which kwok renews from then on; the nodes as stored."""
        now = time.time()
        made = [stored.stored_node(n, uid=new_uid(), now=now, node_ip=stored.NODE_IP,
                                   kubelet_port=self.kubelet_port) for n in nodes]  # fmt: skip
        leases = [stored.node_lease(n, uid=new_uid(), now=now, seconds=stored.NODE_LEASE_SECONDS)
                  for n in made]  # fmt: skip
        self.create(made)
        # After their nodes (the garbage collector finds their owner); kwok, which creates the
        # Lease of each node it sees, may have been first: that one is kept.
        self.create(leases, exist_ok=True)
        return made


def new_uid() -> str:
    return str(uuid.uuid4())
