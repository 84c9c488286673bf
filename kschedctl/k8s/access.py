"""SubjectAccessReviews: can a given identity do what a scheduler needs?"""

from __future__ import annotations

from kschedctl.kubeclient.client import Cluster
from kschedctl.observe.permissions import Access


def service_account_identity(namespace: str, name: str) -> tuple[str, list[str]]:
    return (
        f"system:serviceaccount:{namespace}:{name}",
        ["system:serviceaccounts", f"system:serviceaccounts:{namespace}", "system:authenticated"],
    )


def review(
    cluster: Cluster, user: str, groups: list[str], checks: list[Access]
) -> list[tuple[Access, bool]]:
    results = []
    for check in checks:
        attributes = {
            "verb": check.verb,
            "resource": check.resource,
            "group": check.group,
            "subresource": check.subresource,
            "namespace": check.namespace,
            "name": check.name,
        }
        body = {
            "apiVersion": "authorization.k8s.io/v1",
            "kind": "SubjectAccessReview",
            "spec": {"user": user, "groups": groups,
                     "resourceAttributes": {k: v for k, v in attributes.items() if v}},
        }  # fmt: skip
        answer = cluster.create("/apis/authorization.k8s.io/v1/subjectaccessreviews", body)
        results.append((check, bool((answer.get("status") or {}).get("allowed"))))
    return results
