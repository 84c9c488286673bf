"""Which objects are kschedctl's, whatever tool applied them (Helm rewrites managed-by, Argo CD
the instance label), where a moved scheduler's Lease really is, and deploy's refusal to fight
Helm or a GitOps tool: on plain dicts."""

from __future__ import annotations

import copy
from typing import Any

import pytest
import yaml

from kschedctl.base.errors import KschedError
from kschedctl.observe.appliers import helm_command, helm_releases
from kschedctl.observe.containers import workload_leases
from kschedctl.observe.discovery import ClusterReading, discover
from kschedctl.observe.schedulers import (
    MIRROR_ANNOTATION,
    SCHEDULER_LABEL,
    owned,
    owner,
    owner_selectors,
)
from kschedctl.ops.deploy import refuse_tool_managed
from kschedctl.render import context
from kschedctl.render.export import kustomize_base
from kschedctl.render.forms import render
from kschedctl.spec import default_spec

OLD = {"app.kubernetes.io/managed-by": "kschedctl", "app.kubernetes.io/instance": "s"}
HELM = {"meta.helm.sh/release-name": "rel", "meta.helm.sh/release-namespace": "apps"}


def _obj(
    labels: dict[str, str], name: str = "s", annotations: dict[str, str] | None = None
) -> dict[str, Any]:
    return {
        "kind": "ServiceAccount",
        "metadata": {"namespace": "kube-system", "name": name, "uid": f"uid-{name}",
                     "labels": labels, "annotations": annotations or {}},
    }  # fmt: skip


@pytest.mark.parametrize(
    ("labels", "expected"),
    [
        ({**OLD, SCHEDULER_LABEL: "s"}, "s"),  # rendered by this kschedctl
        (OLD, "s"),  # deployed by an older kschedctl: managed-by and instance only
        ({**OLD, "app.kubernetes.io/managed-by": "Helm", SCHEDULER_LABEL: "s"}, "s"),
        ({**OLD, "app.kubernetes.io/instance": "argo-app", SCHEDULER_LABEL: "s"}, "s"),
        ({**OLD, "app.kubernetes.io/managed-by": "Helm"}, None),  # someone else's chart
        ({"app.kubernetes.io/managed-by": "kschedctl"}, None),  # no name to belong to
        ({"app.kubernetes.io/instance": "s"}, None),
        ({}, None),
        ({**OLD, SCHEDULER_LABEL: "other"}, "other"),  # kschedctl's own label decides
        ({**OLD, SCHEDULER_LABEL: ""}, "s"),
    ],
    ids=[
        "new",
        "older kschedctl",
        "helm",
        "argo tracking label",
        "foreign helm",
        "no instance",
        "instance only",
        "unlabelled",
        "own label wins",
        "empty own label",
    ],  # fmt: skip
)
def test_owner(labels: dict[str, str], expected: str | None) -> None:
    assert owner(_obj(labels)) == expected


def test_owner_selectors_find_new_and_old_objects() -> None:
    assert owner_selectors("s") == (
        f"{SCHEDULER_LABEL}=s",
        "app.kubernetes.io/managed-by=kschedctl,app.kubernetes.io/instance=s",
    )
    assert owner_selectors() == (SCHEDULER_LABEL, "app.kubernetes.io/managed-by=kschedctl")


def test_owned_merges_the_selectors_answers_and_keeps_only_the_schedulers_objects() -> None:
    new = _obj({**OLD, SCHEDULER_LABEL: "s"}, "a")
    helm = _obj({**OLD, "app.kubernetes.io/managed-by": "Helm", SCHEDULER_LABEL: "s"}, "b")
    old = _obj(OLD, "c")
    other = _obj({**OLD, SCHEDULER_LABEL: "t"}, "d")  # instance s, but scheduler t's
    foreign = _obj({"app.kubernetes.io/instance": "s"}, "e")
    by_label, by_old_labels = [new, helm], [new, old, other, foreign]
    names = [o["metadata"]["name"] for o in owned([by_label, by_old_labels], "s")]
    assert names == ["a", "b", "c"]
    assert [o["metadata"]["name"] for o in owned([by_label, by_old_labels])] == [
        "a", "b", "c", "d",
    ]  # fmt: skip


def test_every_rendered_object_carries_kschedctls_label() -> None:
    assert context.SCHEDULER_LABEL == SCHEDULER_LABEL
    spec = default_spec("s")
    for form in ("deployment", "pod", "static-pod"):
        for doc in yaml.safe_load_all(render(spec, form)):
            if doc:
                assert owner(doc) == "s", (form, doc["kind"])
                assert doc["metadata"]["labels"][SCHEDULER_LABEL] == "s"
    deployment = next(
        d for d in yaml.safe_load_all(render(spec, "deployment")) if d and d["kind"] == "Deployment"
    )
    # On the pods too (what rollout and remove wait on), but not in the immutable selector.
    assert deployment["spec"]["template"]["metadata"]["labels"][SCHEDULER_LABEL] == "s"
    assert SCHEDULER_LABEL not in deployment["spec"]["selector"]["matchLabels"]


