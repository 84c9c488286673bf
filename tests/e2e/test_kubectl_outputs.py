"""kubectl's output habits against the real lab: -o name, -o jsonpath, -o custom-columns,
why -o json and -l/--field-selector (the API server judges -l for `why --all`)."""

from __future__ import annotations

import json
from pathlib import Path

from e2e_helpers import run, wait_for

from kschedctl.kubeclient.client import Cluster
from kschedctl.lab.cluster import Lab


def _pending_pod(cluster: Cluster, namespace: str, name: str, app: str) -> None:
    cluster.create(f"/api/v1/namespaces/{namespace}/pods", {
        "metadata": {"name": name, "labels": {"app": app}},
        "spec": {"schedulerName": "nobody-serves-this",
                 "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10"}]},
    })  # fmt: skip


def test_list_name_jsonpath_and_selectors(lab: Lab, tmp_path: Path) -> None:
    listed = run(lab, "list", "-o", "json", cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    data = json.loads(listed.stdout)
    assert data["kind"] == "List"
    names = [item["metadata"]["name"] for item in data["items"]]
    assert "default-scheduler" in names

    by_name = run(lab, "list", "-o", "name", cwd=tmp_path)
    assert by_name.stdout.splitlines() == [f"scheduler/{n}" for n in names]

    template = '{range .items[*]}{.metadata.name}{"\\t"}{.form}{"\\n"}{end}'
    by_template = run(lab, "list", "-o", f"jsonpath={template}", cwd=tmp_path)
    rows = [line.split("\t") for line in by_template.stdout.splitlines()]
    assert [r[0] for r in rows] == names
    assert (
        dict(rows)["default-scheduler"] == data["items"][names.index("default-scheduler")]["form"]
    )

    one = run(lab, "list", "--field-selector", "metadata.name=default-scheduler", "-o", "name",
              cwd=tmp_path)  # fmt: skip
    assert one.stdout == "scheduler/default-scheduler\n"
    none = run(lab, "list", "-l", "app.kubernetes.io/instance=no-such-scheduler", "-o", "name",
               cwd=tmp_path)  # fmt: skip
    assert none.returncode == 0 and none.stdout == ""


def test_status_custom_columns(lab: Lab, tmp_path: Path) -> None:
    spec = "NAME:.name,FORM:.scheduler.form,HEALTHY:.scheduler.healthy,SERVER:.version.server"
    result = run(lab, "status", "default-scheduler", "-o", f"custom-columns={spec}", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    header, row = result.stdout.splitlines()
    assert header.split() == ["NAME", "FORM", "HEALTHY", "SERVER"]
    assert row.split()[0] == "default-scheduler" and row.split()[3].startswith("v1.")
    bare = run(lab, "status", "default-scheduler", "-o", f"custom-columns={spec}", "--no-headers",
               cwd=tmp_path)  # fmt: skip
    # without the header, columns are as wide as their cells only (kubectl's tabwriter)
    assert [line.split() for line in bare.stdout.splitlines()] == [row.split()]


def test_why_json_and_label_selector(
    lab: Lab, cluster: Cluster, namespace: str, tmp_path: Path
) -> None:
    _pending_pod(cluster, namespace, "web-1", "web")
    _pending_pod(cluster, namespace, "db-1", "db")
    wait_for(
        lambda: len(cluster.list(f"/api/v1/namespaces/{namespace}/pods")) == 2, 30, "the two pods"
    )
    one = run(lab, "why", "web-1", "-n", namespace, "-o", "json", cwd=tmp_path)
    assert one.returncode == 6, one.stderr  # nothing serves its scheduler: it cannot run
    diagnosis = json.loads(one.stdout)
    assert diagnosis["pod"]["name"] == "web-1" and diagnosis["schedulable"] is False
    assert diagnosis["scheduler"]["name"] == "nobody-serves-this"

    selected = run(
        lab, "why", "--all", "-n", namespace, "-l", "app=web", "-o", "name", cwd=tmp_path
    )
    assert selected.stdout == "pod/web-1\n", selected.stderr
    every = run(lab, "why", "--all", "-n", namespace, "-l", "app in (web,db)", "-o",
                "jsonpath={.items[*].pod.name}", cwd=tmp_path)  # fmt: skip
    assert sorted(every.stdout.split()) == ["db-1", "web-1"]
    by_field = run(lab, "why", "--all", "-n", namespace, "--field-selector", "metadata.name=db-1",
                   "-o", "name", cwd=tmp_path)  # fmt: skip
    assert by_field.stdout == "pod/db-1\n", by_field.stderr
