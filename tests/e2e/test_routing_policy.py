"""spec.routing on a real API server: the rendered MutatingAdmissionPolicy and binding, applied
as they are (only those two objects; ``deploy`` is not involved), route exactly the pods they
should.

Pods are created with ``dryRun=All`` where the answer is all the test needs: the API server
runs the whole admission chain, policies included, and stores nothing. The first pod is a real
one (it shows the stored pod carries the scheduler and the annotation).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
import yaml
from e2e_helpers import new_namespace, pod_manifest, wait_for

from kschedctl.base.errors import NotFoundError
from kschedctl.k8s.resources import object_path, resource_of
from kschedctl.kubeclient.client import Cluster
from kschedctl.observe.schedulers import SCHEDULER_LABEL
from kschedctl.render.forms import render
from kschedctl.render.routing import ROUTED_BY_ANNOTATION
from kschedctl.spec import Spec, spec_from_dict

pytestmark = pytest.mark.e2e


def _spec(name: str, namespace: str, routing: dict[str, Any]) -> Spec:
    spec, problems = spec_from_dict(
        {
            "apiVersion": "kschedctl.io/v1alpha1",
            "kind": "Scheduler",
            "metadata": {"name": name},
            "spec": {"namespace": namespace, "routing": routing},
        }
    )
    assert spec is not None and not problems, problems
    return spec


def _apply_routing(cluster: Cluster, spec: Spec) -> list[dict[str, Any]]:
    """Create the objects ``render --as routing`` prints (and nothing else)."""
    docs = [d for d in yaml.safe_load_all(render(spec, "routing")) if d]
    assert [d["kind"] for d in docs] == [
        "MutatingAdmissionPolicy",
        "MutatingAdmissionPolicyBinding",
    ]
    for doc in docs:
        cluster.create(resource_of(doc).collection(), doc)
    return docs


def _delete(cluster: Cluster, docs: list[dict[str, Any]]) -> None:
    for doc in reversed(docs):
        try:
            cluster.delete(object_path(doc))
        except NotFoundError:
            pass


def _scheduler_of(
    cluster: Cluster, namespace: str, *, dry_run: bool = True, **pod: Any
) -> tuple[str, str | None]:
    """(spec.schedulerName, the routed-by annotation) of a pod as the API server admits it."""
    labels = pod.pop("labels", {})
    annotations = pod.pop("annotations", {})
    manifest = pod_manifest(f"p-{uuid.uuid4().hex[:8]}", **pod)
    manifest["metadata"].update(labels=labels, annotations=annotations)
    query = {"dryRun": "All"} if dry_run else {}
    admitted = cluster.create(f"/api/v1/namespaces/{namespace}/pods", manifest, **query)
    routed_by = (admitted["metadata"].get("annotations") or {}).get(ROUTED_BY_ANNOTATION)
    return admitted["spec"]["schedulerName"], routed_by


def _wait_until_routed(cluster: Cluster, namespace: str, name: str, **pod: Any) -> None:
    """A policy takes effect once the API server's informers see it and its binding."""
    wait_for(
        lambda: _scheduler_of(cluster, namespace, **pod)[0] == name,
        60,
        f"the routing of {name} to take effect in {namespace}",
    )


@pytest.fixture()
def team(cluster: Cluster, namespace: str) -> Iterator[tuple[str, str]]:
    """A namespace labelled team=<unique>, routed to scheduler ``route-<same>`` (the
    scheduler itself is not running: routing only names it)."""
    label = uuid.uuid4().hex[:8]
    cluster.patch(f"/api/v1/namespaces/{namespace}", {"metadata": {"labels": {"team": label}}})
    name = f"route-{label}"
    docs = _apply_routing(
        cluster, _spec(name, namespace, {"namespaceSelector": {"matchLabels": {"team": label}}})
    )
    try:
        _wait_until_routed(cluster, namespace, name)
        yield namespace, name
    finally:
        _delete(cluster, docs)
        _delete_pods(cluster, namespace)


def _delete_pods(cluster: Cluster, namespace: str) -> None:
    """Routed pods ask for a scheduler nothing serves: gone before the next test of this lab
    lists schedulers (the namespace itself is deleted asynchronously)."""
    path = f"/api/v1/namespaces/{namespace}/pods"
    for pod in cluster.list(path):
        cluster.delete(f"{path}/{pod['metadata']['name']}", gracePeriodSeconds=0)
    wait_for(lambda: not cluster.list(path), 60, f"the pods of {namespace} to go")


