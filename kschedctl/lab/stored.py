"""Objects as the lab's API server stores them in etcd, for :mod:`kschedctl.lab.etcdload`. Pure.

A create through the API turns the object a client sends into what it stores: metadata
(uid, creationTimestamp, generation; never a resourceVersion: etcd's revision is one),
the scheme's defaults, and the admission plugins' changes. Here, the ones the lab's
API server applies to a seeded pod and node that anything reads:

- pod: PodTopologyLabels (its node's zone and region labels), Priority (``spec.priority``
  and ``preemptionPolicy`` from its PriorityClass or the global default one),
  DefaultTolerationSeconds (not-ready and unreachable ``NoExecute`` for 300 s),
  ServiceAccount (``default``; the seed's pods mount no token), ``status.qosClass`` and the
  defaults of ``restartPolicy``, ``dnsPolicy``, ``schedulerName``, ``enableServiceLinks``,
  ``terminationGracePeriodSeconds``, ``securityContext`` and each container's pull policy and
  termination message; its status is what the lab's kwok writes for a running pod.
- node: the status kwok's node-initialize stage writes (its five conditions, addresses,
  kubelet endpoint, nodeInfo, phase Running) and no not-ready taint: the TaintNodesByCondition
  admission adds one on create, and the node lifecycle controller lifts it from a Ready node.
- node Lease (``kube-node-lease``): what kwok's heartbeat writes, owned by its node.

tests/unit/test_lab_stored.py checks the shapes; tests/e2e/test_seed_loader.py compares a
loaded pod and node with ones created through the API, field by field.
"""

from __future__ import annotations

import copy
import ipaddress
import time
from collections.abc import Mapping
from typing import Any

# The lab's kwok (startup.py's flags): its nodes' address, their Leases, its pods' addresses
NODE_IP = "127.0.0.1"
NODE_LEASE_SECONDS = 40
POD_CIDR = "10.244.0.0/16"
NOT_READY_TAINT = "node.kubernetes.io/not-ready"
DEFAULT_TOLERATION_SECONDS = 300
_NO_EXECUTE_DEFAULTS = (NOT_READY_TAINT, "node.kubernetes.io/unreachable")
# kwok v0.8's NodeConditions (pkg/utils/gotpl/funcs.go), Ready first
NODE_CONDITIONS = (
    ("Ready", "True", "KubeletReady", "kubelet is posting ready status"),
    ("MemoryPressure", "False", "KubeletHasSufficientMemory",
     "kubelet has sufficient memory available"),
    ("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
    ("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
    ("NetworkUnavailable", "False", "RouteCreated", "RouteController created a route"),
)  # fmt: skip
KWOK_VERSION = "kwok-0.8.0"  # kwok-{its Version}
NODE_LEASE_NAMESPACE = "kube-node-lease"
_QOS_RESOURCES = ("cpu", "memory")
# what the PodTopologyLabels admission copies from a pod's node onto a pod created bound to it
TOPOLOGY_LABELS = ("topology.kubernetes.io/zone", "topology.kubernetes.io/region")


def timestamp(now: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now))


def micro_timestamp(now: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now)) + f".{int(now % 1 * 1e6):06d}Z"


def _metadata(obj: Mapping[str, Any], uid: str, now: float) -> dict[str, Any]:
    meta = {k: copy.deepcopy(v) for k, v in (obj.get("metadata") or {}).items()
            if k not in ("resourceVersion", "uid", "creationTimestamp", "generation",
                         "managedFields", "selfLink")}  # fmt: skip
    meta["uid"] = uid
    meta["creationTimestamp"] = timestamp(now)
    return meta


def qos_class(spec: Mapping[str, Any]) -> str:
    """The pod's QoS class as the API server computes it on create (cpu and memory of every
    container and init container; a request defaults to its limit)."""
    requests_seen = limits_seen = False
    guaranteed = True
    for container in [*(spec.get("containers") or []), *(spec.get("initContainers") or [])]:
        resources = container.get("resources") or {}
        limits = {k: v for k, v in (resources.get("limits") or {}).items() if k in _QOS_RESOURCES}
        requests = {**limits, **{k: v for k, v in (resources.get("requests") or {}).items()
                                 if k in _QOS_RESOURCES}}  # fmt: skip
        requests_seen |= bool(requests)
        limits_seen |= bool(limits)
        if set(limits) != set(_QOS_RESOURCES) or any(
            str(requests[k]) != str(limits[k]) for k in _QOS_RESOURCES
        ):
            guaranteed = False
    if not requests_seen and not limits_seen:
        return "BestEffort"
    return "Guaranteed" if guaranteed else "Burstable"


