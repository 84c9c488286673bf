"""Every -o value on every command that prints data, --no-headers, -l/--field-selector and
list -w, through the real CLI. Cluster commands run on faked use cases (the e2e tests in
tests/e2e/test_kubectl_outputs.py run them against the lab)."""

from __future__ import annotations

import contextlib
import json
from types import SimpleNamespace
from typing import Any

import pytest
import yaml
from conftest import Run

from kschedctl.model.filters.selectors import label_selector
from kschedctl.observe.diagnosis import Diagnosis
from kschedctl.observe.events import Event
from kschedctl.observe.routing import Route
from kschedctl.observe.schedulers import Lease, Scheduler

# -- render (offline) -------------------------------------------------------------------------

DEPLOYMENT_NAMES = [
    "serviceaccount/s1",
    "clusterrole.rbac.authorization.k8s.io/s1-scheduler",
    "clusterrolebinding.rbac.authorization.k8s.io/s1-scheduler",
    "rolebinding.rbac.authorization.k8s.io/s1-extension-apiserver-authentication-reader",
    "role.rbac.authorization.k8s.io/s1-leader-election",
    "rolebinding.rbac.authorization.k8s.io/s1-leader-election",
    "serviceaccount/s1-metrics-reader",
    "clusterrole.rbac.authorization.k8s.io/s1-metrics-reader",
    "clusterrolebinding.rbac.authorization.k8s.io/s1-metrics-reader-status",
    "configmap/s1-config",
    "deployment.apps/s1",
]


def test_render_default_and_yaml_are_the_rendered_documents(run: Run) -> None:
    plain = run("render", "s1", "--as", "deployment")
    as_yaml = run("render", "s1", "--as", "deployment", "-o", "yaml")
    assert plain.exit_code == as_yaml.exit_code == 0
    assert as_yaml.stdout == plain.stdout and plain.stdout.startswith("# Deployment bundle")


def test_render_json_is_a_list_of_the_documents(run: Run) -> None:
    result = run("render", "s1", "--as", "deployment", "-o", "json")
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    plain = [d for d in yaml.safe_load_all(run("render", "s1", "--as", "deployment").stdout) if d]
    assert (data["apiVersion"], data["kind"]) == ("v1", "List")
    assert data["items"] == plain


def test_render_json_of_one_document_is_the_object(run: Run) -> None:
    data = json.loads(run("render", "s1", "--as", "example-pod", "-o", "json").stdout)
    assert data["kind"] == "Pod" and data["spec"]["schedulerName"] == "s1"


def test_render_name(run: Run) -> None:
    result = run("render", "s1", "--as", "deployment", "-o", "name")
    assert result.stdout.splitlines() == DEPLOYMENT_NAMES


def test_render_jsonpath(run: Run) -> None:
    template = '{range .items[*]}{.kind}/{.metadata.name}{"\\n"}{end}'
    result = run("render", "s1", "--as", "deployment", "-o", f"jsonpath={template}")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines()[-1] == "Deployment/s1"
    assert len(result.stdout.splitlines()) == len(DEPLOYMENT_NAMES)


def test_render_jsonpath_as_json(run: Run) -> None:
    result = run("render", "s1", "--as", "deployment", "-o", "jsonpath-as-json={.items[*].kind}")
    assert json.loads(result.stdout)[-1] == "Deployment"


def test_render_custom_columns_and_no_headers(run: Run) -> None:
    spec = "KIND:.kind,NAMESPACE:.metadata.namespace"
    result = run("render", "s1", "--as", "deployment", "-o", f"custom-columns={spec}")
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["KIND", "NAMESPACE"]
    assert lines[2].split() == ["ClusterRole", "<none>"]  # cluster-scoped: no namespace
    bare = run("render", "s1", "--as", "deployment", "-o", f"custom-columns={spec}", "--no-headers")
    assert bare.stdout.splitlines() == lines[1:]


