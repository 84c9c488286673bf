"""Revisions, history, rollback, overrides written back and drift on a real control plane
(issue 26, items 3 and 4): deploy v1 → v2 → rollback to v1 serving its config; the history
bound; drift by `kubectl scale`; a tampered revision refused; remove deletes the revisions."""

from __future__ import annotations

import base64
import gzip
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml
from e2e_helpers import run

from kschedctl.kubeclient.client import Cluster
from kschedctl.lab.cluster import Lab

SECRETS = "/api/v1/namespaces/kube-system/secrets"


def revisions(cluster: Cluster, name: str) -> list[dict[str, Any]]:
    return cluster.list(
        SECRETS,
        labelSelector=f"kschedctl.io/scheduler={name},kschedctl.io/revision",
        fieldSelector="type=kschedctl.io/revision.v1",
    )


def history(lab: Lab, name: str, cwd: Path) -> list[dict[str, Any]]:
    shown = run(lab, "history", name, "-o", "json", cwd=cwd)
    assert shown.returncode == 0, shown.stderr
    return list(json.loads(shown.stdout))


def config_hash(cluster: Cluster, name: str) -> str:
    deployment = cluster.get(f"/apis/apps/v1/namespaces/kube-system/deployments/{name}")
    return str(
        deployment["spec"]["template"]["metadata"]["annotations"]["kschedctl.io/config-hash"]
    )


def set_spec(workspace: Path, **fields: Any) -> None:
    path = workspace / "scheduler.yaml"
    doc = yaml.safe_load(path.read_text())
    doc["spec"].update(fields)
    path.write_text(yaml.safe_dump(doc, sort_keys=False))


def test_deploy_history_rollback_drift_tamper_remove(
    lab: Lab, cluster: Cluster, tmp_path: Path, kubectl: Callable[..., Any]
) -> None:
    name = "hist-sched"
    assert run(lab, "create", name, cwd=tmp_path).returncode == 0
    workspace = tmp_path / name
    try:
        v1 = run(lab, "deploy", str(workspace), "--as-deployment", "--timeout", "150", cwd=tmp_path)
        assert v1.returncode == 0, v1.stderr
        assert f"{name}: revision 1 recorded" in v1.stderr
        hash_v1 = config_hash(cluster, name)

        set_spec(workspace, percentageOfNodesToScore=50)  # another config: another hash
        v2 = run(lab, "deploy", str(workspace), "--as-deployment", "--no-verify", cwd=tmp_path)
        assert v2.returncode == 0, v2.stderr
        assert config_hash(cluster, name) != hash_v1

        shown = history(lab, name, tmp_path)
        assert [(r["revision"], r["status"], r["form"]) for r in shown] == [
            (1, "superseded", "deployment"), (2, "deployed", "deployment"),
        ]  # fmt: skip
        assert shown[0]["by"] != "unknown" and shown[0]["description"] == "install"
        table = run(lab, "history", name, cwd=tmp_path)
        assert table.stdout.splitlines()[0].split() == [
            "REVISION", "UPDATED", "STATUS", "FORM", "VERSION", "BY", "DESCRIPTION",
        ]  # fmt: skip

        back = run(lab, "rollback", name, "--timeout", "150", cwd=tmp_path)
        assert back.returncode == 0, back.stderr
        assert f"canary pod was scheduled by {name}" in back.stderr
        assert config_hash(cluster, name) == hash_v1
        shown = history(lab, name, tmp_path)
        assert (shown[-1]["revision"], shown[-1]["description"]) == (3, "rollback to 1")
        assert [r["status"] for r in shown] == ["superseded", "superseded", "deployed"]

        status = json.loads(run(lab, "status", name, "-o", "json", cwd=tmp_path).stdout)
        assert status["revision"]["revision"] == 3
        assert status["drift"] == [], status["drift"]

        kubectl("scale", "deployment", name, "-n", "kube-system", "--replicas=2")
        drifted = run(lab, "status", name, "-o", "json", cwd=tmp_path)
        drift = json.loads(drifted.stdout)["drift"]
        replicas = [d for d in drift if d["path"] == "spec.replicas"]
        assert replicas and replicas[0]["revision"] == 1 and replicas[0]["live"] == 2, drift
        assert "kubectl" in (replicas[0]["manager"] or ""), replicas
        assert "spec.replicas" in run(lab, "status", name, cwd=tmp_path).stdout

        # Whoever may write Secrets in kube-system rewrites revision 2's spec (its hash kept).
        secret = cluster.get(f"{SECRETS}/kschedctl.{name}.v2")
        record = json.loads(gzip.decompress(base64.b64decode(secret["data"]["revision"])))
        record["spec"] = record["spec"].replace("replicas: 1", "replicas: 5")
        assert "replicas: 5" in record["spec"]
        secret["data"]["revision"] = base64.b64encode(
            gzip.compress(json.dumps(record).encode())
        ).decode()
        cluster.request("PUT", f"{SECRETS}/kschedctl.{name}.v2", body=secret)
        refused = run(lab, "rollback", name, "2", "--no-verify", cwd=tmp_path)
        assert refused.returncode == 3, refused.stderr
        assert "revision 2" in refused.stderr and "tampered" in refused.stderr
        assert len(history(lab, name, tmp_path)) == 3  # nothing deployed, nothing recorded
    finally:
        removed = run(lab, "remove", name, "--force", cwd=tmp_path)
    assert removed.returncode == 0, removed.stderr
    assert f"secret/kschedctl.{name}.v1" in removed.stdout
    assert revisions(cluster, name) == []


