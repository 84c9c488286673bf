"""A scheduler is identified by what owns it, never by a name alone (pure; observe.identity)."""

from __future__ import annotations

from typing import Any

import pytest
from test_schedulers import REPLICA_SET, by_name, deployment, lease, snapshot

from kschedctl.base.errors import KschedError, NotFoundError
from kschedctl.observe import identity
from kschedctl.observe.discovery import discover
from kschedctl.observe.schedulers import Scheduler

MINE = {"kschedctl.io/scheduler": "mine"}


def bare(namespace: str, name: str, labels: dict[str, str] | None = None, **meta: Any) -> dict:
    """A bare kube-scheduler pod with no config: it serves default-scheduler."""
    return {
        "metadata": {"namespace": namespace, "name": name, "uid": f"{namespace}-{name}",
                     "labels": labels or {}, **meta},
        "spec": {"nodeName": "n1", "containers": [{
            "name": "kube-scheduler", "image": "registry.k8s.io/kube-scheduler:v1.36.3",
            "command": ["kube-scheduler", *(["--leader-elect=false"] if labels else [])]}]},
        "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]},
    }  # fmt: skip


def configured(namespace: str, name: str, scheduler: str, labels: dict[str, str]) -> dict:
    """A bare kube-scheduler pod whose flags name no profile but kschedctl's label names
    ``scheduler`` (its ConfigMap is gone: the label says which scheduler it is)."""
    pod = bare(namespace, name, labels)
    pod["spec"]["containers"][0]["command"].append("--config=/etc/s/config.yaml")
    pod["spec"]["containers"][0]["volumeMounts"] = [{"name": "c", "mountPath": "/etc/s"}]
    pod["spec"]["volumes"] = [{"name": "c", "configMap": {"name": f"{scheduler}-config"}}]
    return pod


def binding(scheduler: str, namespace: str, account: str | None = None) -> dict:
    return {
        "metadata": {"name": f"{scheduler}-scheduler", "labels": {"kschedctl.io/scheduler": scheduler}},
        "subjects": [{"kind": "ServiceAccount", "name": account or scheduler, "namespace": namespace}],
    }  # fmt: skip


DEFAULT_LEASE = lease("kube-system", "kube-scheduler", "cp-1_abc")


def test_an_editors_bare_pod_is_an_impostor_of_default_scheduler() -> None:
    """Example 2: the Lease kube-system/kube-scheduler is the default scheduler; the pod
    in aaa-dev that claims the name is named, with its namespace, and nothing of it merged."""
    default = by_name(snapshot(pods=[bare("aaa-dev", "ks")], leases=[DEFAULT_LEASE]))[
        "default-scheduler"
    ]
    assert (default.form, default.namespace, default.identity) == (
        "process",
        "kube-system",
        "lease",
    )
    assert default.pods == [] and default.leader == "cp-1"
    ((impostor),) = default.impostors
    assert (impostor.namespace, impostor.instance, impostor.identity) == (
        "aaa-dev",
        "pod/ks",
        "impostor",
    )
    assert "outside kube-system" in (impostor.reason or "")
    claims = default.to_dict()["claims"]
    assert claims == [{"namespace": "aaa-dev", "instance": "pod/ks", "form": "pod",
                       "verdict": "impostor", "reason": impostor.reason}]  # fmt: skip


def test_only_impostors_mean_nothing_serves_default_scheduler() -> None:
    default = by_name(snapshot(pods=[bare("aaa-dev", "ks")]))["default-scheduler"]
    assert (default.served, default.identity, default.form) == (False, None, "none")
    assert [i.namespace for i in default.impostors] == ["aaa-dev"]


def test_kube_system_and_control_plane_static_pods_are_the_default_scheduler() -> None:
    node = {"metadata": {"name": "cp-1", "uid": "node-uid",
                         "labels": {"node-role.kubernetes.io/control-plane": ""}}}  # fmt: skip
    owner = [{"kind": "Node", "name": "n1", "uid": "node-uid", "controller": True}]
    mirror = bare("kube-system", "kube-scheduler-n1", annotations={"kubernetes.io/config.mirror": "h"},
                  ownerReferences=owner)  # fmt: skip
    nodes = {"n1": {**node, "metadata": {**node["metadata"], "name": "n1"}}}
    found = by_name(snapshot(pods=[mirror, bare("team", "x")], leases=[DEFAULT_LEASE], nodes=nodes))
    default = found["default-scheduler"]
    assert (default.form, default.identity, default.pods) == (
        "static-pod",
        "control-plane",
        ["kube-scheduler-n1"],
    )
    assert [i.namespace for i in default.impostors] == ["team"]
    # the node unknown (or not a control-plane one): kube-system still anchors it
    plain = by_name(snapshot(pods=[mirror], leases=[DEFAULT_LEASE]))["default-scheduler"]
    assert plain.identity == "kube-system"


