"""Python plugins in kschedctl's scheduler, on the session lab.

`kschedctl scheduler run` (a subprocess, stopped by pid) runs the two example plugins and a
plugin that raises for annotated pods. The proofs: every pod asking for a rack lands on a
node of that rack, and one asking for a rack no node has gets the plugin's reason in its
FailedScheduling event; every replica of an app goes where the score plugin's own count of
same-app pods is lowest (binpack alone would stack them); a raising plugin fails only its
pod, with an event naming the plugin, and the scheduler keeps binding; `kschedctl why
--plugin` shows the plugin's verdicts and its summary is the scheduler's exact message.

The session lab's nodes get a ``rack`` label for the duration of the module only.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from e2e_helpers import pod_events, pod_manifest, stop, wait_for

from kschedctl.kubeclient.client import Cluster
from kschedctl.lab.cluster import Lab
from kschedctl.lab.processes import proxy_free_environment
from kschedctl.model.filters import NodeInfoSnapshot, feasible_nodes
from kschedctl.model.scheduling.pluginload import load_plugin
from kschedctl.model.scheduling.plugins import PluginContext, frozen

ROOT = Path(__file__).resolve().parents[2]
RACK_MATCH = ROOT / "examples" / "plugins" / "rack_match.py"
FEWEST_SAME_APP = ROOT / "examples" / "plugins" / "fewest_same_app.py"
RACK = "example.com/rack"
EXPLODES = """\
NAME = "explodes"


def filter(pod, node, ctx):
    if "example.com/explode" in (pod["metadata"].get("annotations") or {}):
        raise RuntimeError("exploded on purpose")
    return None
"""


@pytest.fixture(scope="module")
def racks(lab: Lab) -> Iterator[dict[str, str | None]]:
    """Node name -> its rack label: the first two nodes r1, the third r2, the rest none."""
    cluster = Cluster.connect(str(lab.kubeconfig))
    names = sorted(n["metadata"]["name"] for n in cluster.list("/api/v1/nodes"))
    assigned: dict[str, str | None] = {
        name: "r1" if i < 2 else "r2" if i == 2 else None for i, name in enumerate(names)
    }
    try:
        for name, rack in assigned.items():
            if rack:
                cluster.patch(f"/api/v1/nodes/{name}", {"metadata": {"labels": {"rack": rack}}})
        yield assigned
    finally:
        for name, rack in assigned.items():
            if rack:
                cluster.patch(f"/api/v1/nodes/{name}", {"metadata": {"labels": {"rack": None}}})
        cluster.close()


class Plugged:
    """The running scheduler: its name, the raising plugin's file, its log."""

    def __init__(self, name: str, explodes: Path, log: Path) -> None:
        self.name, self.explodes, self.log = name, explodes, log

    def text(self) -> str:
        return self.log.read_text(errors="replace")

    def metrics(self) -> str:
        found = re.search(r"serving on [\d.]+:(\d+)\)", self.text())
        assert found, self.text()
        with urllib.request.urlopen(f"http://127.0.0.1:{found.group(1)}/metrics", timeout=5) as r:
            return str(r.read().decode())


@pytest.fixture()
def plugged(lab: Lab, racks: dict[str, str | None], tmp_path: Path) -> Iterator[Plugged]:
    """`kschedctl scheduler run` with the two examples and the raising plugin (binpack)."""
    name = f"plugged-{uuid.uuid4().hex[:6]}"
    explodes = tmp_path / "explodes.py"
    explodes.write_text(EXPLODES)
    log = tmp_path / "scheduler.log"
    argv = [sys.executable, "-m", "kschedctl", "scheduler", "run", f"--name={name}",
            f"--kubeconfig={lab.kubeconfig}", "--metrics-port=0", "--metrics-address=127.0.0.1",
            "--pod-initial-backoff=0.5", "--pod-max-backoff=2", "--strategy=binpack",
            f"--plugin={RACK_MATCH}", f"--plugin={FEWEST_SAME_APP}", f"--plugin={explodes}"]  # fmt: skip
    with open(log, "ab") as out:
        proc = subprocess.Popen(
            argv, stdout=out, stderr=subprocess.STDOUT, env=proxy_free_environment(), cwd=ROOT
        )

    running = Plugged(name, explodes, log)
    try:
        wait_for(
            lambda: "starting (identity" in running.text() or proc.poll() is not None, 60, "start"
        )
        assert proc.poll() is None, running.text()
        yield running
    finally:
        stop(proc)


def create(cluster: Cluster, namespace: str, name: str, scheduler: str, *,
           labels: dict[str, str] | None = None,
           annotations: dict[str, str] | None = None) -> dict[str, Any]:  # fmt: skip
    body = pod_manifest(name, schedulerName=scheduler)
    body["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "50m", "memory": "32Mi"}}
    if labels:
        body["metadata"]["labels"] = labels
    if annotations:
        body["metadata"]["annotations"] = annotations
    return cluster.create(f"/api/v1/namespaces/{namespace}/pods", body)


def bound(cluster: Cluster, namespace: str, name: str) -> str:
    path = f"/api/v1/namespaces/{namespace}/pods/{name}"
    return str(wait_for(lambda: cluster.get(path)["spec"].get("nodeName"), 60, f"{name} bound"))


def failed_note(cluster: Cluster, namespace: str, name: str, scheduler: str) -> str:
    def note() -> str | None:
        for e in pod_events(cluster, namespace, name):
            if e.get("reason") == "FailedScheduling" and e.get("reportingController") == scheduler:
                return str(e.get("note"))
        return None

    return str(wait_for(note, 60, f"FailedScheduling for {name}"))


def why(lab: Lab, namespace: str, pod: str, *plugins: Path, json_out: bool = True) -> Any:
    argv = [sys.executable, "-m", "kschedctl", "why", pod, "-n", namespace,
            f"--kubeconfig={lab.kubeconfig}", *(f"--plugin={p}" for p in plugins)]  # fmt: skip
    if json_out:
        argv += ["-o", "json"]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120,
                          env=proxy_free_environment(), cwd=ROOT)  # fmt: skip
    assert done.returncode in (0, 6), done.stderr
    return json.loads(done.stdout) if json_out else done.stdout