def test_render_refuses_structured_output_of_a_systemd_unit(run: Run) -> None:
    result = run("render", "s1", "--as", "service", "-o", "json")
    assert result.exit_code == 2 and result.stdout == ""
    assert "--as service is not Kubernetes objects" in result.stderr


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("jsonpath={.items[*]", "unclosed action at"),
        ("custom-columns=NAME", "unexpected custom-columns spec: NAME"),
        ("table", "unknown output format 'table'"),
        ("wide", "unknown output format 'wide'"),
    ],
)
def test_render_bad_output_is_exit_2(run: Run, value: str, message: str) -> None:
    result = run("render", "s1", "--as", "deployment", "-o", value)
    assert result.exit_code == 2 and result.stdout == ""
    assert message in result.stderr and "Traceback" not in result.stderr


# -- list and status (faked cluster) ----------------------------------------------------------


def _schedulers() -> list[Scheduler]:
    return [
        Scheduler("default-scheduler", "static-pod", namespace="kube-system",
                  labels={"component": "kube-scheduler", "tier": "control-plane"},
                  lease=Lease("kube-system", "kube-scheduler", "cp_1", 1.0, 15), leader="cp"),
        Scheduler("gpu", "deployment", managed=True, namespace="kube-system", desired=1, ready=1,
                  labels={"app.kubernetes.io/managed-by": "kschedctl", "app.kubernetes.io/instance": "gpu"}),
        Scheduler("ghost", "none", served=False, pending=2),
    ]  # fmt: skip


@pytest.fixture
def cluster(monkeypatch: pytest.MonkeyPatch) -> None:
    """The cluster commands connect to nothing and list the schedulers above."""
    for module in ("inventory", "status", "why", "events"):
        monkeypatch.setattr(
            f"kschedctl.cli.{module}.connect", lambda *a: contextlib.nullcontext(object())
        )
    monkeypatch.setattr("kschedctl.ops.list.snapshot", lambda cluster: None)
    monkeypatch.setattr("kschedctl.ops.list.discover", lambda snap: _schedulers())
    monkeypatch.setattr("kschedctl.ops.list.live_routes", lambda cluster: [GPU_ROUTE])


# gpu's kschedctl routing (observe.routing.Route): list's ROUTING column
GPU_ROUTE = Route("gpu", "kschedctl-route-gpu", label_selector({"matchLabels": {"team": "ml"}}),
                  label_selector({}), None)  # fmt: skip


def test_list_shows_each_schedulers_routing(run: Run, cluster: None) -> None:
    lines = run("list").stdout.splitlines()
    assert lines[0].split()[-2:] == ["ROUTING", "HEALTH"]  # HEALTH stays the last word
    at = lines[0].index("ROUTING")  # a table's columns start where their headers do
    rows = {line.split()[0]: line[at:].split()[0] for line in lines[1:]}
    assert rows == {"default-scheduler": "-", "gpu": "ns:team=ml", "ghost": "-"}
    items = json.loads(run("list", "-o", "json").stdout)["items"]
    assert [item["routing"] for item in items] == [None, "ns:team=ml", None]


def test_list_json_is_a_kubectl_list(run: Run, cluster: None) -> None:
    data = json.loads(run("list", "-o", "json").stdout)
    assert (data["apiVersion"], data["kind"]) == ("v1", "List")
    first = data["items"][0]
    assert list(first)[:4] == ["kind", "metadata", "name", "form"]
    assert first["kind"] == "Scheduler"
    assert first["metadata"] == {"name": "default-scheduler", "namespace": "kube-system",
                                 "labels": {"component": "kube-scheduler", "tier": "control-plane"}}  # fmt: skip
    assert yaml.safe_load(run("list", "-o", "yaml").stdout) == data


def test_list_name(run: Run, cluster: None) -> None:
    result = run("list", "-o", "name")
    assert result.stdout == "scheduler/default-scheduler\nscheduler/gpu\nscheduler/ghost\n"


def test_list_jsonpath(run: Run, cluster: None) -> None:
    result = run("list", "-o", "jsonpath={.items[*].metadata.name}")
    assert result.stdout == "default-scheduler gpu ghost"  # no newline added, as kubectl
    filtered = run("list", "-o", 'jsonpath={.items[?(@.form=="deployment")].name}')
    assert filtered.stdout == "gpu"


def test_list_jsonpath_as_json(run: Run, cluster: None) -> None:
    result = run("list", "-o", "jsonpath-as-json={.items[*].served}")
    assert json.loads(result.stdout) == [True, True, False]