@pytest.mark.parametrize(
    ("pod", "expected"),
    [
        pytest.param({}, True, id="its-node"),
        pytest.param({"namespace": "team"}, False, id="outside-kube-system"),
        pytest.param({"owner_uid": "forged"}, False, id="another-uid"),
        pytest.param({"role": {}}, False, id="worker-node"),
        pytest.param({"mirror": False}, False, id="not-a-mirror"),
    ],
)  # fmt: skip
def test_is_control_plane_mirror(pod: dict[str, Any], expected: bool) -> None:
    labels = pod.get("role", {"node-role.kubernetes.io/master": ""})
    node = {"metadata": {"name": "cp", "uid": "u", "labels": labels}}
    annotations = {"kubernetes.io/config.mirror": "h"} if pod.get("mirror", True) else {}
    candidate = {
        "metadata": {"namespace": pod.get("namespace", "kube-system"), "annotations": annotations,
                     "ownerReferences": [{"kind": "Node", "name": "cp", "uid": pod.get("owner_uid", "u")}]},
        "spec": {"nodeName": "cp"},
    }  # fmt: skip
    assert identity.is_control_plane_mirror(candidate, {"cp": node}) is expected


def test_kschedctls_label_without_its_record_is_an_impostor() -> None:
    """kschedctl's scheduler ``mine`` recorded in ``team`` by its ClusterRoleBinding: the
    pod there is it; one labelled the same in ``aab-dev`` is an impostor."""
    pods = [configured("team", "a", "mine", MINE), configured("aab-dev", "b", "mine", MINE)]
    mine = by_name(snapshot(pods=pods, bindings=[binding("mine", "team")]))["mine"]
    assert (mine.namespace, mine.identity, mine.managed, mine.pods) == (
        "team",
        "kschedctl",
        True,
        ["a"],
    )
    ((impostor),) = mine.impostors
    assert impostor.namespace == "aab-dev"
    assert "kschedctl deployed mine in namespace team" in (impostor.reason or "")


def test_a_scraper_subject_records_nothing() -> None:
    """Only the subject that is the scheduler's own ServiceAccount records its namespace."""
    scraper = binding("mine", "monitoring", account="scraper")
    mine = by_name(
        snapshot(pods=[configured("monitoring", "a", "mine", MINE)], bindings=[scraper])
    )["mine"]
    assert (mine.served, [i.namespace for i in mine.impostors]) == (False, ["monitoring"])


def test_two_recorded_namespaces_are_a_conflict() -> None:
    pods = [configured("a", "p", "mine", MINE), configured("b", "p", "mine", MINE)]
    second = {
        **binding("mine", "b"),
        "metadata": {"name": "mine-as-kube-scheduler", "labels": MINE},
    }
    schedulers = discover(snapshot(pods=pods, bindings=[binding("mine", "a"), second]))
    mine = next(s for s in schedulers if s.name == "mine")
    assert (mine.form, mine.served, mine.healthy) == ("conflict", True, False)
    assert sorted(c.namespace or "" for c in mine.candidates) == ["a", "b"]
    assert [c["verdict"] for c in mine.to_dict()["claims"]] == ["candidate", "candidate"]
    with pytest.raises(KschedError) as refused:
        identity.pick(schedulers, "mine")
    assert "(namespace a)" in refused.value.message and "(namespace b)" in refused.value.message
    assert "-n NAMESPACE (a, b)" in (refused.value.hint or "")
    chosen = identity.pick(schedulers, "mine", "b")
    assert chosen is not None and (chosen.namespace, chosen.pods) == ("b", ["p"])


def test_unanchored_schedulers_stand_alone_or_conflict() -> None:
    """A third party's scheduler (nothing anchors it) is its name's while it is the only one
    claiming it; two in two namespaces are a conflict."""
    one = configured("x", "s", "hand", {})
    config = {("x", "hand-config"): {"data": {"config.yaml": "profiles: [{schedulerName: hand}]"}}}
    alone = by_name(snapshot(pods=[one], configmaps=config))["hand"]
    assert (alone.form, alone.identity, alone.served) == ("pod", "unverified", True)
    assert "nothing but its own config" in (alone.reason or "")
    two = configured("y", "s", "hand", {})
    config[("y", "hand-config")] = config[("x", "hand-config")]
    both = by_name(snapshot(pods=[one, two], configmaps=config))["hand"]
    assert both.form == "conflict" and [c.namespace for c in both.candidates] == ["x", "y"]


def test_a_pod_is_a_deployments_only_through_its_replica_set() -> None:
    """A pod naming the Deployment's ReplicaSet by name but not by uid is not its replica."""
    replica = bare("kube-system", "my-scheduler-6d4-a")
    replica["metadata"]["ownerReferences"] = [{"kind": "ReplicaSet", "name": "my-scheduler-6d4",
                                               "uid": "rs-uid", "controller": True}]  # fmt: skip
    forged = bare("kube-system", "my-scheduler-6d4-b")
    forged["metadata"]["ownerReferences"] = [{"kind": "ReplicaSet", "name": "my-scheduler-6d4",
                                              "uid": "other", "controller": True}]  # fmt: skip
    elsewhere = {**replica, "metadata": {**replica["metadata"], "namespace": "team"}}
    found = by_name(snapshot(deployments=[deployment(managed=False)], pods=[replica, forged, elsewhere],
                             replicasets=[REPLICA_SET]))  # fmt: skip
    assert found["default-scheduler"].pods == ["my-scheduler-6d4-a"]
    assert identity.owning_deployment(replica, identity.deployment_uids([REPLICA_SET])) == "dep-uid"
    assert identity.owning_deployment(elsewhere, identity.deployment_uids([REPLICA_SET])) is None