def test_plugins_place_pods_as_written_contain_errors_and_why_agrees(
    lab: Lab,
    cluster: Cluster,
    namespace: str,
    racks: dict[str, str | None],
    plugged: Plugged,
    kubectl: Callable[..., subprocess.CompletedProcess[str]],
) -> None:
    name = plugged.name
    plugins = (RACK_MATCH, FEWEST_SAME_APP, plugged.explodes)

    # The filter plugin: each pod only on a node of its rack.
    asked = {f"rack-{i}": "r1" if i % 3 else "r2" for i in range(6)}
    for pod, rack in asked.items():
        create(cluster, namespace, pod, name, annotations={RACK: rack})
    for pod, rack in asked.items():
        node = bound(cluster, namespace, pod)
        assert racks[node] == rack, (pod, rack, node, racks)
    create(cluster, namespace, "no-such-rack", name, annotations={RACK: "r9"})
    note = failed_note(cluster, namespace, "no-such-rack", name)
    # The plugin's reject is Unschedulable, so preemption runs: nothing has a lower priority.
    assert note == (
        f'0/{len(racks)} nodes are available: {len(racks)} node(s) not in rack "r9" '
        f"(annotation {RACK}). no new claims to deallocate, preemption: 0/{len(racks)} nodes "
        "are available: "
        f"{len(racks)} No preemption victims found for incoming pod."
    )

    # The score plugin: each replica where its app has the fewest pods, by the plugin's own
    # count over the cluster as it is when the pod is created.
    scorer = load_plugin(str(FEWEST_SAME_APP))
    same_app_pods = scorer.score.__globals__["same_app_pods"]  # type: ignore[union-attr]
    for i in range(2 * len(racks) + 1):
        pod = f"web-{i}"
        body = pod_manifest(pod, schedulerName=name)
        body["metadata"].update(namespace=namespace, labels={"app": "web"})
        snap = NodeInfoSnapshot(cluster.list("/api/v1/nodes"), cluster.list("/api/v1/pods"))
        ctx = PluginContext(snap, reslim=True)
        counts = {n: same_app_pods(frozen(body), n, ctx) for n in feasible_nodes(body, snap).names}
        create(cluster, namespace, pod, name, labels={"app": "web"})
        node = bound(cluster, namespace, pod)
        assert counts[node] == min(counts.values()), (pod, node, counts)

    # A plugin that raises: that pod fails naming the plugin, the scheduler keeps binding.
    create(cluster, namespace, "boom", name, annotations={"example.com/explode": "yes"})
    assert failed_note(cluster, namespace, "boom", name) == (
        'running "explodes" filter plugin: RuntimeError: exploded on purpose'
    )
    create(cluster, namespace, "after-boom", name)
    bound(cluster, namespace, "after-boom")
    metrics = plugged.metrics()
    counted = re.search(
        r'kschedctl_scheduler_plugin_errors_total\{plugin="explodes"\} (\d+)', metrics
    )
    assert counted and int(counted.group(1)) >= 1, metrics
    assert 'running "explodes" filter plugin' in plugged.text()

    # why --plugin: the plugin's verdict per node, and the scheduler's exact message.
    found = why(lab, namespace, "no-such-rack", *plugins)
    assert found["summary"] == note
    assert found["schedulable"] is False
    verdicts = {n["name"]: n for n in found["plugins"]["nodes"]}
    assert set(verdicts) == set(racks)
    for node in verdicts.values():
        assert node["filters"][0] == {"plugin": "rack-match", "fits": False, "score": None,
                                      "reason": f'node(s) not in rack "r9" (annotation {RACK})'}  # fmt: skip
    assert {n["name"]: n["reasons"][0]["plugin"] for n in found["nodes"]} == dict.fromkeys(
        racks, "rack-match"
    )
    assert why(lab, namespace, "boom", *plugins)["summary"] == (
        'running "explodes" filter plugin: RuntimeError: exploded on purpose'
    )
    # Without the plugins, why runs none, lists what the scheduler runs, and withholds the
    # verdict the plugins decide (the built-in filters pass every node).
    bare = why(lab, namespace, "no-such-rack")
    assert bare["schedulable"] is None
    [unrun] = [f for f in bare["findings"] if f["code"] == "plugins-not-run"]
    assert "rack_match.py, fewest_same_app.py, explodes.py" in unrun["message"], unrun
    assert "--plugin FILE" in unrun["fix"]
    assert not any(f["code"] == "plugins-differ" for f in bare["findings"])

    # The transcript: the plugin's reason in `kubectl describe pod` and in `kschedctl why`.
    described = kubectl("describe", "pod", "no-such-rack", "-n", namespace).stdout
    assert f'not in rack "r9" (annotation {RACK})' in described
    table = why(lab, namespace, "no-such-rack", *plugins, json_out=False)
    assert note in table and "rack-match" in table
    events = described[described.index("Events:") :]
    print(f"\n$ kubectl describe pod no-such-rack -n {namespace}  # Events\n{events}")
    print(f"$ kschedctl why no-such-rack -n {namespace} --plugin {RACK_MATCH.relative_to(ROOT)} "
          f"--plugin {FEWEST_SAME_APP.relative_to(ROOT)} --plugin explodes.py\n{table}")  # fmt: skip