def test_overrides_written_back_or_recorded(lab: Lab, cluster: Cluster, tmp_path: Path) -> None:
    name = "save-sched"
    assert run(lab, "create", name, cwd=tmp_path).returncode == 0
    spec_file = tmp_path / name / "scheduler.yaml"
    header = spec_file.read_text().splitlines()[0]
    try:
        saved = run(lab, "deploy", name, "--as-deployment", "--replicas", "2", "--no-verify",
                    cwd=tmp_path)  # fmt: skip
        assert saved.returncode == 0, saved.stderr
        assert f"wrote spec.replicas to {name}/scheduler.yaml" in saved.stderr
        text = spec_file.read_text()
        assert yaml.safe_load(text)["spec"]["replicas"] == 2
        assert text.splitlines()[0] == header  # the rest of the file kept

        kept = run(lab, "deploy", name, "--as-deployment", "--replicas", "3", "--no-save",
                   "--no-verify", cwd=tmp_path)  # fmt: skip
        assert kept.returncode == 0, kept.stderr
        assert yaml.safe_load(spec_file.read_text())["spec"]["replicas"] == 2
        shown = history(lab, name, tmp_path)
        assert shown[0]["overrides"] == {}  # written to the file: not an override
        assert shown[-1]["overrides"] == {"replicas": 3}
        wide = run(lab, "history", name, "-o", "wide", cwd=tmp_path)
        assert "replicas=3" in wide.stdout

        dry = run(lab, "deploy", name, "--as-deployment", "--replicas", "4", "--dry-run=server",
                  cwd=tmp_path)  # fmt: skip
        assert dry.returncode == 0, dry.stderr
        assert yaml.safe_load(spec_file.read_text())["spec"]["replicas"] == 2
        assert len(history(lab, name, tmp_path)) == 2
    finally:
        run(lab, "remove", name, "--force", cwd=tmp_path)
    assert revisions(cluster, name) == []


def test_history_keeps_the_last_ten(lab: Lab, cluster: Cluster, tmp_path: Path) -> None:
    name = "many-sched"
    try:
        for _ in range(11):
            done = run(lab, "deploy", name, "--as-pod", "--no-wait", cwd=tmp_path)
            assert done.returncode == 0, done.stderr
        numbers = [r["revision"] for r in history(lab, name, tmp_path)]
        assert numbers == list(range(2, 12))
        assert len(revisions(cluster, name)) == 10
        last = run(lab, "history", name, "--max", "3", "-o", "json", cwd=tmp_path)
        assert [r["revision"] for r in json.loads(last.stdout)] == [9, 10, 11]
    finally:
        run(lab, "remove", name, "--force", cwd=tmp_path)
    assert revisions(cluster, name) == []


def test_static_pod_rollback_restores_the_manifest(
    lab: Lab, cluster: Cluster, tmp_path: Path
) -> None:
    name = "static-hist"
    assert run(lab, "create", name, cwd=tmp_path).returncode == 0
    workspace = tmp_path / name
    manifest = lab.dir / "manifests" / f"{name}.yaml"
    kept = lab.dir / "manifests" / f".{name}.yaml.previous"
    try:
        v1 = run(lab, "deploy", str(workspace), "--as-static-pod", "--no-verify", cwd=tmp_path)
        assert v1.returncode == 0, v1.stderr
        text_v1 = manifest.read_text()
        set_spec(workspace, percentageOfNodesToScore=50)
        v2 = run(lab, "deploy", str(workspace), "--as-static-pod", "--no-verify", cwd=tmp_path)
        assert v2.returncode == 0, v2.stderr
        assert manifest.read_text() != text_v1
        assert kept.read_text() == text_v1  # the previous file, hidden from the kubelet

        back = run(lab, "rollback", name, "--no-verify", cwd=tmp_path)
        assert back.returncode == 0, back.stderr
        assert manifest.read_text() == text_v1
        assert history(lab, name, tmp_path)[-1]["description"] == "rollback to 1"
    finally:
        removed = run(lab, "remove", name, "--force", cwd=tmp_path)
    assert removed.returncode == 0, removed.stderr
    assert not manifest.exists() and not kept.exists()
    assert revisions(cluster, name) == []


def test_concurrent_deploys_never_share_a_revision_number(cluster: Cluster) -> None:
    """Six deploys of one scheduler record at once: each gets its own number (the Secret's
    name is the lock), none is lost, and only the newest stays deployed."""
    from concurrent.futures import ThreadPoolExecutor
    from threading import Barrier

    from kschedctl.ops.history import Record, record
    from kschedctl.spec.load import spec_from_source

    spec = spec_from_source("race-history")
    start = Barrier(6)

    def deploy(i: int) -> int | None:
        start.wait()
        done = record(cluster, spec, "deployment", Record(f"hash-{i}", {}))
        return done.number if done else None

    with ThreadPoolExecutor(6) as pool:
        numbers = list(pool.map(deploy, range(6)))
    assert sorted(n for n in numbers if n is not None) == [1, 2, 3, 4, 5, 6], numbers
    statuses = {
        int(s["metadata"]["labels"]["kschedctl.io/revision"]): s["metadata"]["labels"][
            "kschedctl.io/revision-status"
        ]
        for s in revisions(cluster, "race-history")
    }
    assert statuses == {n: "deployed" if n == 6 else "superseded" for n in range(1, 7)}
    for s in revisions(cluster, "race-history"):
        cluster.delete(f"{SECRETS}/{s['metadata']['name']}")