def test_a_helm_installed_deployment_is_listed_as_managed() -> None:
    objects = [d for d in yaml.safe_load_all(render(default_spec("s"), "deployment")) if d]
    for obj in objects:  # what `helm install` does to every object of the chart
        obj["metadata"]["labels"]["app.kubernetes.io/managed-by"] = "Helm"
        obj["metadata"]["annotations"].update(HELM)
    deployment = next(o for o in objects if o["kind"] == "Deployment")
    configmaps = {
        (o["metadata"]["namespace"], o["metadata"]["name"]): o
        for o in objects
        if o["kind"] == "ConfigMap"
    }
    roles = owned([[o for o in objects if o["kind"] == "Role"]])
    assert roles  # the snapshot's managed Roles, selected by kschedctl's label
    snap = ClusterReading(pods=[], deployments=[deployment], configmaps=configmaps, leases=[],
                    managed=roles)  # fmt: skip
    (entry,) = [s for s in discover(snap) if s.name == "s"]
    assert (entry.form, entry.managed) == ("deployment", True)


def _kustomize_objects(namespace: str | None) -> list[dict[str, Any]]:
    """The kustomize base's objects, with every namespaced object of ``scheduler/`` moved to
    ``namespace`` as an overlay's namespace transformer does (kube-system/ stays)."""
    objects = []
    for path, text in kustomize_base(default_spec("s")).items():
        if not path.endswith(".yaml") or path.endswith("kustomization.yaml"):
            continue
        obj = yaml.safe_load(text)
        if namespace and path.startswith("scheduler/") and obj["metadata"].get("namespace"):
            obj["metadata"]["namespace"] = namespace
        objects.append(obj)
    return objects


def test_the_lease_of_a_moved_scheduler_follows_its_pod_namespace() -> None:
    moved = _kustomize_objects("team-a")
    # The annotation still names where the Lease was when rendered ...
    deployment = next(o for o in moved if o["kind"] == "Deployment")
    assert deployment["metadata"]["annotations"]["kschedctl.io/lease"] == "kube-system/s"
    # ... what the pod runs says where it is now.
    assert workload_leases(moved) == {("team-a", "s")}
    assert workload_leases(_kustomize_objects(None)) == {("kube-system", "s")}


def test_the_lease_comes_from_the_config_map_when_no_flag_overrides_it() -> None:
    spec = default_spec("s")
    spec.leader_election.resource_name = "s-lease"
    objects = [d for d in yaml.safe_load_all(render(spec, "deployment")) if d]
    assert workload_leases(objects) == {("kube-system", "s-lease")}
    spec.leader_election.leader_elect = False
    objects = [d for d in yaml.safe_load_all(render(spec, "deployment")) if d]
    assert workload_leases(objects) == set()  # no Lease at all, known for sure


def test_no_workload_that_states_its_lease_leaves_the_annotation_to_tell() -> None:
    objects = [d for d in yaml.safe_load_all(render(default_spec("s"), "deployment")) if d]
    without_config = [o for o in objects if o["kind"] != "ConfigMap"]
    assert workload_leases(without_config) is None
    assert workload_leases([o for o in objects if o["kind"] != "Deployment"]) is None
    # A static pod's mirror: its config is a file on the node, never guessed as the default.
    mirror = next(d for d in yaml.safe_load_all(render(default_spec("s"), "static-pod")) if d)
    mirror = copy.deepcopy(mirror)
    mirror["metadata"].setdefault("annotations", {})[MIRROR_ANNOTATION] = "x"
    assert workload_leases([mirror]) is None


def test_helm_releases_and_their_commands() -> None:
    objects = [_obj(OLD, "a", HELM), _obj(OLD, "b", HELM), _obj(OLD, "c"),
               _obj(OLD, "d", {"meta.helm.sh/release-name": "bare"})]  # fmt: skip
    assert helm_releases(objects) == [("rel", "apps"), ("bare", "")]
    assert helm_command("uninstall", ("rel", "apps")) == "helm uninstall rel -n apps"
    assert helm_command("uninstall", ("bare", "")) == "helm uninstall bare"


def test_deploy_refuses_to_fight_helm_and_names_the_release() -> None:
    helm = {**OLD, "app.kubernetes.io/managed-by": "Helm", SCHEDULER_LABEL: "s"}
    with pytest.raises(KschedError) as err:
        refuse_tool_managed("s", [_obj(helm, annotations=HELM)])
    assert "Helm release rel in namespace apps" in err.value.message
    assert "helm uninstall rel -n apps" in (err.value.hint or "")
    assert "helm upgrade rel -n apps" in (err.value.hint or "")


def test_deploy_refuses_to_fight_a_gitops_tool_but_takes_over_kubectl_applied_objects() -> None:
    argo = _obj({**OLD, SCHEDULER_LABEL: "s"}, annotations={"argocd.argoproj.io/tracking-id": "x"})
    with pytest.raises(KschedError, match="applied by Argo CD"):
        refuse_tool_managed("s", [argo])
    kubectl = _obj({**OLD, SCHEDULER_LABEL: "s"})
    kubectl["metadata"]["managedFields"] = [{"manager": "kubectl-client-side-apply"}]
    refuse_tool_managed("s", [kubectl])  # `kubectl apply` leaves no tool to fight: adopted
    deployed = _obj({**OLD, SCHEDULER_LABEL: "s"})
    deployed["metadata"]["managedFields"] = [{"manager": "kschedctl"}]
    refuse_tool_managed("s", [deployed])
    refuse_tool_managed("s", [])
