"""Who applied a scheduler's objects (remove warns when a GitOps tool will re-create them),
and $(VAR) references in a scheduler's flags."""

from __future__ import annotations

from typing import Any

import pytest

from kschedctl.observe.appliers import applied_by, appliers
from kschedctl.observe.containers import expanded_argv


def _obj(labels: dict[str, str] | None = None, annotations: dict[str, str] | None = None,
         managers: list[str] | None = None) -> dict[str, Any]:  # fmt: skip
    meta: dict[str, Any] = {"name": "s", "labels": labels or {}, "annotations": annotations or {}}
    if managers is not None:
        meta["managedFields"] = [{"manager": m, "operation": "Apply"} for m in managers]
    return {"metadata": meta}


@pytest.mark.parametrize(
    ("obj", "expected"),
    [
        (_obj(managers=["kschedctl"]), None),
        (_obj(managers=["kschedctl", "kubectl-edit"]), None),  # deployed, then edited
        (_obj(), None),  # no managedFields to go by (an old server, a trimmed list)
        (_obj(managers=["kubectl-client-side-apply"]), "field manager kubectl-client-side-apply"),
        (_obj(annotations={"argocd.argoproj.io/tracking-id": "app:/x"}, managers=["kschedctl"]), "Argo CD"),
        (_obj(managers=["argocd-controller"]), "Argo CD"),
        (_obj(labels={"kustomize.toolkit.fluxcd.io/name": "apps"}), "Flux"),
        (_obj(labels={"helm.toolkit.fluxcd.io/name": "s"}), "Flux"),
        (_obj(managers=["kustomize-controller"]), "Flux"),
        (_obj(annotations={"meta.helm.sh/release-name": "s"}), "Helm"),
        (_obj(labels={"app.kubernetes.io/managed-by": "Helm"}), "Helm"),
        (_obj(managers=["helm"]), "Helm"),
    ],
    ids=[
        "deploy", "deploy then edit", "unknown", "kubectl apply", "argo annotation",
        "argo manager", "flux kustomization", "flux helmrelease", "flux manager",
        "helm annotation", "helm label", "helm manager",
    ],
)  # fmt: skip
def test_applied_by(obj: dict[str, Any], expected: str | None) -> None:
    assert applied_by(obj) == expected


def test_appliers_are_distinct_in_order() -> None:
    objects = [_obj(managers=["kustomize-controller"]), _obj(managers=["kschedctl"]),
               _obj(labels={"kustomize.toolkit.fluxcd.io/name": "a"}), _obj(managers=["helm"])]  # fmt: skip
    assert appliers(objects) == ["Flux", "Helm"]


def test_expanded_argv_resolves_env_and_the_pod_namespace() -> None:
    container = {
        "command": ["kube-scheduler", "--leader-elect-resource-namespace=$(POD_NAMESPACE)"],
        "args": ["--v=$(LEVEL)", "--x=$(UNKNOWN)", "--y=$$(POD_NAMESPACE)"],
        "env": [
            {
                "name": "POD_NAMESPACE",
                "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}},
            },
            {"name": "LEVEL", "value": "4"},
        ],
    }
    assert expanded_argv(container, "other") == [
        "kube-scheduler",
        "--leader-elect-resource-namespace=other",
        "--v=4",
        "--x=$(UNKNOWN)",
        "--y=$(POD_NAMESPACE)",
    ]
