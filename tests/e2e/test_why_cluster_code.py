"""Issue 22, examples 3 and 4, on the session lab: `why` must not run code a namespace editor
put in the cluster, in the admin's process.

The editor is a ServiceAccount bound to the built-in ``edit`` ClusterRole in one namespace and
nothing else; every object of the attack is created or changed with its token. The plugin it
plants writes a marker file holding the names of the environment it ran in (``KUBECONFIG``
among them): the proof is that the marker does not exist after the admin's `why`. Then the
opt-in: ``--run-cluster-plugins NS/NAME-config@sha256:HEX`` with another hash refuses (exit 3,
the actual hash shown, nothing run); with the hash of what is there it runs exactly that, and
says so on stderr.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import yaml
from e2e_helpers import pod_manifest, token_kubeconfig
from test_builtin_plugin_deploy import _failed_note, _runner, _scheduler_pods, _workspace

from kschedctl.kubeclient.client import Cluster
from kschedctl.lab.cluster import Lab
from kschedctl.render.builtin import POLICY_FILE, bundle_hash
from kschedctl.render.forms import render
from kschedctl.spec import load_spec

CONFIG_HASH = "kschedctl.io/config-hash"
PLANTED = """\
import json
import os

with open({marker!r}, "w") as out:
    json.dump(sorted(os.environ), out)


def filter(pod, node, ctx):
    return None
