"""diff's pure parts: object normalisation, Secret masking, projection, the unified rendering."""

from __future__ import annotations

from typing import Any

from kschedctl.base.yamltext import to_yaml
from kschedctl.observe.changes import MASK, masked, normalised, object_name, projected
from kschedctl.printers.unified import line_style, unified

LIVE: dict[str, Any] = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {
        "name": "s", "namespace": "kube-system", "uid": "u1", "resourceVersion": "41",
        "generation": 3, "creationTimestamp": "2026-01-01T00:00:00Z", "selfLink": "/x",
        "managedFields": [{"manager": "kschedctl"}], "labels": {"b": "2", "a": "1"},
        "annotations": {},
    },
    "spec": {"replicas": 1},
    "status": {"readyReplicas": 1},
}  # fmt: skip


def test_normalised_drops_what_the_server_writes_and_sorts_keys() -> None:
    clean = normalised(LIVE)
    assert clean == {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"labels": {"a": "1", "b": "2"}, "name": "s", "namespace": "kube-system"},
        "spec": {"replicas": 1},
    }
    assert list(clean["metadata"]["labels"]) == ["a", "b"]  # type: ignore[index]
    assert normalised(None) is None
    assert LIVE["metadata"]["uid"] == "u1"  # the input is left as it was


def _secret(**data: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "k"}, "data": data}


def test_secret_values_never_show_but_their_change_does() -> None:
    live, merged = masked(_secret(same="c2VjcmV0", old="YQ==", gone="eA=="),
                          _secret(same="c2VjcmV0", old="Yg==", new="eQ=="))  # fmt: skip
    assert live is not None and merged is not None
    assert live["data"] == {"same": MASK, "old": f"{MASK} (before)", "gone": MASK}
    assert merged["data"] == {"same": MASK, "old": f"{MASK} (after)", "new": MASK}
    shown = to_yaml(live, document=True) + to_yaml(merged, document=True)
    assert not any(v in shown for v in ("c2VjcmV0", "YQ==", "Yg==", "eA==", "eQ=="))


def test_a_new_or_deleted_secret_is_masked_too_and_other_kinds_are_untouched() -> None:
    secret = {**_secret(token="dG9r"), "stringData": {"plain": "hunter2"}}
    live, merged = masked(None, secret)
    assert live is None and merged is not None
    assert merged["data"] == {"token": MASK} and merged["stringData"] == {"plain": MASK}
    assert secret["data"] == {"token": "dG9r"}  # the caller's object is not changed
    odd = masked({**_secret(), "data": "not-a-map"}, None)[0]
    assert odd is not None and odd["data"] == MASK
    config = {"kind": "ConfigMap", "data": {"k": "v"}}
    assert masked(config, config) == (config, config)


def test_projected_keeps_the_live_fields_the_rendered_object_sets() -> None:
    live = {"spec": {"containers": [{"image": "a", "terminationMessagePath": "/dev/x"}],
                     "dnsPolicy": "ClusterFirst"}}  # fmt: skip
    rendered = {"spec": {"containers": [{"image": "b"}]}}
    assert projected(live, rendered) == {"spec": {"containers": [{"image": "a"}]}}


def test_object_name_is_kubectl_diffs_file_name() -> None:
    assert object_name(LIVE) == "apps.v1.Deployment.kube-system.s"
    role = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
            "metadata": {"name": "r"}}  # fmt: skip
    assert object_name(role) == "rbac.authorization.k8s.io.v1.ClusterRole.r"


def test_unified_is_diff_u_n_with_live_and_merged_headers() -> None:
    lines = unified("apps.v1.Deployment.ns.s", "a: 1\nb: 1\n", "a: 1\nb: 2\n")
    assert lines == [
        "diff -u -N LIVE/apps.v1.Deployment.ns.s MERGED/apps.v1.Deployment.ns.s",
        "--- LIVE/apps.v1.Deployment.ns.s",
        "+++ MERGED/apps.v1.Deployment.ns.s",
        "@@ -1,2 +1,2 @@",
        " a: 1",
        "-b: 1",
        "+b: 2",
    ]
    assert unified("x", "same\n", "same\n") == []
    created = unified("x", "", "a: 1\n")
    assert created[-2:] == ["@@ -0,0 +1 @@", "+a: 1"]


def test_line_styles() -> None:
    styles = [line_style(s) for s in ("diff -u", "--- L", "+++ M", "@@ -1 +1 @@", "+a", "-b", " c")]
    assert styles == ["bold", "bold", "bold", "cyan", "green", "red", None]