def test_list_custom_columns(run: Run, cluster: None) -> None:
    result = run("list", "-o", "custom-columns=NAME:.metadata.name,LEADER:.leader,READY:.ready")
    assert [line.split() for line in result.stdout.splitlines()] == [
        ["NAME", "LEADER", "READY"], ["default-scheduler", "cp", "<nil>"],
        ["gpu", "<nil>", "1"], ["ghost", "<nil>", "<nil>"],
    ]  # fmt: skip


@pytest.mark.parametrize("out", ["table", "wide"])
def test_list_no_headers(run: Run, cluster: None, out: str) -> None:
    with_headers = run("list", "-o", out).stdout.splitlines()
    without = run("list", "-o", out, "--no-headers").stdout.splitlines()
    assert with_headers[0].split()[0] == "NAME"
    assert [line.split()[0] for line in without] == ["default-scheduler", "gpu", "ghost"]


@pytest.mark.parametrize(
    ("args", "names"),
    [
        (["-l", "component=kube-scheduler"], ["default-scheduler"]),
        (["-l", "app.kubernetes.io/managed-by=kschedctl"], ["gpu"]),
        (["-l", "!component"], ["gpu", "ghost"]),
        (["-l", "app.kubernetes.io/instance in (gpu,x)"], ["gpu"]),
        (["--field-selector", "metadata.name!=gpu"], ["default-scheduler", "ghost"]),
        (["--field-selector", "form=deployment"], ["gpu"]),
        (["--field-selector", "served=false"], ["ghost"]),
        (
            ["-l", "tier", "--field-selector", "metadata.namespace=kube-system"],
            ["default-scheduler"],
        ),
    ],
)
def test_list_selectors(run: Run, cluster: None, args: list[str], names: list[str]) -> None:
    result = run("list", *args, "-o", "name")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines() == [f"scheduler/{n}" for n in names]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-l", "app in web"], "-l app in web: expected '('"),
        (["--field-selector", "spec.nodeName=x"], "field label not supported: spec.nodeName"),
        (["--field-selector", "oops"], "expected field=value"),
    ],
)
def test_list_bad_selectors_are_exit_2(
    run: Run, cluster: None, args: list[str], message: str
) -> None:
    result = run("list", *args)
    assert result.exit_code == 2 and message in result.stderr


