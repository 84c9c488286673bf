"""Static pod manifests → mirror pods (the lab runner's kubelet part; pure parts)."""

from __future__ import annotations

from pathlib import Path

from kschedctl.lab.runner.static import MIRROR, SOURCE, manifests, mirror_pod

NODE = {"metadata": {"name": "lab-node-1", "uid": "node-uid"}}


def test_manifests_reads_pods_and_skips_the_rest(tmp_path: Path) -> None:
    (tmp_path / "sched.yaml").write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: sched, namespace: kube-system}\nspec: {}\n"
    )
    (tmp_path / "broken.yaml").write_text("kind: Pod\nmetadata: [\n")
    (tmp_path / "deploy.yaml").write_text("kind: Deployment\nmetadata: {name: x}\n")
    (tmp_path / "notes.txt").write_text("not a manifest")
    found = manifests(tmp_path)
    assert list(found) == ["sched.yaml"]
    pod, digest = found["sched.yaml"]
    assert pod["metadata"]["name"] == "sched" and len(digest) == 32
    (tmp_path / "sched.yaml").write_text((tmp_path / "sched.yaml").read_text() + "# changed\n")
    assert manifests(tmp_path)["sched.yaml"][1] != digest


def test_mirror_pod_is_named_after_the_node_bound_to_it_and_owned_by_it() -> None:
    pod = {"kind": "Pod", "metadata": {"name": "sched", "namespace": "kube-system",
                                       "labels": {"a": "b"}, "annotations": {"x": "y"}},
           "spec": {"hostNetwork": True, "containers": []}}  # fmt: skip
    mirror = mirror_pod(pod, "abc", NODE)
    meta = mirror["metadata"]
    assert meta["name"] == "sched-lab-node-1" and meta["namespace"] == "kube-system"
    assert meta["labels"] == {"a": "b"}
    assert meta["annotations"] == {"x": "y", MIRROR: "abc", "kubernetes.io/config.hash": "abc",
                                   SOURCE: "file"}  # fmt: skip
    assert (
        meta["ownerReferences"][0]["kind"] == "Node"
        and meta["ownerReferences"][0]["uid"] == "node-uid"
    )
    assert mirror["spec"]["nodeName"] == "lab-node-1" and mirror["spec"]["hostNetwork"] is True
    assert "nodeName" not in pod["spec"], "the manifest itself is left alone"
