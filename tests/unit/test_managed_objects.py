"""managed_objects reads its lists concurrently but answers as reading them in turn would:
deletion order, each object once, a missing optional CRD skipped, any other error raised."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from kschedctl.base.errors import ClusterError, NotFoundError
from kschedctl.k8s.apply import managed_objects
from kschedctl.k8s.resources import RESOURCES
from kschedctl.observe.schedulers import SCHEDULER_LABEL
from kschedctl.render.kinds import KINDS

DELETE_ORDER = [kind.name for kind in KINDS]


def obj(name: str, scheduler: str = "s1") -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": "ns", "uid": name,
                         "labels": {SCHEDULER_LABEL: scheduler}}}  # fmt: skip


class FakeCluster:
    def __init__(self, fail: dict[str, Exception] | None = None) -> None:
        self.fail = fail or {}
        self.calls: list[tuple[str, str]] = []
        self.lock = threading.Lock()

    def list(self, path: str, **query: Any) -> list[dict[str, Any]]:
        with self.lock:
            self.calls.append((path, query["labelSelector"]))
        kind = next(k for k in DELETE_ORDER if RESOURCES[k].collection() == path)
        if kind in self.fail:
            raise self.fail[kind]
        # both selectors find the same object: it is listed once
        return [obj(f"{kind.lower()}-a"), obj(f"{kind.lower()}-other", "s2")]


def test_every_kind_in_deletion_order_each_object_once() -> None:
    cluster = FakeCluster()
    found = managed_objects(cluster, "s1")  # type: ignore[arg-type]
    assert [(o["kind"], o["metadata"]["name"]) for o in found] == [
        (kind, f"{kind.lower()}-a") for kind in DELETE_ORDER
    ]
    assert all(o["apiVersion"] == RESOURCES[o["kind"]].api_version for o in found)
    assert len(cluster.calls) == 2 * len(DELETE_ORDER)


def test_a_missing_optional_crd_is_skipped() -> None:
    cluster = FakeCluster({"ServiceMonitor": NotFoundError("the server could not find it")})
    kinds = [o["kind"] for o in managed_objects(cluster, "s1")]  # type: ignore[arg-type]
    assert kinds == [k for k in DELETE_ORDER if k != "ServiceMonitor"]


def test_the_first_failing_kind_in_deletion_order_is_raised() -> None:
    # (the first kind that is not optional: a 404 on an optional one means "none")
    first = next(kind.name for kind in KINDS[1:] if not kind.optional)
    later = DELETE_ORDER[-1]
    cluster = FakeCluster({later: ClusterError("later"), first: NotFoundError("gone")})
    with pytest.raises(NotFoundError, match="gone"):
        managed_objects(cluster, "s1")  # type: ignore[arg-type]


class BetaOnlyCluster(FakeCluster):
    """An API server of 1.34-1.35: MutatingAdmissionPolicy only at v1beta1."""

    def list(self, path: str, **query: Any) -> list[dict[str, Any]]:
        if "/admissionregistration.k8s.io/v1beta1/" in path:
            return [obj(f"{path.rsplit('/', 1)[1]}-beta")]
        if "/admissionregistration.k8s.io/v1/" in path:
            raise NotFoundError("the server could not find the requested resource")
        return super().list(path, **query)


def test_a_kind_rendered_at_several_versions_is_read_where_it_is_served() -> None:
    # remove must find a 1.35 cluster's routing, or it could never clean it up
    found = managed_objects(BetaOnlyCluster(), "s1")  # type: ignore[arg-type]
    routing = [(o["kind"], o["apiVersion"]) for o in found if "Admission" in o["kind"]]
    assert routing == [
        ("MutatingAdmissionPolicyBinding", "admissionregistration.k8s.io/v1beta1"),
        ("MutatingAdmissionPolicy", "admissionregistration.k8s.io/v1beta1"),
    ]
