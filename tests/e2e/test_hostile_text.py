"""Issue 22, example 5: what the cluster says reaches the terminal escaped, on the session lab.

A namespace editor's text goes where kschedctl reads it: an event note, a profile name in a
deployed scheduler's ConfigMap, and the scheduler's own log (a flag that its Deployment's
editor added, which kube-scheduler echoes raw when it refuses it). Then `list`, `events`,
`status`, `why` and `logs` print no escape sequence, no C0/C1 control and no bidi override:
each hostile text shows up escaped, as kubectl shows it (ESC as ``^[``).
"""

from __future__ import annotations

import subprocess
import unicodedata
from datetime import datetime, timezone
from pathlib import Path

import yaml
from e2e_helpers import pod_manifest, run, wait_for

from kschedctl.kubeclient.client import Cluster
from kschedctl.lab.cluster import Lab

OSC52 = "\x1b]52;c;aGVsbG8h\x07"  # write the clipboard (no "=": pflag cuts a flag there)
CLEAR = "\x1b[2J\x1b[H"
LINK = "\x1b]8;;http://evil.example\x1b\\click\x1b]8;;\x1b\\"  # a hidden link
NOTE = f"0/4 nodes{CLEAR}{OSC52}\x9b31m\r\u202efake {LINK} [link=javascript:alert(1)]x[/link]"
PROFILE = f"evil{OSC52}\u202e{CLEAR}"
FLAG = f"--x{OSC52}{CLEAR}=1"  # kube-scheduler: "Error: unknown flag: --x…"
REFUSED = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})
NAME = "hostile-text"


def inert(result: subprocess.CompletedProcess[str], keep: str = "\n") -> str:
    """stdout + stderr of a command, checked: nothing a terminal acts on but ``keep``."""
    text = result.stdout + result.stderr
    for at, c in enumerate(text):
        if c not in keep and unicodedata.category(c) in REFUSED:
            raise AssertionError(f"{result.args[3:]}: raw {c!r} in …{text[at - 80 : at + 80]!r}…")
    return text


def _objects(cluster: Cluster, kind: str) -> list[dict[str, object]]:
    group = "/apis/apps/v1" if kind == "deployments" else "/api/v1"
    return cluster.list(
        f"{group}/namespaces/kube-system/{kind}", labelSelector=f"app.kubernetes.io/instance={NAME}"
    )


def _crashed(cluster: Cluster) -> bool:
    pods = cluster.list(
        "/api/v1/namespaces/kube-system/pods", labelSelector=f"app.kubernetes.io/instance={NAME}"
    )
    return any(
        (s.get("restartCount") or 0) >= 1
        for p in pods
        if FLAG in p["spec"]["containers"][0].get("args", [])
        for s in (p.get("status") or {}).get("containerStatuses") or []
    )


def test_what_the_cluster_says_is_printed_escaped(
    lab: Lab, cluster: Cluster, namespace: str, tmp_path: Path
) -> None:
    deployed = run(lab, "deploy", NAME, "--as-deployment", cwd=tmp_path)
    assert deployed.returncode == 0, deployed.stderr
    try:
        # A profile name in its ConfigMap (read by discovery), an escape in its arguments.
        (cm,) = _objects(cluster, "configmaps")
        meta = cm["metadata"]
        assert isinstance(meta, dict) and isinstance(cm["data"], dict)
        key, text = next(iter(cm["data"].items()))
        config = yaml.safe_load(text)
        config["profiles"].append({"schedulerName": PROFILE})
        cluster.patch(
            f"/api/v1/namespaces/kube-system/configmaps/{meta['name']}",
            {"data": {key: yaml.safe_dump(config, allow_unicode=True)}},
        )
        (dep,) = _objects(cluster, "deployments")
        spec = dep["spec"]
        assert isinstance(spec, dict)
        container = spec["template"]["spec"]["containers"][0]
        cluster.patch(
            f"/apis/apps/v1/namespaces/kube-system/deployments/{NAME}",
            {"spec": {"template": {"spec": {"containers": [
                {"name": container["name"], "args": [*(container.get("args") or []), FLAG]}
            ]}}}},
            merge=False,  # strategic: the container is merged by name
        )  # fmt: skip
        wait_for(lambda: _crashed(cluster), 180, "the replica refusing the flag to restart")

        # An event note, about a pod that waits for that scheduler.
        cluster.create(
            f"/api/v1/namespaces/{namespace}/pods",
            pod_manifest("victim", schedulerName=NAME, nodeSelector={"no-such": "label"}),
        )
        now = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        cluster.create(
            f"/api/v1/namespaces/{namespace}/events",
            {"metadata": {"name": "victim.hostile"}, "type": "Warning",
             "reason": "FailedScheduling", "message": NOTE, "count": 1,
             "firstTimestamp": now, "lastTimestamp": now,
             "source": {"component": NAME}, "reportingComponent": NAME,
             "involvedObject": {"kind": "Pod", "namespace": namespace, "name": "victim",
                                "apiVersion": "v1"}},
        )  # fmt: skip

        listed = inert(run(lab, "list", "-o", "wide", cwd=tmp_path))
        assert "evil^[]52;c;aGVsbG8h\\x07\\u202e^[[2J^[[H" in listed

        events = inert(run(lab, "events", NAME, "-n", namespace, cwd=tmp_path))
        assert "0/4 nodes^[[2J^[[H^[]52;c;aGVsbG8h\\x07\\x9b31m\\r\\u202efake ^[]8;;" in events
        assert "[link=javascript:alert(1)]x[/link]" in events

        as_yaml = run(lab, "events", NAME, "-n", namespace, "-o", "yaml", cwd=tmp_path)
        inert(as_yaml)
        notes = [e["message"] for e in yaml.safe_load(as_yaml.stdout)["items"]]
        assert NOTE in notes  # exact data, written escaped

        logs = inert(run(lab, "logs", NAME, cwd=tmp_path), "\n\t")  # Go indents with tabs
        assert "unknown flag: --x^[]52;c;aGVsbG8h\\x07^[[2J^[[H" in logs

        status = inert(run(lab, "status", NAME, "--no-metrics", cwd=tmp_path))
        assert "--x^[]52;c;aGVsbG8h\\x07^[[2J^[[H" in status  # the crashed container's log
        # the API server refuses the name as a label value: an error, escaped
        inert(run(lab, "status", PROFILE, "--no-metrics", cwd=tmp_path))

        why = run(lab, "why", "victim", "-n", namespace, cwd=tmp_path)
        assert why.returncode == 6, why.stderr
        assert "its log said: Error: unknown flag: --x^[]52;c;aGVsbG8h\\x07^[[2J" in inert(why)
        inert(run(lab, "why", "--all", "-n", namespace, "--pods", cwd=tmp_path))
    finally:
        removed = run(lab, "remove", NAME, "--force", cwd=tmp_path)
        assert removed.returncode == 0, removed.stderr
