"""Discovery knows kschedctl's own scheduler (program: builtin) by its command line."""

from __future__ import annotations

from test_schedulers import NOW, by_name, lease, pod, snapshot

from kschedctl.observe.containers import builtin_facts, is_builtin_container
from kschedctl.render.forms import render
from kschedctl.spec import default_spec


def rendered_deployment() -> dict:  # type: ignore[type-arg]
    import yaml

    text = render(default_spec("fb", program="builtin", replicas=2), "deployment")
    (dep,) = [d for d in yaml.safe_load_all(text) if d and d["kind"] == "Deployment"]
    dep["status"] = {"readyReplicas": 2}
    return dep  # type: ignore[no-any-return]


def test_the_rendered_deployment_is_found_with_its_lease_and_leader() -> None:
    snap = snapshot(
        deployments=[rendered_deployment()], leases=[lease("kube-system", "fb", "fb-7c9-abc_u1")]
    )
    fb = by_name(snap)["fb"]
    assert (fb.form, fb.managed, fb.desired, fb.ready) == ("deployment", True, 2, 2)
    assert fb.lease is not None and fb.lease.ref == "kube-system/fb"
    assert fb.leader == "fb-7c9-abc" and fb.healthy
    assert snap.now == NOW


def test_a_bare_process_pod_and_its_flags() -> None:
    container = {"name": "s", "image": "example.com/kschedctl:1",
                 "args": ["scheduler", "run", "--name=x", "--lease-namespace=ops", "--lease-name=x-lock"]}  # fmt: skip
    assert is_builtin_container(container)
    bare = pod("x-sched", containers=[container], meta={"namespace": "ops"})
    found = by_name(snapshot(pods=[bare], leases=[lease("ops", "x-lock", "x-sched_1")]))
    assert found["x"].form == "pod" and found["x"].leader == "x-sched"
    facts = builtin_facts(["kschedctl", "scheduler", "run", "--name=y", "--no-leader-elect"])
    assert (facts.names, facts.lease) == (["y"], None)
    assert builtin_facts(["--name=z"]).lease == ("kube-system", "z")
    assert not is_builtin_container({"name": "c", "command": ["kschedctl", "why", "p"]})


def test_a_process_is_found_by_the_lease_it_annotates() -> None:
    held = lease("kube-system", "mine", "laptop_1")
    held["metadata"]["annotations"] = {"kschedctl.io/scheduler": "mine"}
    found = by_name(snapshot(leases=[held]))
    assert found["mine"].form == "process" and found["mine"].leader == "laptop"
    assert found["mine"].lease is not None and found["mine"].healthy
