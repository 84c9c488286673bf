"""One table of kinds (kschedctl/render/kinds.py): every kind a form renders is a row, every row
is rendered, and ``remove`` deletes in an order that leaves nothing running without its RBAC.

Renders every golden spec in every form that sends objects to the API server, as
test_render_objects.py does; the objects rows, the REST paths and the deletion order all
come from the table.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import pytest
import yaml
from test_render_objects import SPECS

from kschedctl.k8s.resources import RESOURCES, resource_of
from kschedctl.render import forms
from kschedctl.render.kinds import KINDS, MANAGED_KINDS, Kind
from kschedctl.render.objects import CLUSTER

OBJECT_FORMS = ["pod", "deployment", "routing", "host-rbac"]
INDEX = {kind.name: index for index, kind in enumerate(KINDS)}


@cache
def rendered() -> list[dict[str, Any]]:
    """Every document every form renders for every golden spec."""
    return [
        doc
        for _, spec in SPECS
        for form in OBJECT_FORMS
        for doc in yaml.safe_load_all(forms.render(spec, form))
        if doc is not None
    ]


def _rows() -> list[Any]:
    return [row for form in forms.FORMS for row in form.objects]


def test_every_form_with_objects_is_rendered_here() -> None:
    assert sorted(f.name for f in forms.FORMS if f.objects) == sorted(OBJECT_FORMS)


def test_every_rendered_kind_is_a_row_of_the_table() -> None:
    for doc in rendered():
        # (the routing kinds at an older target's apiVersion: the same row, at that version)
        assert resource_of(doc) == RESOURCES[doc["kind"]].at(doc["apiVersion"]), doc["kind"]


def test_every_row_of_the_table_is_rendered() -> None:
    assert {doc["kind"] for doc in rendered()} == {kind.name for kind in KINDS}


def test_one_row_per_kind() -> None:
    assert len(RESOURCES) == len(MANAGED_KINDS)


def test_the_objects_rows_name_rows_of_the_table_in_their_scope() -> None:
    for row in _rows():
        assert row.kind in KINDS, row
        assert (row.namespace == CLUSTER) == (not row.kind.namespaced), row


def _is_workload(doc: dict[str, Any]) -> bool:
    spec = doc.get("spec") or {}
    return "containers" in spec or "containers" in ((spec.get("template") or {}).get("spec") or {})


ROUTING = {"MutatingAdmissionPolicyBinding", "MutatingAdmissionPolicy"}


def test_workloads_are_deleted_before_anything_else_but_the_routing() -> None:
    """A workload's pods go first, so none runs on without its ServiceAccount, RBAC or config;
    only the routing goes before them, so no new pod is sent to a scheduler going away."""
    workloads = {doc["kind"] for doc in rendered() if _is_workload(doc)}
    assert workloads == {"Pod", "Deployment"}
    others = [kind.name for kind in KINDS if kind.name not in workloads | ROUTING]
    assert max(INDEX[k] for k in ROUTING) < min(INDEX[k] for k in workloads)
    assert max(INDEX[k] for k in workloads) < min(INDEX[k] for k in others)
    assert INDEX["MutatingAdmissionPolicyBinding"] < INDEX["MutatingAdmissionPolicy"]


def test_bindings_are_deleted_before_the_roles_they_grant() -> None:
    bound = {(row.kind.name, row.role_ref.partition("/")[0]) for row in _rows() if row.role_ref}
    assert bound == {("RoleBinding", "Role"), ("ClusterRoleBinding", "ClusterRole")}
    assert all(INDEX[binding] < INDEX[role] for binding, role in bound)


def test_deploy_prunes_only_the_kinds_a_spec_may_stop_asking_for() -> None:
    """RBAC, the metrics objects, the status reader's ServiceAccount and the routing; never
    the workload nor its config."""
    prunable = {kind.name for kind in KINDS if kind.prunable}
    assert prunable == {
        "Role", "RoleBinding", "ClusterRole", "ClusterRoleBinding",
        "Service", "ServiceMonitor", "ServiceAccount", *ROUTING,
    }  # fmt: skip


@pytest.mark.parametrize("kind", KINDS, ids=[kind.name for kind in KINDS])
def test_rest_paths(kind: Kind) -> None:
    prefix = "/api/v1" if kind.api_version == "v1" else f"/apis/{kind.api_version}"
    scoped = (
        f"{prefix}/namespaces/ns/{kind.plural}" if kind.namespaced else f"{prefix}/{kind.plural}"
    )
    assert kind.collection() == f"{prefix}/{kind.plural}"
    assert kind.item("x", "ns") == f"{scoped}/x"
