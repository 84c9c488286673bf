"""Objects written straight into the lab's etcd, under the API server's own keys.

The lab's kube-apiserver stores JSON (``--storage-media-type=application/json``, a lab-only
choice no client sees) under ``/registry/<resource>/[<namespace>/]<name>``. :class:`EtcdLoader`
puts objects shaped by :mod:`kschedctl.lab.stored` there through etcd's v3 JSON gateway
(``POST /v3/kv/txn``) with the API server's own etcd client certificate, many keys per
transaction, each only if the key does not exist yet (as the API server's create does). The API
server's watch cache sees the writes as it sees its own (it watches etcd); every object gets
its etcd revision as resourceVersion — the keys of one transaction share one, as etcd gives
every key of a transaction; each later write gets its own.
"""

from __future__ import annotations

import base64
import http.client
import json
import time
import uuid
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from kschedctl.base.errors import ConflictError, LabError
from kschedctl.lab import pki, stored
from kschedctl.lab.components import etcd_tls
from kschedctl.lab.state import LabDir

PREFIX = "/registry"
# The API server's resource prefixes (k8s.io/kubernetes pkg/registry/*/storage): nodes keep
# their historic name.
RESOURCE_PREFIXES = {"Node": "minions", "Pod": "pods", "Lease": "leases"}
# etcd's limits, raised for the lab (startup._etcd_args): a transaction of TXN_OPS puts of
# at most TXN_BYTES (the base64 of them travels in one JSON request).
MAX_TXN_OPS = 4096
MAX_REQUEST_BYTES = 64 * 1024 * 1024
TXN_OPS = 1000
TXN_BYTES = 8 * 1024 * 1024


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


def batches(objects: Sequence[Mapping[str, Any]]) -> Iterable[list[tuple[str, bytes]]]:
    """(key, value) pairs in transactions of at most TXN_OPS keys and TXN_BYTES bytes."""
    batch: list[tuple[str, bytes]] = []
    size = 0
    for obj in objects:
        value = encode(obj)
        if batch and (len(batch) >= TXN_OPS or size + len(value) > TXN_BYTES):
            yield batch
            batch, size = [], 0
        batch.append((key_of(obj), value))
        size += len(value)
    if batch:
        yield batch


class EtcdLoader:
    """Transactions on the lab's etcd (its client port, the API server's client certificate)."""

    def __init__(self, lab: LabDir) -> None:
        state = lab.state()
        if state is None or "etcd" not in state.components:
            raise LabError(f"no etcd is recorded in {lab.dir}", hint="start the lab first")
        self.port = state.components["etcd"].port
        kwok = state.components.get("kwok")
        self.kubelet_port = kwok.port if kwok else 0  # what kwok gives its nodes' status
        self._context = etcd_tls(lab, pki.ETCD_APISERVER_CLIENT)

    def _txn(self, body: Mapping[str, Any]) -> dict[str, Any]:
        connection = http.client.HTTPSConnection(
            "127.0.0.1", self.port, context=self._context, timeout=120
        )
        try:
            connection.request("POST", "/v3/kv/txn", json.dumps(body),
                               {"Content-Type": "application/json"})  # fmt: skip
            response = connection.getresponse()
            text = response.read()
        except OSError as err:
            raise LabError(f"cannot write to the lab's etcd on port {self.port}: {err}",
                           hint="is the lab up? `kschedctl lab status`") from err  # fmt: skip
        finally:
            connection.close()
        if response.status != 200:
            raise LabError(f"the lab's etcd refused a write ({response.status}): "
                           f"{text[:300].decode(errors='replace')}")  # fmt: skip
        result: dict[str, Any] = json.loads(text)
        return result

    def create(self, objects: Sequence[Mapping[str, Any]]) -> None:
        """Put each object whose key is free; a transaction holding a taken key writes nothing
        of its own and raises ConflictError (the transactions before it stay written)."""
        for batch in batches(objects):
            body = {
                "compare": [{"key": _b64(key), "target": "CREATE", "result": "EQUAL",
                             "create_revision": "0"} for key, _ in batch],
                "success": [{"request_put": {"key": _b64(key), "value": _b64(value)}}
                            for key, value in batch],
            }  # fmt: skip
            if not self._txn(body).get("succeeded"):
                raise ConflictError(
                    409, "AlreadyExists", f"one of {batch[0][0]} … {batch[-1][0]} already exists"
                )

    def delete(self, keys: Sequence[str]) -> None:
        """Remove these keys (those already gone are no error)."""
        for start in range(0, len(keys), TXN_OPS):
            ops = [
                {"request_delete_range": {"key": _b64(k)}} for k in keys[start : start + TXN_OPS]
            ]
            self._txn({"success": ops})

    def load_nodes(self, nodes: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        """The nodes as kwok and the node lifecycle controller leave them (Ready, untainted),
        and their Leases, which kwok renews from then on; the nodes as stored."""
        now = time.time()
        made = [stored.stored_node(n, uid=new_uid(), now=now, node_ip=stored.NODE_IP,
                                   kubelet_port=self.kubelet_port) for n in nodes]  # fmt: skip
        leases = [stored.node_lease(n, uid=new_uid(), now=now, seconds=stored.NODE_LEASE_SECONDS)
                  for n in made]  # fmt: skip
        self.create([*made, *leases])
        return made


def new_uid() -> str:
    return str(uuid.uuid4())
