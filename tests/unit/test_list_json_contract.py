"""`list -o json|yaml` is a kubectl List (as `kubectl get … -o json` prints several objects),
not `{"schedulers": […]}`: each item a `kind: Scheduler` with `metadata`, then its keys."""

from __future__ import annotations

from kschedctl.observe.schedulers import Lease, Scheduler
from kschedctl.ops.list import SchedulerList


def test_list_json_is_a_kubectl_list_of_scheduler_items() -> None:
    entry = Scheduler("mine", "deployment", namespace="kube-system", desired=1, ready=1,
                      lease=Lease("kube-system", "mine", "mine-1", 1.04, 15))  # fmt: skip
    shown = SchedulerList([entry]).to_dict()
    assert list(shown) == ["apiVersion", "kind", "metadata", "items"]
    assert (shown["apiVersion"], shown["kind"], shown["metadata"]) == (
        "v1", "List", {"resourceVersion": ""},
    )  # fmt: skip
    [item] = shown["items"]
    assert list(item)[:3] == ["kind", "metadata", "name"]
    assert item["kind"] == "Scheduler"
    assert item["metadata"]["name"] == "mine" and item["metadata"]["namespace"] == "kube-system"
    assert {k: item[k] for k in ("form", "healthy", "served")} == {
        "form": "deployment", "healthy": entry.healthy, "served": True,
    }  # fmt: skip
    assert item["lease"]["holder"] == "mine-1"