"""


def _editor(lab: Lab, cluster: Cluster, namespace: str, tmp_path: Path) -> Cluster:
    """A client for a ServiceAccount with the built-in ``edit`` role in ``namespace`` only."""
    cluster.create(
        f"/api/v1/namespaces/{namespace}/serviceaccounts", {"metadata": {"name": "editor"}}
    )
    cluster.create(
        f"/apis/rbac.authorization.k8s.io/v1/namespaces/{namespace}/rolebindings",
        {"metadata": {"name": "editor"},
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                     "name": "edit"},
         "subjects": [{"kind": "ServiceAccount", "name": "editor", "namespace": namespace}]},
    )  # fmt: skip
    path = tmp_path / "editor.kubeconfig"
    token_kubeconfig(lab, cluster, namespace, "editor", path)
    return Cluster.connect(str(path))


def _plugins_not_run(why: Any) -> dict[str, Any]:
    """The plugins a `why -o json` of one pod did not run; its verdict withheld (exit 6)."""
    assert why.returncode == 6, why.stderr
    said: dict[str, Any] = json.loads(why.stdout)
    assert said["schedulable"] is None, said["findings"]
    assert said["plugins"] is None
    return dict(said["pluginsNotRun"])


def test_example_3_an_editor_changes_the_configmap_and_the_pod_hash(
    lab: Lab, cluster: Cluster, namespace: str, tmp_path: Path
) -> None:
    """The admin deployed a kschedctl scheduler with a plugin in the editor's namespace. The
    editor puts her code in its ConfigMap and the matching hash on its pod; the admin runs
    `kschedctl why stuck -n team-b`."""
    kschedctl = _runner(lab, tmp_path)
    name = f"racks-{uuid.uuid4().hex[:5]}"
    nodes = sorted(n["metadata"]["name"] for n in cluster.list("/api/v1/nodes"))
    first, second = nodes[0], nodes[1]
    ws = _workspace(tmp_path / name, name, namespace, first)
    marker = tmp_path / "ran-as-the-admin.json"
    try:
        deployed = kschedctl("deploy", str(ws), "--as-pod", "--timeout", "360")
        assert deployed.returncode == 0, deployed.stderr
        stuck = pod_manifest("stuck", schedulerName=name)
        stuck["spec"]["nodeSelector"] = {"kubernetes.io/hostname": second}
        cluster.create(f"/api/v1/namespaces/{namespace}/pods", stuck)
        assert f"only {first} is allowed" in _failed_note(cluster, namespace, "stuck")

        editor = _editor(lab, cluster, namespace, tmp_path)
        path = f"/api/v1/namespaces/{namespace}/configmaps/{name}-config"
        configmap = editor.get(path)
        honest = bundle_hash("", [("only_node.py", configmap["data"]["plugin-only_node.py"])])
        planted = PLANTED.format(marker=str(marker))
        editor.patch(path, {"data": {"plugin-only_node.py": planted}})
        config = configmap["data"][POLICY_FILE]
        [pod] = _scheduler_pods(cluster, namespace, name)
        editor.patch(
            f"/api/v1/namespaces/{namespace}/pods/{pod['metadata']['name']}",
            {"metadata": {"annotations": {
                CONFIG_HASH: bundle_hash(config, [("only_node.py", planted)])}}},
        )  # fmt: skip
        editor.close()

        # The admin asks. The built-in filters pass `second`: no verdict, the plugin listed.
        asked = kschedctl("why", "stuck", "-n", namespace, "-o", "json")
        assert not marker.exists(), f"the editor's code ran as the admin: {marker.read_text()}"
        unrun = _plugins_not_run(asked)
        actual = bundle_hash("", [("only_node.py", planted)])
        flag = f"{namespace}/{name}-config@sha256:{actual}"
        assert unrun == {
            "scheduler": name, "source": f"ConfigMap {namespace}/{name}-config",
            "files": ["only_node.py"], "sha256": actual,
            "runWith": f"--run-cluster-plugins {flag}", "note": None,
        }  # fmt: skip
        table = kschedctl("why", "stuck", "-n", namespace)
        assert table.returncode == 6 and not marker.exists()
        assert "passes the built-in filters; plugins not run" in table.stdout

        # The hash the admin approved before the edit: refused, nothing run.
        refused = kschedctl(
            "why", "stuck", "-n", namespace,
            "--run-cluster-plugins", f"{namespace}/{name}-config@sha256:{honest}",
        )  # fmt: skip
        assert refused.returncode == 3, refused.stderr
        assert f"hash to sha256:{actual}, not to the sha256:{honest} you named" in (refused.stderr)
        assert refused.stdout == "" and not marker.exists()

        # Named by the hash of what is there: exactly that runs, and stderr says so.
        opted = kschedctl("why", "stuck", "-n", namespace, "--run-cluster-plugins", flag)
        assert opted.returncode in (0, 6), opted.stderr
        assert f"running the Python plugins [only_node.py] of ConfigMap {namespace}/" in (
            opted.stderr
        )
        assert "KUBECONFIG" in json.loads(marker.read_text())
    finally:
        removed = kschedctl("remove", name, "--force")
        assert removed.returncode == 0, removed.stderr


def test_example_4_objects_in_an_unrelated_namespace_and_a_pending_pod_are_enough(
    lab: Lab, cluster: Cluster, namespace: str, tmp_path: Path
) -> None:
    """In a namespace of her own (aab-dev), an editor creates the ConfigMap foo-config, a
    Pending bare pod labelled as scheduler foo's with the matching hash, the Lease it names
    (with a fallback policy, as kschedctl's scheduler publishes), and a pod asking for foo.
    The admin runs `kschedctl why --all -A`."""
    kschedctl = _runner(lab, tmp_path)
    foo = f"foo-{uuid.uuid4().hex[:5]}"
    marker = tmp_path / "ran-as-the-admin.json"
    ws = _workspace(tmp_path / foo, foo, namespace, "any")
    (ws / "plugins" / "only_node.py").write_text(PLANTED.format(marker=str(marker)))
    objects = {d["kind"]: d for d in yaml.safe_load_all(render(load_spec(ws / "scheduler.yaml"),
                                                                  "pod")) if d}  # fmt: skip
    configmap, pod = objects["ConfigMap"], objects["Pod"]
    pod["spec"]["nodeSelector"] = {"kschedctl.io/no-such-node": "true"}  # stays Pending
    pod["spec"].pop("serviceAccountName", None)  # the editor has no ServiceAccount foo
    lease = {
        "metadata": {"name": foo, "annotations": {"kschedctl.io/fallback-policy": json.dumps(
            {"apiVersion": "kschedctl.io/v1alpha1", "kind": "FallbackPolicy", "fallbacks": []})}},
        "spec": {"holderIdentity": f"{foo}_x", "leaseDurationSeconds": 15},
    }  # fmt: skip

    editor = _editor(lab, cluster, namespace, tmp_path)
    base = f"/api/v1/namespaces/{namespace}"
    editor.create(f"{base}/configmaps", configmap)
    editor.create(f"{base}/pods", pod)
    editor.create(f"/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases", lease)
    editor.create(f"{base}/pods", pod_manifest("victim", schedulerName=foo))
    editor.close()

    everything = kschedctl("why", "--all", "-A", "--pods")
    assert not marker.exists(), f"the editor's code ran as the admin: {marker.read_text()}"
    assert everything.returncode == 6, everything.stderr
    assert f"{namespace}/victim" in everything.stdout
    listed = kschedctl("why", "--all", "-A", "-o", "json")
    assert not marker.exists()
    [victim] = [
        d for d in json.loads(listed.stdout)["items"]
        if d["pod"] == {"namespace": namespace, "name": "victim", "schedulerName": foo}
    ]  # fmt: skip
    assert victim["schedulable"] is False  # its scheduler is not Ready: blocked regardless
    # Identity, not names: kschedctl never deployed foo, so the pod labelled as foo's is an
    # impostor, named as such, and nothing of it (its ConfigMap, its plugins) is foo's.
    assert victim["pluginsNotRun"] is None
    assert any(
        f["code"] == "scheduler-impostor" and f"namespace {namespace}" in f["message"]
        for f in victim["findings"]
    ), victim["findings"]
