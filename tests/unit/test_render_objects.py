"""deploy applies only what kschedctl renders for the spec: the objects table of each form.

The table (kschedctl/render/objects.py, the ``objects`` of the FORMS rows) must list exactly
what the templates render for every golden spec, program and leader-election setting; any
other document, a copy, or a binding to another role or subject is refused before anything
is sent, for every form and dry-run mode.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from kschedctl.base.errors import SpecError
from kschedctl.k8s import apply
from kschedctl.ops import deploy as use_case
from kschedctl.ops.deploy import allowed_keys, cluster_objects, load_target
from kschedctl.render import forms
from kschedctl.render.context import require_renderable
from kschedctl.render.forms import DEPLOY_FORMS as FORMS
from kschedctl.render.objects import (
    check_objects,
    expected_objects,
    host_rbac,
    not_for_form,
    object_key,
    stale_rbac,
)
from kschedctl.spec import Routing, Spec, load_spec, thawed, with_program

GOLDEN_SPECS = sorted(
    p for p in (Path(__file__).parent.parent / "golden" / "specs").glob("*.yaml")
    if p.name != "existing-config.yaml"  # a KubeSchedulerConfiguration, not a spec
)  # fmt: skip


def _specs() -> list[tuple[str, Spec]]:
    out = []
    for path in GOLDEN_SPECS:
        spec = load_spec(path)
        out.append((path.stem, spec))
        if spec.program != "builtin":
            try:  # the specs that can run kschedctl's own scheduler
                as_builtin = require_renderable(with_program(copy.deepcopy(spec), "builtin"))
            except SpecError:
                continue
            out.append((f"{path.stem}-builtin", as_builtin))
    solo = thawed(load_target("solo"))
    solo.leader_election.leader_elect = False
    out.append(("no-leader-election", solo))
    return out


SPECS = _specs()


@pytest.mark.parametrize(("label", "spec"), SPECS, ids=[label for label, _ in SPECS])
@pytest.mark.parametrize("form", ["pod", "deployment", "host-rbac"])
def test_the_table_lists_exactly_what_each_form_renders(label: str, spec: Spec, form: str) -> None:
    docs = [d for d in yaml.safe_load_all(forms.render(spec, form)) if d is not None]
    rendered = [object_key(d) for d in docs]
    assert sorted(rendered) == sorted(expected_objects(spec, forms.by_name(form).objects))
    assert len(set(rendered)) == len(rendered)


def test_the_rendered_names_today() -> None:
    """The names each form renders (README "Security"), for program kube-scheduler with
    least privilege (the default)."""
    keys = {(k, ns, n) for _, k, ns, n in allowed_keys(load_target("s"), "deployment")}
    assert keys == {
        ("ServiceAccount", "kube-system", "s"),
        ("ClusterRole", "", "s-scheduler"),
        ("ClusterRoleBinding", "", "s-scheduler"),
        ("RoleBinding", "kube-system", "s-extension-apiserver-authentication-reader"),
        ("Role", "kube-system", "s-leader-election"),
        ("RoleBinding", "kube-system", "s-leader-election"),
        # `status --metrics` mints its tokens for this ServiceAccount: get /metrics, nothing else
        ("ServiceAccount", "kube-system", "s-metrics-reader"),
        ("ClusterRole", "", "s-metrics-reader"),
        ("ClusterRoleBinding", "", "s-metrics-reader-status"),
        ("ConfigMap", "kube-system", "s-config"),
        ("Deployment", "kube-system", "s"),
    }
    for form in ("service", "static-pod"):
        keys = {(k, ns, n) for _, k, ns, n in allowed_keys(load_target("s"), form)}
        assert keys == {
            ("Role", "kube-system", "s-leader-election"),
            ("RoleBinding", "kube-system", "s-host-leader-election"),
        }


def test_every_deployable_form_names_its_objects() -> None:
    for name in FORMS:
        assert forms.applied(name).objects, name


MALLORY_ADMIN = {
    "apiVersion": "rbac.authorization.k8s.io/v1",
    "kind": "ClusterRoleBinding",
    "metadata": {"name": "mallory-admin"},
    "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                "name": "cluster-admin"},
    "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "mallory"}],
}  # fmt: skip


def _edit(kind: str, change: Any) -> Any:
    """A tamper: change the first document of ``kind`` (a function of the docs)."""

    def tamper(docs: list[Any]) -> list[Any]:
        for doc in docs:
            if isinstance(doc, dict) and doc.get("kind") == kind:
                change(doc)
                break
        return docs

    return tamper


def _set(path: str, value: Any) -> Any:
    def change(doc: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        for key in parents:
            doc = doc[key]
        doc[last] = value

    return change


TAMPERS: dict[str, tuple[Any, str]] = {
    "an-extra-clusterrolebinding": (lambda d: [*d, MALLORY_ADMIN], "ClusterRoleBinding mallory-admin"),
    "an-extra-secret": (
        lambda d: [*d, {"apiVersion": "v1", "kind": "Secret",
                        "metadata": {"name": "s", "namespace": "kube-system"}}],
        "Secret kube-system/s",
    ),
    "another-namespace": (_edit("Role", _set("metadata.namespace", "default")), "Role default/"),
    "another-name": (_edit("Role", _set("metadata.name", "kube-scheduler")), "Role kube-system/kube-scheduler"),
    "another-api-version": (_edit("Role", _set("apiVersion", "v1")), "(v1)"),
    "a-second-copy": (lambda d: [*d, copy.deepcopy(d[0])], "appears more than once"),
    "a-binding-to-cluster-admin": (
        _edit("RoleBinding", _set("roleRef.name", "cluster-admin")), "its roleRef must be Role"
    ),
    "a-binding-to-another-kind": (
        _edit("RoleBinding", _set("roleRef.kind", "ClusterRole")), "its roleRef must be Role"
    ),
    "a-second-subject": (
        _edit("RoleBinding", lambda doc: doc["subjects"].append(
            {"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "mallory"})),
        "its only subject must be",
    ),
    "a-list-document": (lambda d: [*d, ["a"]], "is not an object (list)"),
    "no-metadata": (lambda d: [*d, {"kind": "Role"}], "Role (no name)"),
    "a-name-that-is-a-list": (_edit("Role", _set("metadata.name", ["x"])), "Role kube-system/"),
}  # fmt: skip


@pytest.mark.parametrize("tamper", TAMPERS, ids=list(TAMPERS))
@pytest.mark.parametrize("form", FORMS)
def test_anything_else_is_refused_with_the_document_named(
    monkeypatch: pytest.MonkeyPatch, form: str, tamper: str
) -> None:
    spec = load_target("s")
    change, named = TAMPERS[tamper]
    real = forms.render

    def tampered(spec: Spec, name: str) -> str:
        docs = [d for d in yaml.safe_load_all(real(spec, name)) if d is not None]
        return yaml.safe_dump_all(change(docs))

    monkeypatch.setattr(use_case, "render", tampered)
    with pytest.raises(SpecError) as caught:
        cluster_objects(spec, form)
    assert caught.value.exit_code == 3
    assert named in caught.value.message
    assert "nothing was sent" in caught.value.message


def test_host_forms_apply_only_the_lease_rbac_whatever_host_rbac_holds(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The issue's example: a ClusterRoleBinding in host-rbac.yaml was applied by --as-service."""
    spec = load_target("s")
    real = forms.render
    monkeypatch.setattr(
        use_case, "render",
        lambda s, name: real(s, name) + "---\n" + yaml.safe_dump(MALLORY_ADMIN),
    )  # fmt: skip
    for form in ("service", "static-pod"):
        with pytest.raises(SpecError, match="ClusterRoleBinding mallory-admin"):
            cluster_objects(spec, form)