def test_list_watch_appends_changed_rows(
    run: Run, cluster: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    states = [_schedulers(), _schedulers(), _schedulers()]
    states[1][1].ready = 0  # gpu changes; the Lease's renew age alone is no change
    states[1][0].lease.renew_age = 9.0  # type: ignore[union-attr]
    listed = iter(states)
    monkeypatch.setattr("kschedctl.ops.list.discover", lambda snap: next(listed))
    sleeps: list[float] = []

    def sleep(seconds: float) -> None:
        sleeps.append(seconds)
        if len(sleeps) == 3:
            raise KeyboardInterrupt  # Ctrl-C ends the watch with exit 0

    monkeypatch.setattr("kschedctl.cli.listwatch.pause", sleep)
    result = run("list", "-w", "-o", "custom-columns=NAME:.metadata.name,READY:.ready")
    assert result.exit_code == 0, result.stderr
    assert [line.split() for line in result.stdout.splitlines()] == [
        ["NAME", "READY"], ["default-scheduler", "<nil>"], ["gpu", "1"], ["ghost", "<nil>"],
        ["gpu", "0"], ["gpu", "1"],  # changed, then changed back
    ]  # fmt: skip


def test_list_watch_json_prints_one_document_per_change(
    run: Run, cluster: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    def sleep(seconds: float) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr("kschedctl.cli.listwatch.pause", sleep)
    result = run("list", "-w", "-o", "json")
    documents = [json.loads(d) for d in result.stdout.replace("}\n{", "}\x00{").split("\x00")]
    assert [d["metadata"]["name"] for d in documents] == ["default-scheduler", "gpu", "ghost"]


def _status(monkeypatch: pytest.MonkeyPatch, metrics: Any = None) -> list[tuple[bool, str | None]]:
    """Fake the status use case; the list it returns records each call's ``metrics`` consent
    and ``metrics_reader``."""
    from kschedctl.ops.status import SchedulerStatus

    report = SchedulerStatus(
        name="gpu", scheduler=_schedulers()[1], objects=[], access=None,
        rbac={"mode": None, "clusterRoles": [], "defaultLeaseUpdate": None},
        version={"server": "v1.36.3", "image": "k8s/kube-scheduler:v1.36.3", "skew": "ok"},
        events=[], pending_pods=[], warnings=[], metrics=metrics,
    )  # fmt: skip
    asked: list[tuple[bool, str | None]] = []

    def scheduler_status(
        cluster: object,
        name: str,
        *,
        metrics: bool = False,
        metrics_reader: str | None = None,
        namespace: str | None = None,
    ) -> Any:
        asked.append((metrics, metrics_reader))
        return report

    monkeypatch.setattr("kschedctl.ops.status.scheduler_status", scheduler_status)
    return asked


@pytest.mark.parametrize(
    ("out", "expected"),
    [
        ("name", "scheduler/gpu\n"),
        ("jsonpath={.scheduler.form} {.version.server}", "deployment v1.36.3"),
        ("custom-columns=NAME:.name,FORM:.scheduler.form", "NAME   FORM\ngpu    deployment\n"),
    ],
)
def test_status_outputs(
    run: Run, cluster: None, monkeypatch: pytest.MonkeyPatch, out: str, expected: str
) -> None:
    _status(monkeypatch)
    result = run("status", "gpu", "-o", out)
    assert result.exit_code == 0, result.stderr
    assert result.stdout == expected


def test_status_json_and_yaml_agree(
    run: Run, cluster: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    _status(monkeypatch)
    data = json.loads(run("status", "gpu", "-o", "json").stdout)
    assert data["scheduler"]["name"] == "gpu"
    assert yaml.safe_load(run("status", "gpu", "-o", "yaml").stdout) == data


def test_status_table_shows_each_replicas_metrics_and_why_one_is_unread(
    run: Run, cluster: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    summary = {
        "program": "kube-scheduler",
        "attempts": {"scheduled": 40, "unschedulable": 2, "error": 0},
        "attemptsByProfile": {"gpu": {"scheduled": 40, "unschedulable": 2, "error": 0}},
        "pending": {"active": 1, "backoff": 0, "unschedulable": 2, "gated": 0},
        "attemptLatency": {"count": 42, "p50": 0.0042, "p99": 0.0311},
        "podSchedulingLatency": None,
        "leader": True,
    }
    minted = {"token": True, "serviceAccount": "kube-system/gpu-metrics-reader",
              "lifetimeSeconds": 600}  # fmt: skip
    metrics = {
        "replicas": [
            {"pod": "kube-system/gpu-a", "port": 10259, "leader": True, "summary": summary,
             "problem": None, "sent": minted, "health": None},
            {"pod": "kube-system/gpu-b", "port": 10259, "leader": False, "summary": None,
             "problem": "answered 403 Forbidden for /metrics; the token's ServiceAccount needs",
             "sent": minted, "health": None},
        ],
        "problem": None,
        "reader": "kube-system/gpu-metrics-reader",
        "readerProblem": None,
    }  # fmt: skip
    asked = _status(monkeypatch, metrics)
    result = run("status", "gpu", "--metrics")
    assert result.exit_code == 0, result.stderr
    assert "Metrics (each replica's /metrics, since it started):" in result.stdout
    assert (
        "  sent: a token minted for ServiceAccount kube-system/gpu-metrics-reader (allowed only "
        "get /metrics, valid 600s); your own credentials were not sent to any pod" in result.stdout
    )
    row = next(line for line in result.stdout.splitlines() if "gpu-a" in line).split()
    assert row == ["kube-system/gpu-a", "yes", "40", "2", "0", "active=1", "backoff=0",
                   "unschedulable=2", "gated=0", "4.2ms", "31.1ms"]  # fmt: skip
    assert "  kube-system/gpu-b: not read: answered 403 Forbidden for /metrics" in result.stdout
    run("status", "gpu", "--no-metrics")
    run("status", "gpu", "--metrics-reader", "reader")
    assert asked == [(True, None), (False, None), (True, "reader")]


def test_status_reads_no_metrics_unless_asked_and_says_how(
    run: Run, cluster: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked = _status(monkeypatch, None)
    result = run("status", "gpu")
    assert result.exit_code == 0, result.stderr
    assert asked == [(False, None)]
    assert "Metrics: not read (pass --metrics" in result.stdout
    assert "your credentials are never sent to a pod" in result.stdout


def test_status_without_a_reader_shows_the_health_it_read_without_credentials(
    run: Run, cluster: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    why = "kschedctl did not deploy this scheduler: it has no metrics-reader ServiceAccount, …"
    metrics = {
        "replicas": [
            {"pod": "kube-system/kube-scheduler-n1", "port": 10259, "leader": True,
             "summary": None, "problem": why,
             "sent": {"token": False, "serviceAccount": None, "lifetimeSeconds": None,
                      },
             "health": {"/healthz": "200 ok", "/readyz": "200 ok", "/livez": "200 ok"}},
        ],
        "problem": None, "reader": None, "readerProblem": why,
    }  # fmt: skip
    _status(monkeypatch, metrics)
    result = run("status", "gpu", "--metrics")
    assert result.exit_code == 0, result.stderr
    assert "  sent: no credentials (your own were not sent to any pod)" in result.stdout
    assert f"  not read: {why}" in result.stdout
    assert (
        "  kube-system/kube-scheduler-n1: read without credentials: /healthz 200 ok · "
        "/readyz 200 ok · /livez 200 ok" in result.stdout
    )


def test_status_refuses_a_metrics_reader_that_is_no_service_account_name(
    run: Run, cluster: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked = _status(monkeypatch)
    result = run("status", "gpu", "--metrics-reader", "kube-system/reader")
    assert result.exit_code == 2
    assert "--metrics-reader: a ServiceAccount name" in result.stderr
    assert asked == []


def test_status_table_shows_the_double_booking_section(
    run: Run, cluster: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    from kschedctl.observe import doublebooking
    from kschedctl.ops.status import SchedulerStatus

    rejected = doublebooking.RejectedPod(
        "shop", "b", "u-b", "n1", "OutOfcpu", "Pod was rejected: Node didn't have enough "
        "resource: cpu, requested: 600, used: 3700, capacity: 4000", "gpu", None,
    )  # fmt: skip
    bindings = (
        doublebooking.Binding("shop", "a", "u-a", "n1", "default-scheduler", None),
        doublebooking.Binding("shop", "b", "u-b", "n1", "gpu", None),
    )
    node = doublebooking.NodeRejections("n1", (rejected,), bindings)
    report = SchedulerStatus(
        name="gpu", scheduler=_schedulers()[1], objects=[], access=None,
        rbac={"mode": None, "clusterRoles": [], "defaultLeaseUpdate": None},
        version={"server": "v1.36.3", "image": "k8s/kube-scheduler:v1.36.3", "skew": "ok"},
        events=[], pending_pods=[], warnings=[], double_booking=[node.to_dict()],
    )  # fmt: skip
    monkeypatch.setattr("kschedctl.ops.status.scheduler_status", lambda cluster, name, **_: report)
    result = run("status", "gpu")
    assert result.exit_code == 0, result.stderr
    assert "Double booking: 1 node(s)" in result.stdout
    assert "schedulers default-scheduler and gpu bound pods to it at the same time" in (
        result.stdout
    )
    assert "shop/b (bound by gpu): Pod was rejected: Node didn't have enough" in result.stdout
    assert (
        "kschedctl render gpu --as config --add-to /etc/kubernetes/kube-scheduler-config.yaml"
        in (result.stdout)
    )
    data = json.loads(run("status", "gpu", "-o", "json").stdout)
    assert data["doubleBooking"][0]["schedulers"] == ["default-scheduler", "gpu"]
    assert data["doubleBooking"][0]["rejected"][0]["reason"] == "OutOfcpu"


# -- why and events (faked cluster) -----------------------------------------------------------


def _diagnosis(name: str, schedulable: bool) -> Diagnosis:
    return Diagnosis(
        pod={"namespace": "default", "name": name, "schedulerName": "gpu"},
        phase="Pending", schedulable=schedulable, scheduler={"name": "gpu", "served": None},
    )  # fmt: skip


@pytest.fixture
def pending(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    from kschedctl.ops.why import Explanation

    calls: list[dict[str, Any]] = []

    def explain(cluster: object, pod: str | None, **kw: Any) -> Explanation:
        calls.append({"pod": pod, **kw})
        if pod is not None:
            return Explanation([_diagnosis(pod, False)], one_pod=True, namespace="default")
        return Explanation([_diagnosis("a", True), _diagnosis("b", False)], one_pod=False,
                           namespace="default")  # fmt: skip

    monkeypatch.setattr("kschedctl.ops.why.explain_pods", explain)
    return calls


def test_why_all_json_is_a_list_and_name_gives_pods(run: Run, cluster: None, pending: list) -> None:
    data = json.loads(run("why", "--all", "-o", "json").stdout)
    assert data["kind"] == "List" and [d["pod"]["name"] for d in data["items"]] == ["a", "b"]
    result = run("why", "--all", "-o", "name")
    assert result.stdout == "pod/a\npod/b\n"
    assert result.exit_code == 6  # b cannot be scheduled: why's exit code stays


def test_why_one_pod_outputs(run: Run, cluster: None, pending: list) -> None:
    assert json.loads(run("why", "p", "-o", "json").stdout)["pod"]["name"] == "p"
    assert run("why", "p", "-o", "name").stdout == "pod/p\n"
    assert run("why", "p", "-o", "jsonpath={.schedulable}").stdout == "false"


def test_why_custom_columns_and_no_headers(run: Run, cluster: None, pending: list) -> None:
    spec = "POD:.pod.name,OK:.schedulable"
    assert run("why", "--all", "-o", f"custom-columns={spec}", "--no-headers").stdout == (
        "a     true\nb     false\n"
    )


def test_why_passes_selectors_to_the_api_server(run: Run, cluster: None, pending: list) -> None:
    run("why", "--all", "-l", "app=web", "--field-selector", "spec.schedulerName=gpu")
    assert pending[-1]["label_selector"] == "app=web"
    assert pending[-1]["field_selector"] == "spec.schedulerName=gpu"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["why", "p", "-l", "app=web"], "they go with --all"),
        (["why", "--all", "-l", "app in"], "-l app in"),
        (["why", "--all", "--field-selector", "x"], "--field-selector x"),
    ],
)
def test_why_selector_usage_errors(run: Run, args: list[str], message: str) -> None:
    result = run(*args)
    assert result.exit_code == 2 and message in result.stderr


def _events(monkeypatch: pytest.MonkeyPatch) -> None:
    from kschedctl.ops.events import EventList

    event = Event(time=None, first_time=None, type="Normal", reason="Scheduled", message="ok",
                  count=1, controller="gpu", instance="gpu-1", kind="Pod", namespace="default",
                  name="p", uid="u", event_uid="e", event_name="p.17a")  # fmt: skip
    source = SimpleNamespace(current=lambda: EventList([event], "default"), namespace="default")
    monkeypatch.setattr("kschedctl.ops.events.open_events", lambda *a, **kw: source)


@pytest.mark.parametrize(
    ("out", "expected"),
    [
        ("name", "event/p.17a\n"),
        ("jsonpath={.items[*].reason}", "Scheduled"),
        (
            "custom-columns=OBJECT:.regarding.name,REASON:.reason",
            "OBJECT   REASON\np        Scheduled\n",
        ),
    ],
)
def test_events_outputs(
    run: Run, cluster: None, monkeypatch: pytest.MonkeyPatch, out: str, expected: str
) -> None:
    _events(monkeypatch)
    result = run("events", "-o", out)
    assert result.exit_code == 0, result.stderr
    assert result.stdout == expected


def test_events_json_is_a_list_of_events(
    run: Run, cluster: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    _events(monkeypatch)
    data = json.loads(run("events", "-o", "json").stdout)
    (item,) = data["items"]
    assert (item["kind"], item["metadata"]["name"], item["reason"]) == (
        "Event",
        "p.17a",
        "Scheduled",
    )


# -- lab status -------------------------------------------------------------------------------


@pytest.fixture
def lab(monkeypatch: pytest.MonkeyPatch) -> None:
    report = {"dir": "/lab", "running": True, "server": "https://127.0.0.1:6443",
              "components": {"etcd": {"state": "healthy", "pid": 10, "port": 2379, "log": "etcd.log"}},
              "nodes": {"ready": 4, "total": 4}}  # fmt: skip
    fake = SimpleNamespace(status=lambda: report, dir="/lab", export_line=lambda: "export X=1")
    monkeypatch.setattr("kschedctl.cli.lab._lab", lambda directory: fake)


@pytest.mark.parametrize(
    ("out", "expected"),
    [
        ("jsonpath={.components.etcd.state}", "healthy"),
        (
            "custom-columns=SERVER:.server,NODES:.nodes.ready",
            "SERVER                   NODES\nhttps://127.0.0.1:6443   4\n",
        ),
    ],
)
def test_lab_status_outputs(run: Run, lab: None, out: str, expected: str) -> None:
    result = run("lab", "status", "-o", out)
    assert result.exit_code == 0, result.stderr
    assert result.stdout == expected


def test_lab_status_has_no_name_form(run: Run, lab: None) -> None:
    result = run("lab", "status", "-o", "name")
    assert result.exit_code == 2 and "unknown output format 'name'" in result.stderr


# -- one -o option everywhere -----------------------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [["list"], ["status"], ["why"], ["events"], ["render"], ["lab", "status"]],
    ids=" ".join,
)
def test_every_command_offers_o_the_same_way(run: Run, command: list[str]) -> None:
    lines = run(*command, "--help").stdout.splitlines()
    # the option's line and its help's continuation lines (indented past the names)
    (start,) = [i for i, line in enumerate(lines) if line.startswith("  -o, --output")]
    end = next(i for i in range(start + 1, len(lines)) if not lines[i].startswith("     "))
    option = " ".join(" ".join(lines[start:end]).split())
    assert "-o, --output FORMAT Output format:" in option
    assert "yaml, json, " in option  # lab status has no name form: it lists no objects
    assert "jsonpath=TEMPLATE, jsonpath-as-json=TEMPLATE, custom-columns=SPEC" in option
    assert any("--no-headers" in line for line in lines)


def test_list_watch_on_a_terminal_is_a_live_table(
    run: Run, cluster: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    import io

    from rich.console import Console

    screen = io.StringIO()
    terminal = Console(file=screen, force_terminal=True, width=120)
    monkeypatch.setattr("kschedctl.cli.output.stdout_console", lambda: terminal)
    pauses: list[float] = []

    def pause(seconds: float) -> None:
        pauses.append(seconds)
        if len(pauses) == 2:
            raise KeyboardInterrupt

    monkeypatch.setattr("kschedctl.cli.listwatch.pause", pause)
    result = run("list", "-w")
    assert result.exit_code == 0, result.stderr
    shown = screen.getvalue()
    assert "NAME" in shown and "default-scheduler" in shown and "ghost" in shown
    assert pauses == [2.0, 2.0]  # listed again after each pause, until Ctrl-C


def test_status_table_shows_the_routing(
    run: Run, cluster: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    from kschedctl.ops.status import SchedulerStatus

    report = SchedulerStatus(
        name="gpu", scheduler=_schedulers()[1], objects=[], access=None,
        rbac={"mode": None, "clusterRoles": [], "defaultLeaseUpdate": None},
        version={"server": "v1.36.3", "image": "k8s/kube-scheduler:v1.36.3", "skew": "ok"},
        events=[], pending_pods=[], warnings=[],
        routing={"rule": "ns:team=ml", "namespaces": ["team-a", "team-b"], "routedPods": 3},
    )  # fmt: skip
    monkeypatch.setattr("kschedctl.ops.status.scheduler_status", lambda cluster, name, **_: report)
    result = run("status", "gpu")
    assert result.exit_code == 0, result.stderr
    assert "Routing: ns:team=ml: namespaces team-a, team-b; 3 live pod(s) routed" in result.stdout