def test_a_pod_naming_no_scheduler_is_routed_and_annotated(
    cluster: Cluster, team: tuple[str, str]
) -> None:
    """An unset schedulerName reaches admission as default-scheduler (defaulted while
    decoding), which is what the policy's condition tests: the stored pod is routed."""
    namespace, name = team
    assert _scheduler_of(cluster, namespace, dry_run=False) == (name, f"{namespace}/{name}")
    # the same with default-scheduler written out
    assert _scheduler_of(cluster, namespace, schedulerName="default-scheduler")[0] == name


def test_what_the_policy_leaves_alone(cluster: Cluster, team: tuple[str, str]) -> None:
    namespace, name = team
    other = new_namespace(cluster, f"e2e-unrouted-{uuid.uuid4().hex[:5]}")
    try:
        # another namespace
        assert _scheduler_of(cluster, other) == ("default-scheduler", None)
    finally:
        cluster.delete(f"/api/v1/namespaces/{other}")
    # a pod naming another scheduler keeps it
    assert _scheduler_of(cluster, namespace, schedulerName="other") == ("other", None)
    # a kschedctl scheduler's own pod (its label), even in a routed namespace
    own = {SCHEDULER_LABEL: name}
    assert _scheduler_of(cluster, namespace, labels=own) == ("default-scheduler", None)
    # a pod bound already (static and DaemonSet-style direct binding)
    assert _scheduler_of(cluster, namespace, nodeName="nowhere") == ("default-scheduler", None)
    # (a mirror pod: the API server refuses one without spec.nodeName, "must set spec.nodeName
    # if mirror pod annotation is set", so the case above covers every mirror pod there is)
    # kube-system, which a selector of every namespace would otherwise match
    assert _scheduler_of(cluster, "kube-system") == ("default-scheduler", None)


def test_pod_selector_and_priority_classes(cluster: Cluster, namespace: str) -> None:
    """A routing of every namespace but restricted to one priority class and a pod label:
    kube-system stays out, and pods lacking either are left alone."""
    unique = uuid.uuid4().hex[:8]
    priority_class = f"batch-{unique}"
    cluster.create(
        "/apis/scheduling.k8s.io/v1/priorityclasses",
        {"metadata": {"name": priority_class}, "value": 1000},
    )
    name = f"route-pc-{unique}"
    routing = {
        "namespaceSelector": {},
        "podSelector": {"matchLabels": {"app": "train"}},
        "priorityClassNames": [priority_class],
    }
    docs = _apply_routing(cluster, _spec(name, namespace, routing))
    try:
        train = {"app": "train"}
        _wait_until_routed(
            cluster, namespace, name, labels=dict(train), priorityClassName=priority_class
        )
        assert _scheduler_of(cluster, namespace, labels=dict(train)) == ("default-scheduler", None)
        assert _scheduler_of(cluster, namespace, priorityClassName=priority_class) == (
            "default-scheduler",
            None,
        )
        in_kube_system = _scheduler_of(
            cluster, "kube-system", labels=dict(train), priorityClassName=priority_class
        )
        assert in_kube_system == ("default-scheduler", None)
    finally:
        _delete(cluster, docs)
        cluster.delete(f"/apis/scheduling.k8s.io/v1/priorityclasses/{priority_class}")


def test_without_the_routing_new_pods_go_back_to_default_scheduler(
    cluster: Cluster, namespace: str
) -> None:
    label = uuid.uuid4().hex[:8]
    cluster.patch(f"/api/v1/namespaces/{namespace}", {"metadata": {"labels": {"team": label}}})
    name = f"route-{label}"
    docs = _apply_routing(
        cluster, _spec(name, namespace, {"namespaceSelector": {"matchLabels": {"team": label}}})
    )
    try:
        _wait_until_routed(cluster, namespace, name)
    finally:
        _delete(cluster, docs)
    wait_for(
        lambda: _scheduler_of(cluster, namespace)[0] == "default-scheduler",
        60,
        "new pods to reach default-scheduler again once the routing is deleted",
    )