def test_a_rendering_that_is_not_yaml_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(use_case, "render", lambda s, name: "a: [\n")
    with pytest.raises(SpecError, match="not valid YAML"):
        cluster_objects(load_target("s"), "pod")


def test_check_objects_keeps_the_order_and_skips_empty_documents() -> None:
    spec = load_target("s")
    docs = list(yaml.safe_load_all(forms.render(spec, "pod")))
    objects = check_objects(spec, "pod", forms.by_name("pod").objects, [None, *docs, None])
    assert [o["kind"] for o in objects][-1] == "Pod"


class RecordingCluster:
    """Records every request; any request at all fails the test that expects none."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def get(self, path: str) -> dict[str, Any]:
        self.calls.append(f"GET {path}")
        raise AssertionError("nothing may be sent")

    def apply(self, path: str, obj: dict[str, Any], dry_run: bool = False) -> dict[str, Any]:
        self.calls.append(f"APPLY {path}")
        raise AssertionError("nothing may be sent")


@pytest.mark.parametrize("dry_run", [False, True], ids=["apply", "server-dry-run"])
def test_apply_objects_refuses_a_stray_object_before_the_first_request(dry_run: bool) -> None:
    spec = load_target("s")
    objects = [*cluster_objects(spec, "pod"), MALLORY_ADMIN]
    cluster = RecordingCluster()
    with pytest.raises(SpecError, match="refusing to apply ClusterRoleBinding mallory-admin"):
        apply.apply_objects(
            cluster,  # type: ignore[arg-type]
            objects,
            allowed=allowed_keys(spec, "pod"),
            dry_run=dry_run,
        )
    assert cluster.calls == []


# spec.metrics off: its Service, ServiceMonitor and scraper RBAC are pruned if kschedctl made them.
NO_METRICS = {
    ("Service", "kube-system", "s-metrics"),
    ("ServiceMonitor", "kube-system", "s"),
    ("ClusterRole", "", "s-metrics-reader"),
    ("ClusterRoleBinding", "", "s-metrics-reader"),
}
# A kube-scheduler's status reader holds the ClusterRole too (templates/_metrics-reader.yaml.j2).
NO_SCRAPER = NO_METRICS - {("ClusterRole", "", "s-metrics-reader")}
# spec.routing gone: its MutatingAdmissionPolicy and binding are pruned too.
NO_ROUTING = {
    ("MutatingAdmissionPolicy", "", "kschedctl-route-s"),
    ("MutatingAdmissionPolicyBinding", "", "kschedctl-route-s"),
}
STATUS_READER = {
    ("ServiceAccount", "kube-system", "s-metrics-reader"),
    ("ClusterRole", "", "s-metrics-reader"),
    ("ClusterRoleBinding", "", "s-metrics-reader-status"),
}


def test_deploy_prunes_exactly_the_rbac_the_spec_no_longer_renders() -> None:
    spec = thawed(load_target("s"))  # least privilege, leader election on
    rows = forms.applied("deployment").objects
    assert stale_rbac(spec, rows) == {
        ("ClusterRoleBinding", "", "s-as-kube-scheduler"),
        ("ClusterRoleBinding", "", "s-as-volume-scheduler"),
        *NO_SCRAPER,
        *NO_ROUTING,
    }
    spec.routing = Routing(namespace_selector={"matchLabels": {"team": "a"}})
    assert not NO_ROUTING & stale_rbac(spec, rows)  # asked for: kept
    spec.routing = None
    spec.rbac = "builtinRoles"
    assert stale_rbac(spec, rows) == {
        ("ClusterRole", "", "s-scheduler"),
        ("ClusterRoleBinding", "", "s-scheduler"),
        *NO_SCRAPER,
        *NO_ROUTING,
    }
    spec.leader_election.leader_elect = False
    assert ("Role", "kube-system", "s-leader-election") in stale_rbac(spec, rows)
    assert ("RoleBinding", "kube-system", "s-leader-election") in stale_rbac(spec, rows)
    spec.metrics.service = spec.metrics.service_monitor = True
    assert not NO_METRICS & stale_rbac(spec, rows)  # asked for: kept
    spec.metrics.scraper.service_account = ""  # the scraper has its RBAC already
    assert stale_rbac(spec, rows) & NO_METRICS == {("ClusterRoleBinding", "", "s-metrics-reader")}
    assert not STATUS_READER & stale_rbac(spec, rows)
    # The host forms' table holds the host Lease RBAC and the host metrics objects: nothing of
    # the in-cluster forms is touched.
    host_rows = forms.applied("static-pod").objects
    host_lease_and_plugins = {
        ("Role", "kube-system", "s-leader-election"),
        ("RoleBinding", "kube-system", "s-host-leader-election"),
        # program custom's plugin RBAC for the host user: not rendered for this spec
        ("ClusterRole", "", "s-host-plugins"),
        ("ClusterRoleBinding", "", "s-host-plugins"),
    }
    reader = {k for k in NO_METRICS if "metrics-reader" in k[2]}
    assert stale_rbac(spec, host_rows, "static-pod") == host_lease_and_plugins | reader
    # A systemd service has no pod for the static pods' Service to select: it goes too (a
    # scheduler moved from --as-static-pod to --as-service keeps no dangling scrape target).
    assert stale_rbac(spec, host_rows, "service") == host_lease_and_plugins | NO_METRICS


def test_a_scheduler_moved_to_kschedctls_own_program_loses_its_metrics_reader() -> None:
    """kschedctl's own scheduler serves /metrics to anyone: no reader ServiceAccount (deploy
    deletes the one the kube-scheduler had), no right to /metrics."""
    spec = require_renderable(with_program(load_target("s"), "builtin"))
    assert STATUS_READER <= stale_rbac(spec, forms.applied("deployment").objects)


@pytest.mark.parametrize(
    ("form", "applied_kinds", "dropped_kinds"),
    [
        ("static-pod", ["Service", "ServiceMonitor", "ClusterRole", "ClusterRoleBinding"], []),
        ("service", ["ClusterRole", "ClusterRoleBinding"], ["Service", "ServiceMonitor"]),
    ],
    ids=["static-pod", "service"],
)
def test_host_forms_apply_the_metrics_objects_their_scheduler_can_use(
    form: str, applied_kinds: list[str], dropped_kinds: list[str]
) -> None:
    """spec.metrics with leader election off: host-rbac holds only the metrics objects; the
    static pods get the Service over their mirror pods, a systemd service only the scraper's
    right to /metrics (deploy drops what its form does not apply, refusing nothing)."""
    spec = thawed(load_target("s"))
    spec.leader_election.leader_elect = False
    spec.metrics.service = spec.metrics.service_monitor = True
    assert host_rbac(spec)
    objects = cluster_objects(spec, form)
    assert [o["kind"] for o in objects] == applied_kinds
    assert {key[1] for key in not_for_form(spec, forms.applied(form).objects, form)} == set(
        dropped_kinds
    )
    assert {key[1] for key in allowed_keys(spec, form)} == set(applied_kinds)
    if form == "static-pod":
        service = objects[0]
        # The static pod's own labels pick its mirror pods; it serves on service.securePort.
        static_pod = yaml.safe_load(forms.render(spec, "static-pod"))
        labels = static_pod["metadata"]["labels"]
        assert service["spec"]["selector"].items() <= labels.items()
        assert [p["targetPort"] for p in service["spec"]["ports"]] == [spec.service.secure_port]
    spec.metrics = type(spec.metrics)()
    assert not host_rbac(spec)