def test_pick_names_an_impostor_and_a_missing_namespace() -> None:
    schedulers = discover(snapshot(pods=[bare("aaa-dev", "ks")], leases=[DEFAULT_LEASE]))
    assert identity.pick(schedulers, "default-scheduler") is schedulers[0]
    assert identity.pick(schedulers, "default-scheduler", "kube-system") is schedulers[0]
    with pytest.raises(KschedError, match="pod/ks in namespace aaa-dev claims .* but is not it"):
        identity.pick(schedulers, "default-scheduler", "aaa-dev")
    with pytest.raises(NotFoundError, match="it runs in kube-system"):
        identity.pick(schedulers, "default-scheduler", "elsewhere")
    assert identity.pick(schedulers, "nothing") is None


def test_trusted_objects_keep_only_where_kschedctl_deployed() -> None:
    def obj(kind: str, namespace: str | None, **annotations: str) -> dict[str, Any]:
        meta: dict[str, Any] = {"name": f"{kind.lower()}-{namespace}", "annotations": annotations}
        if namespace:
            meta["namespace"] = namespace
        return {"kind": kind, "metadata": meta}

    crb = {**obj("ClusterRoleBinding", None), **{"subjects": binding("mine", "team")["subjects"]}}
    objects = [
        crb, obj("Deployment", "team", **{"kschedctl.io/lease": "leases/mine"}),
        obj("RoleBinding", "leases"), obj("Role", "kube-system"),
        obj("Deployment", "aab-dev", **{"kschedctl.io/lease": "kube-system/kube-scheduler"}),
        obj("ConfigMap", "elsewhere"),
    ]  # fmt: skip
    kept, foreign = identity.trusted_objects("mine", objects)
    assert [o["metadata"]["name"] for o in foreign] == ["deployment-aab-dev", "configmap-elsewhere"]
    assert len(kept) == 4


def test_impostor_note() -> None:
    entry = Scheduler(
        "x",
        "none",
        served=False,
        impostors=[Scheduler("x", "pod", namespace="n", instance="pod/p")],
    )
    assert (
        identity.impostor_note(entry)
        == "; only impostors claim it: pod/p (namespace n) (it is not it)"
    )
    assert identity.impostor_note(None) == ""


def test_a_labelled_pod_elsewhere_is_not_the_schedulers_pod() -> None:
    """status and why read the crash reports and the plugins' hash of a scheduler's pods:
    kschedctl's label counts only in the scheduler's own namespace."""
    from kschedctl.ops.crash import pods_of_scheduler

    pods = [bare("team", "a", MINE), bare("aab-dev", "b", MINE)]
    entry = Scheduler("mine", "pod", namespace="team", pods=["a"])
    assert [p["metadata"]["name"] for p in pods_of_scheduler(pods, "mine", entry)] == ["a"]
    assert pods_of_scheduler(pods, "mine", None) == []


def host_role(namespace: str, form: str | None = "service") -> dict[str, Any]:
    """A host-form scheduler's Lease Role as deploy applies it (no ClusterRoleBinding)."""
    annotations = {"kschedctl.io/lease": f"{namespace}/mine"}
    if form:
        annotations["kschedctl.io/form"] = form
    return {"metadata": {"namespace": namespace, "name": "mine-leader-election",
                         "labels": MINE, "annotations": annotations}}  # fmt: skip


@pytest.mark.parametrize("form", ["service", "static-pod"])
def test_a_host_form_is_recorded_by_its_lease_role(form: str) -> None:
    """A service or static pod deployed outside kube-system: its Lease Role (RBAC, which the
    `edit` role cannot write) records the namespace, as a ClusterRoleBinding does for the
    in-cluster forms; a pod only labelled as it elsewhere stays an impostor."""
    snap = snapshot(
        pods=[configured("aab-dev", "b", "mine", MINE)], managed=[host_role("team", form)]
    )
    mine = by_name(snap)["mine"]
    assert (mine.form, mine.namespace, mine.identity) == (form, "team", "kschedctl")
    assert [i.namespace for i in mine.impostors] == ["aab-dev"]


def test_only_host_form_rbac_records_a_namespace() -> None:
    """A Role without the host-form mark, or an object editors can write, records nothing."""
    assert identity.host_rbac_namespace(host_role("team")) == "team"
    assert identity.host_rbac_namespace(host_role("team", form="deployment")) is None
    assert identity.host_rbac_namespace(host_role("team", form=None)) is None
    lease_like = {**host_role("team"), "kind": "Lease"}
    assert identity.host_rbac_namespace(lease_like) is None
    kept, foreign = identity.trusted_objects("mine", [{**host_role("team"), "kind": "Role"}])
    assert (len(kept), foreign) == (1, [])
