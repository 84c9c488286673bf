"""``deploy --program builtin`` of a spec with a plugin file (``spec.builtin.plugins``), on
the session lab, in a namespace of its own.

The proofs, for the pod form and then the deployment form: the plugin travels in the
ConfigMap and the scheduler runs it (every pod lands where the filter plugin allows; a pod it
refuses gets the plugin's reason; ``why`` alone runs no plugin, withholds its verdict and names
the exact ``--run-cluster-plugins`` flag, with which it gives the scheduler's exact message); a
changed plugin file re-deployed rolls the pods (a new config hash, the old pods gone) and the
new plugin places the next pods; ``remove`` leaves nothing of the scheduler behind.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml
from e2e_helpers import pod_events, pod_manifest, wait_for

from kschedctl.kubeclient.client import Cluster
from kschedctl.lab.cluster import Lab
from kschedctl.lab.processes import proxy_free_environment
from kschedctl.render.builtin import bundle_hash

CONFIG_HASH = "kschedctl.io/config-hash"
PLUGIN = '''\
"""Only one node: {target}."""

TARGET = "{target}"


def filter(pod, node, ctx):
    if node["metadata"]["name"] != TARGET:
        return f"only {{TARGET}} is allowed"
    return None
'''


def _workspace(root: Path, name: str, namespace: str, target: str) -> Path:
    (root / "plugins").mkdir(parents=True, exist_ok=True)
    (root / "plugins" / "only_node.py").write_text(PLUGIN.format(target=target))
    spec = {
        "apiVersion": "kschedctl.io/v1alpha1",
        "kind": "Scheduler",
        "metadata": {"name": name},
        "spec": {
            "namespace": namespace,
            "program": "builtin",
            "builtin": {"plugins": ["plugins/only_node.py"]},
        },
    }
    (root / "scheduler.yaml").write_text(yaml.safe_dump(spec))
    return root


def _scheduler_pods(cluster: Cluster, namespace: str, name: str) -> list[dict[str, Any]]:
    pods = cluster.list(
        f"/api/v1/namespaces/{namespace}/pods",
        labelSelector=f"kschedctl.io/scheduler={name},app.kubernetes.io/component=scheduler",
    )
    return [p for p in pods if not p["metadata"].get("deletionTimestamp")]


def _place(cluster: Cluster, namespace: str, scheduler: str, pods: list[str]) -> dict[str, str]:
    for pod in pods:
        cluster.create(
            f"/api/v1/namespaces/{namespace}/pods", pod_manifest(pod, schedulerName=scheduler)
        )

    def bound() -> dict[str, str] | None:
        got = {
            pod: cluster.get(f"/api/v1/namespaces/{namespace}/pods/{pod}")["spec"].get("nodeName")
            for pod in pods
        }
        return got if all(got.values()) else None  # type: ignore[return-value]

    return wait_for(bound, 120, f"{pods} bound")  # type: ignore[no-any-return]


def _failed_note(cluster: Cluster, namespace: str, pod: str) -> str:
    def note() -> str | None:
        for event in pod_events(cluster, namespace, pod):
            if event.get("reason") == "FailedScheduling":
                return str(event.get("note") or event.get("message"))
        return None

    return str(wait_for(note, 90, f"FailedScheduling for {pod}"))


def _leftovers(cluster: Cluster, namespace: str, name: str) -> list[str]:
    selector = f"kschedctl.io/scheduler={name}"
    found = []
    for path in (
        f"/api/v1/namespaces/{namespace}/pods",
        f"/api/v1/namespaces/{namespace}/configmaps",
        f"/api/v1/namespaces/{namespace}/serviceaccounts",
        f"/apis/apps/v1/namespaces/{namespace}/deployments",
        f"/apis/rbac.authorization.k8s.io/v1/namespaces/{namespace}/roles",
        f"/apis/rbac.authorization.k8s.io/v1/namespaces/{namespace}/rolebindings",
        "/apis/rbac.authorization.k8s.io/v1/clusterroles",
        "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
    ):
        for obj in cluster.list(path, labelSelector=selector):
            if not obj["metadata"].get("deletionTimestamp"):
                found.append(f"{path.rsplit('/', 1)[-1]}/{obj['metadata']['name']}")
    leases = cluster.list(f"/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases")
    found += [f"leases/{n}" for lease in leases if (n := lease["metadata"]["name"]) == name]
    return found


def _runner(lab: Lab, cwd: Path) -> Callable[..., subprocess.CompletedProcess[str]]:
    """``kschedctl ARGS…`` against the lab, run from ``cwd``."""
    env = {**proxy_free_environment(), "KUBECONFIG": str(lab.kubeconfig)}

    def kschedctl(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "kschedctl", *args], capture_output=True,
                              text=True, env=env, cwd=cwd, timeout=420)  # fmt: skip

    return kschedctl


def _refused_elsewhere(
    cluster: Cluster,
    kschedctl: Callable[..., subprocess.CompletedProcess[str]],
    namespace: str,
    name: str,
    first: str,
    second: str,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """A pod only ``second`` could take: the plugin's reason in its FailedScheduling; `why -o
    json` alone runs no plugin and withholds its verdict (the built-in filters pass
    ``second``), naming the flags that run the scheduler's plugins; with those flags, the
    scheduler's own summary. Both JSONs (with the flags, without)."""
    refused = pod_manifest("elsewhere", schedulerName=name)
    refused["spec"]["nodeSelector"] = {"kubernetes.io/hostname": second}
    cluster.create(f"/api/v1/namespaces/{namespace}/pods", refused)
    note = _failed_note(cluster, namespace, "elsewhere")
    assert f"only {first} is allowed" in note, note
    alone = kschedctl("why", "elsewhere", "-n", namespace, "-o", "json")
    assert alone.returncode == 6, alone.stderr
    withheld: dict[str, Any] = json.loads(alone.stdout)
    assert withheld["schedulable"] is None and withheld["plugins"] is None, withheld
    assert withheld["pluginsNotRun"]["runWith"], withheld["pluginsNotRun"]
    flags = shlex.split(withheld["pluginsNotRun"]["runWith"])
    why = kschedctl("why", "elsewhere", "-n", namespace, "-o", "json", *flags)
    assert why.returncode == 6, why.stderr
    if flags[0] == "--run-cluster-plugins":  # said on stderr: cluster code runs here
        assert "running the Python plugins [only_node.py] of ConfigMap" in why.stderr
    found: dict[str, Any] = json.loads(why.stdout)
    assert found["summary"] == note
    assert found["schedulable"] is False and found["pluginsNotRun"] is None
    return found, withheld


def test_deploy_builtin_with_a_plugin_as_pod_and_deployment(
    lab: Lab, cluster: Cluster, namespace: str, tmp_path: Path
) -> None:
    kschedctl = _runner(lab, tmp_path)
    name = f"plug-{uuid.uuid4().hex[:5]}"
    nodes = sorted(n["metadata"]["name"] for n in cluster.list("/api/v1/nodes"))
    first, second = nodes[0], nodes[1]
    ws = _workspace(tmp_path / name, name, namespace, first)
    try:
        # -- the pod form: the plugin in the ConfigMap, run by the scheduler ----------------
        deployed = kschedctl("deploy", str(ws), "--as-pod", "--timeout", "360")
        assert deployed.returncode == 0, deployed.stderr
        assert f"canary pod was scheduled by {name}" in deployed.stderr
        configmap = cluster.get(f"/api/v1/namespaces/{namespace}/configmaps/{name}-config")
        assert configmap["data"]["plugin-only_node.py"] == PLUGIN.format(target=first)
        [pod] = _scheduler_pods(cluster, namespace, name)
        assert (
            "--plugin=/etc/kschedctl/plugins/only_node.py"
            in pod["spec"]["containers"][0]["command"]
        )
        placed = _place(cluster, namespace, name, ["a-0", "a-1", "a-2"])
        assert set(placed.values()) == {first}, placed
        # A pod only the other node could take: the plugin's reason, and why agrees once
        # told to run exactly the deployed ConfigMap's plugin (by its hash).
        found, withheld = _refused_elsewhere(cluster, kschedctl, namespace, name, first, second)
        digest = bundle_hash("", [("only_node.py", PLUGIN.format(target=first))])
        assert withheld["pluginsNotRun"]["runWith"] == (
            f"--run-cluster-plugins {namespace}/{name}-config@sha256:{digest}"
        )
        assert not any(f["code"] == "plugins-differ" for f in found["findings"]), found

        # -- a changed plugin file rolls the pod, and the new plugin places the next pods ---
        _workspace(ws, name, namespace, second)
        redeployed = kschedctl("deploy", str(ws), "--as-pod", "--timeout", "360")
        assert redeployed.returncode == 0, redeployed.stderr
        assert "config changed, replacing it" in redeployed.stderr
        [rolled] = _scheduler_pods(cluster, namespace, name)
        assert rolled["metadata"]["uid"] != pod["metadata"]["uid"]
        assert (
            rolled["metadata"]["annotations"][CONFIG_HASH]
            != (pod["metadata"]["annotations"][CONFIG_HASH])
        )
        assert set(_place(cluster, namespace, name, ["b-0", "b-1"]).values()) == {second}
        # the pod the old plugin refused now fits
        wait_for(
            lambda: (
                cluster.get(f"/api/v1/namespaces/{namespace}/pods/elsewhere")["spec"].get(
                    "nodeName"
                )
                == second
            ),
            120,
            "elsewhere bound once the plugin allows it",
        )
        removed = kschedctl("remove", name, "--force")
        assert removed.returncode == 0, removed.stderr
        wait_for(lambda: not _leftovers(cluster, namespace, name), 120, "nothing left")

        # -- the deployment form, rolled by a changed plugin file ---------------------------
        deployed = kschedctl("deploy", str(ws), "--as-deployment", "--timeout", "360")
        assert deployed.returncode == 0, deployed.stderr
        [before] = _scheduler_pods(cluster, namespace, name)
        assert set(_place(cluster, namespace, name, ["c-0", "c-1"]).values()) == {second}
        _workspace(ws, name, namespace, first)
        redeployed = kschedctl("deploy", str(ws), "--as-deployment", "--timeout", "360")
        assert redeployed.returncode == 0, redeployed.stderr
        wait_for(
            lambda: (
                [p["metadata"]["uid"] for p in _scheduler_pods(cluster, namespace, name)]
                not in ([], [before["metadata"]["uid"]])
            ),
            120,
            "the Deployment's pods rolled",
        )
        hashes = {
            p["metadata"]["annotations"][CONFIG_HASH]
            for p in _scheduler_pods(cluster, namespace, name)
        }
        assert before["metadata"]["annotations"][CONFIG_HASH] not in hashes
        assert set(_place(cluster, namespace, name, ["d-0", "d-1"]).values()) == {first}
    finally:
        removed = kschedctl("remove", name, "--force")
        assert removed.returncode == 0, removed.stderr
    wait_for(lambda: not _leftovers(cluster, namespace, name), 120, "nothing left")


def test_deploy_builtin_with_a_plugin_as_service_and_why_reads_its_files(
    lab: Lab, cluster: Cluster, namespace: str, tmp_path: Path
) -> None:
    """The service form installs the plugin beside its config on the host (the lab's); the
    scheduler publishes the files' hash on its Lease; `why` runs no plugin by itself but
    names the installed file (``--plugin PATH``) because it hashes to that, and says why it
    offers none once the file changed."""
    kschedctl = _runner(lab, tmp_path)
    name = f"plugsvc-{uuid.uuid4().hex[:5]}"
    nodes = sorted(n["metadata"]["name"] for n in cluster.list("/api/v1/nodes"))
    first, second = nodes[0], nodes[1]
    ws = _workspace(tmp_path / name, name, namespace, first)
    try:
        deployed = kschedctl("deploy", str(ws), "--as-service", "--timeout", "360")
        assert deployed.returncode == 0, deployed.stderr
        [installed] = list((lab.dir / "host").rglob(f"{name}-plugins/only_node.py"))
        assert installed.read_text().startswith(PLUGIN.format(target=first))
        assert set(_place(cluster, namespace, name, ["s-0", "s-1"]).values()) == {first}

        found, withheld = _refused_elsewhere(cluster, kschedctl, namespace, name, first, second)
        assert withheld["pluginsNotRun"]["runWith"] == f"--plugin {installed}"
        assert found["plugins"]["plugins"] == ["only_node"]
        assert not any(f["code"] == "plugins-differ" for f in found["findings"]), found
        table = kschedctl("why", "elsewhere", "-n", namespace, "--plugin", str(installed))
        assert f"only {first} is allowed" in table.stdout, table.stdout

        # Changed on the host since the scheduler loaded it: `why` offers no flag, and says.
        installed.write_text("# edited by hand\n" + installed.read_text())
        why = kschedctl("why", "elsewhere", "-n", namespace, "-o", "json")
        # The built-in filters pass a node, the plugins decide: no verdict, exit 6.
        assert why.returncode == 6, why.stderr
        said = json.loads(why.stdout)
        assert said["schedulable"] is None
        assert said["pluginsNotRun"]["runWith"] is None
        assert "differ from the ones it loaded" in said["pluginsNotRun"]["note"]
        [unrun] = [f for f in said["findings"] if f["code"] == "plugins-not-run"]
        assert "[only_node.py] (its Lease, sha256:" in unrun["message"], unrun
        assert "--plugin FILE" in unrun["fix"]

        removed = kschedctl("remove", name, "--force")
        assert removed.returncode == 0, removed.stderr
        wait_for(lambda: not _leftovers(cluster, namespace, name), 120, "nothing left")
        assert not installed.exists() and not installed.parent.exists()
        assert not list((lab.dir / "host").rglob(f"{name}.service"))
    finally:
        kschedctl("remove", name, "--force")  # after a failure: whatever is left