def _container(container: Mapping[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(dict(container))
    image = str(out.get("image") or "")
    tag = image.rsplit("/", 1)[-1].partition(":")[2] if "@" not in image else "digest"
    out.setdefault("imagePullPolicy", "Always" if tag in ("", "latest") else "IfNotPresent")
    out.setdefault("terminationMessagePath", "/dev/termination-log")
    out.setdefault("terminationMessagePolicy", "File")
    resources = out.setdefault("resources", {})
    if resources.get("limits"):  # a request defaults to its limit
        resources["requests"] = {**resources["limits"], **(resources.get("requests") or {})}
    return out


def stored_pod(
    pod: Mapping[str, Any],
    *,
    uid: str,
    now: float,
    priority_classes: Mapping[str, tuple[int, str]],
    global_default: str | None = None,
    host_ip: str,
    pod_ip: str,
    node_labels: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """A pod bound to its node (``spec.nodeName``) as the API server stores it after its create
    and kwok's status write: Running and Ready. ``priority_classes``: name → (value,
    preemptionPolicy); ``global_default``: the class with ``globalDefault: true``, if any;
    ``node_labels``: its node's (PodTopologyLabels copies their zone and region)."""
    spec = copy.deepcopy(dict(pod["spec"]))
    name = spec.get("priorityClassName") or ""
    if not name and global_default and "priority" not in spec:
        name = spec["priorityClassName"] = global_default
    value, policy = priority_classes.get(name, (0, "PreemptLowerPriority"))
    spec.setdefault("priority", value)
    spec.setdefault("preemptionPolicy", policy)
    spec["containers"] = [_container(c) for c in spec.get("containers") or []]
    if spec.get("initContainers"):
        spec["initContainers"] = [_container(c) for c in spec["initContainers"]]
    tolerations = spec.setdefault("tolerations", [])
    for key in _NO_EXECUTE_DEFAULTS:
        if not any(_tolerates_no_execute(t, key) for t in tolerations):
            tolerations.append({"key": key, "operator": "Exists", "effect": "NoExecute",
                                "tolerationSeconds": DEFAULT_TOLERATION_SECONDS})  # fmt: skip
    for key, value_ in (("restartPolicy", "Always"), ("dnsPolicy", "ClusterFirst"),
                        ("schedulerName", "default-scheduler"), ("enableServiceLinks", True),
                        ("terminationGracePeriodSeconds", 30), ("securityContext", {}),
                        ("serviceAccountName", "default")):  # fmt: skip
        spec.setdefault(key, value_)
    spec["serviceAccount"] = spec["serviceAccountName"]  # the deprecated twin, always set
    started = timestamp(now)
    # kwok's pod-ready stage's (no PodScheduled: no scheduler placed a pod created bound)
    conditions = [{"type": t, "status": "True", "lastTransitionTime": started}
                  for t in ("Initialized", "Ready", "ContainersReady")]  # fmt: skip
    status = {
        "phase": "Running",
        "conditions": conditions,
        "hostIP": host_ip,
        "hostIPs": [{"ip": host_ip}],
        "podIP": pod_ip,
        "podIPs": [{"ip": pod_ip}],
        "startTime": started,
        "containerStatuses": [_running(c, started) for c in spec["containers"]],
        "qosClass": qos_class(spec),
    }
    if spec.get("initContainers"):
        status["initContainerStatuses"] = [_init_done(c, started) for c in spec["initContainers"]]
    meta = _metadata(pod, uid, now)
    meta["generation"] = 1
    topology = {k: v for k, v in (node_labels or {}).items() if k in TOPOLOGY_LABELS}
    if topology:
        meta["labels"] = {**(meta.get("labels") or {}), **topology}
    return {"kind": "Pod", "apiVersion": "v1", "metadata": meta, "spec": spec, "status": status}


def _running(container: Mapping[str, Any], started: str) -> dict[str, Any]:
    return {"name": container["name"], "image": container.get("image", ""), "ready": True,
            "restartCount": 0, "started": True,
            "state": {"running": {"startedAt": started}}}  # fmt: skip


def _init_done(container: Mapping[str, Any], started: str) -> dict[str, Any]:
    if container.get("restartPolicy") == "Always":  # a sidecar keeps running
        return _running(container, started)
    done = {"exitCode": 0, "reason": "Completed", "startedAt": started, "finishedAt": started}
    return {"name": container["name"], "image": container.get("image", ""), "ready": True,
            "restartCount": 0, "state": {"terminated": done}}  # fmt: skip


def _tolerates_no_execute(toleration: Mapping[str, Any], key: str) -> bool:
    """As DefaultTolerationSeconds decides that the pod tolerates ``key`` already: the key or
    none, NoExecute or no effect."""
    return toleration.get("key") in (key, "", None) and toleration.get("effect") in (
        "NoExecute",
        "",
        None,
    )


def stored_node(
    node: Mapping[str, Any], *, uid: str, now: float, node_ip: str, kubelet_port: int
) -> dict[str, Any]:
    """A kwok node as stored once kwok initialized it and the not-ready taint is gone."""
    spec = copy.deepcopy(dict(node.get("spec") or {}))
    taints = [t for t in spec.get("taints") or [] if t.get("key") != NOT_READY_TAINT]
    spec.pop("taints", None)
    if taints:
        spec["taints"] = taints
    status = copy.deepcopy(dict(node.get("status") or {}))
    for key in ("capacity", "allocatable"):
        status.setdefault(key, status.get("allocatable" if key == "capacity" else "capacity"))
    seen = timestamp(now)
    status["conditions"] = [
        {"type": t, "status": s, "lastHeartbeatTime": seen, "lastTransitionTime": seen,
         "reason": reason, "message": message}
        for t, s, reason, message in NODE_CONDITIONS
    ]  # fmt: skip
    name = node["metadata"]["name"]
    status["addresses"] = [{"type": "InternalIP", "address": node_ip},
                           {"type": "Hostname", "address": name}]  # fmt: skip
    status["daemonEndpoints"] = {"kubeletEndpoint": {"Port": kubelet_port}}
    status["nodeInfo"] = {
        "architecture": "amd64", "bootID": "", "containerRuntimeVersion": KWOK_VERSION,
        "kernelVersion": KWOK_VERSION, "kubeProxyVersion": KWOK_VERSION,
        "kubeletVersion": KWOK_VERSION, "machineID": "", "operatingSystem": "linux",
        "osImage": "", "systemUUID": "",
    }  # fmt: skip
    status["phase"] = "Running"
    return {"kind": "Node", "apiVersion": "v1", "metadata": _metadata(node, uid, now),
            "spec": spec, "status": status}  # fmt: skip


def node_lease(node: Mapping[str, Any], *, uid: str, now: float, seconds: int) -> dict[str, Any]:
    """The node's heartbeat Lease, as kwok creates it (owned by the stored ``node``)."""
    name = node["metadata"]["name"]
    owner = {"apiVersion": "v1", "kind": "Node", "name": name, "uid": node["metadata"]["uid"]}
    meta = {"name": name, "namespace": NODE_LEASE_NAMESPACE, "uid": uid,
            "creationTimestamp": timestamp(now), "ownerReferences": [owner]}  # fmt: skip
    spec = {"holderIdentity": name, "leaseDurationSeconds": seconds,
            "renewTime": micro_timestamp(now)}  # fmt: skip
    return {"kind": "Lease", "apiVersion": "coordination.k8s.io/v1", "metadata": meta,
            "spec": spec}  # fmt: skip


def pod_ip(cidr: str, index: int) -> str:
    """The ``index``-th address counting down from the top of ``cidr`` (wrapping round)."""
    network = ipaddress.ip_network(cidr)
    top = int(network.broadcast_address) - 1
    return str(ipaddress.ip_address(top - index % (network.num_addresses - 2)))
