"""DefaultPreemption with kschedctl's Python plugins, as kube-scheduler runs out-of-tree
Filter plugins (pkg/scheduler/framework/preemption/preemption.go, SelectVictimsOnNode ->
RunFilterPluginsWithNominatedPods): a node only a plugin rejects is a candidate; the plugins
run in the dry run on the node with the candidate victims taken off (their ``ctx`` sees that
node); a node a plugin rejects whatever is evicted is none; the victims are as few as the
plugin allows; a plugin raising in the dry run is contained; `why` says what the scheduler
does."""

from __future__ import annotations

import textwrap
from typing import Any

from test_filters_support import node, pod

from kschedctl.model.filters import NodeInfoSnapshot
from kschedctl.model.scheduling.algorithm import Algorithm
from kschedctl.model.scheduling.pluginload import plugin_from_source
from kschedctl.model.scheduling.plugins import PluginSet
from kschedctl.model.scheduling.policy import FallbackPolicy
from kschedctl.observe.diagnosis import diagnose

# At most MAX pods labelled app=db per node, the incoming one included: a rule only evicting
# db pods can satisfy. It counts what ctx shows of the node, as every plugin does.
AT_MOST_TWO_DBS = """
NAME = "db-limit"
MAX = 2
SEEN = []


def _db(p):
    return (p["metadata"].get("labels") or {}).get("app") == "db"


def filter(pod, node, ctx):
    if not _db(pod):
        return None
    here = [p["metadata"]["name"] for p in ctx.pods_on(node["metadata"]["name"])]
    SEEN.append((node["metadata"]["name"], tuple(sorted(here))))
    dbs = sum(1 for p in ctx.pods_on(node["metadata"]["name"]) if _db(p))
    return f"node(s) already run {MAX} db pods" if dbs + 1 > MAX else None
"""

# A label rule: no eviction changes a node's labels.
ZONE_Z1 = """
NAME = "zone-z1"


def filter(pod, node, ctx):
    if (node["metadata"].get("labels") or {}).get("zone") != "z1":
        return "node(s) not in zone z1"
    return None
"""


def plugins(*texts: str) -> PluginSet:
    return PluginSet(
        tuple(plugin_from_source(f"p{i}.py", textwrap.dedent(t)) for i, t in enumerate(texts))
    )


def running(name: str, node_name: str, priority: int, cpu: str = "100m", **kw: Any) -> Any:
    p = pod(name, node_name=node_name, cpu=cpu, priority=priority, schedulerName="mine", **kw)
    p["status"]["startTime"] = "2026-01-01T00:00:00Z"
    return p


def db(name: str, node_name: str | None, priority: int, **kw: Any) -> Any:
    if node_name is None:
        return pod(name, cpu="100m", priority=priority, schedulerName="mine",
                   labels={"app": "db"}, **kw)  # fmt: skip
    return running(name, node_name, priority, labels={"app": "db"}, **kw)


def decide_and_explain(p: Any, snap: NodeInfoSnapshot, set_: PluginSet) -> Any:
    """The scheduler's decision, after checking that `why` says exactly the same."""
    decision = Algorithm(plugins=set_).decide(p, snap)
    diag = diagnose(p, snap, None, fallback=FallbackPolicy(), plugins=set_)
    assert diag.summary == decision.message
    assert diag.evaluation is not None
    assert diag.evaluation.preemption == decision.preemption
    return decision, diag


def test_plugins_rejecting_every_node_the_built_ins_pass_make_preemption_run() -> None:
    snap = NodeInfoSnapshot(
        [node("a"), node("b")],
        [
            db("a-db1", "a", 1), db("a-db2", "a", 2), running("a-web", "a", 0),
            db("b-db1", "b", 3), db("b-db2", "b", 4),
        ],
    )  # fmt: skip
    set_ = plugins(AT_MOST_TWO_DBS)
    d, diag = decide_and_explain(db("p", None, 10), snap, set_)
    assert d.node is None and d.plugin_error is None
    # One db must go from either node; a's is the lowest priority. a-web stays: the plugin
    # passes without evicting it (and cpu is plenty).
    assert d.nominate == "a"
    assert d.victims is not None and d.victims.victims == ("default/a-db1",)
    assert {c.node: c.victims for c in d.preemption.candidates} == {
        "a": ("default/a-db1",),
        "b": ("default/b-db1",),
    }
    # Preemption found a node: kube-scheduler's message then has no PostFilter part.
    assert d.message == "0/2 nodes are available: 2 node(s) already run 2 db pods."
    found = {f.code: f.message for f in diag.findings}
    assert "picks a, evicting default/a-db1" in found["preemption-possible"]


def test_the_plugin_sees_the_node_with_the_candidate_victims_taken_off() -> None:
    snap = NodeInfoSnapshot([node("a")], [db("d1", "a", 1), db("d2", "a", 2), running("w", "a", 0)])
    set_ = plugins(AT_MOST_TWO_DBS)
    d = Algorithm(plugins=set_).decide(db("p", None, 10), snap)
    filt = set_.plugins[0].filter
    assert filt is not None
    seen = [s for n, s in filt.__globals__["SEEN"] if n == "a"]
    # every lower-priority pod off, then put back most important first (d2, w; d1 stays out)
    assert ("d1", "d2", "w") in seen and () in seen and ("d2",) in seen and ("d2", "w") in seen
    assert d.victims is not None and d.victims.victims == ("default/d1",)
    # the dry run leaves the node, and what ctx reads of it, as they were
    assert [p.name for p in snap.node("a").pods] == ["d1", "d2", "w"]
    ctx_after = Algorithm(plugins=set_).decide(db("q", None, 10), snap)
    assert ctx_after.victims is not None and ctx_after.victims.victims == ("default/d1",)


def test_victims_are_as_few_as_the_plugin_allows() -> None:
    snap = NodeInfoSnapshot(
        [node("a")],
        [db("d1", "a", 1), db("d2", "a", 2), db("d3", "a", 3), running("w", "a", 0)],
    )
    d, _diag = decide_and_explain(db("p", None, 10), snap, plugins(AT_MOST_TWO_DBS))
    # d3 is reprieved first (one db beside p is allowed), d2 and d1 must go; w costs nothing
    assert d.victims is not None and d.victims.victims == ("default/d2", "default/d1")
    assert d.victims.victim_priorities == (2, 1)


def test_a_node_a_plugin_rejects_whatever_is_evicted_is_no_candidate() -> None:
    nodes = [node("a", cpu="2", labels={"zone": "z2"}), node("b", cpu="2", labels={"zone": "z1"})]
    pods = [running("a-low", "a", 1, cpu="2"), running("b-mid", "b", 5, cpu="2")]
    set_ = plugins(ZONE_Z1)
    p = pod("p", cpu="2", priority=10, schedulerName="mine")
    d, _diag = decide_and_explain(p, NodeInfoSnapshot(nodes, pods), set_)
    # Without the plugin in the dry run a would win (a lower victim) and p never fit there.
    assert d.nominate == "b"
    assert [c.node for c in d.preemption.candidates] == ["b"]
    assert d.victims is not None and d.victims.victims == ("default/b-mid",)
    # Only a: no candidate, and the plugin's dry-run reason counts like a built-in one.
    d, diag = decide_and_explain(p, NodeInfoSnapshot(nodes[:1], pods[:1]), set_)
    assert d.node is None and d.victims is None and d.nominate == ""
    assert d.message == (
        "0/1 nodes are available: 1 Insufficient cpu. "
        "no new claims to deallocate, "
        "preemption: 0/1 nodes are available: 1 node(s) not in zone z1."
    )
    assert any(f.code == "preemption-not-helpful" for f in diag.findings)


def test_plugin_only_rejects_without_lower_priority_pods_get_kube_schedulers_words() -> None:
    snap = NodeInfoSnapshot([node("a", labels={"zone": "z2"})], [running("same", "a", 10)])
    d, _diag = decide_and_explain(
        pod("p", cpu="1", priority=10, schedulerName="mine"), snap, plugins(ZONE_Z1)
    )
    assert d.message == (
        "0/1 nodes are available: 1 node(s) not in zone z1. "
        "no new claims to deallocate, "
        "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod."
    )


def test_a_pre_filter_rejection_means_no_preemption() -> None:
    refuses = """
        NAME = "refuses"
        def pre_filter(pod, ctx):
            return "pod(s) refused by policy"
        def filter(pod, node, ctx):
            return None
    """
    snap = NodeInfoSnapshot([node("a", cpu="1")], [running("low", "a", 1, cpu="1")])
    d, _diag = decide_and_explain(
        pod("p", cpu="1", priority=10, schedulerName="mine"), snap, plugins(refuses)
    )
    assert d.message == "0/1 nodes are available: pod(s) refused by policy."
    assert d.preemption is None and d.nominate is None


def test_a_plugin_raising_in_the_dry_run_fails_that_pod_naming_it() -> None:
    # It rejects full nodes and raises on a node it sees emptied: only the dry run does that.
    raises = """
        NAME = "fragile"
        def filter(pod, node, ctx):
            if not ctx.pods_on(node["metadata"]["name"]):
                raise RuntimeError("empty node")
            return "node(s) are full"
    """
    snap = NodeInfoSnapshot([node("a")], [running("low", "a", 1)])
    p = pod("p", cpu="1", priority=10, schedulerName="mine")
    d, diag = decide_and_explain(p, snap, plugins(raises))
    assert d.node is None and d.plugin_error == "fragile"
    assert d.message == 'running "fragile" filter plugin: RuntimeError: empty node'
    assert d.preemption is None and d.nominate is None
    assert [q.name for q in snap.node("a").pods] == ["low"]
    assert snap.node("a").requested["cpu"] == 100


def test_the_nominated_node_counts_for_plugins_and_is_taken_only_when_they_pass() -> None:
    set_ = plugins(AT_MOST_TWO_DBS)
    p = db("p", None, 10)
    p["status"]["nominatedNodeName"] = "a"
    # The victim is still there: the plugin rejects a, so p is not bound there.
    snap = NodeInfoSnapshot([node("a"), node("b")], [db("d1", "a", 1), db("d2", "a", 2)])
    assert Algorithm(plugins=set_).decide(p, snap).node == "b"
    # Gone: p takes its nominated node without scoring.
    snap = NodeInfoSnapshot([node("a"), node("b")], [db("d2", "a", 2)])
    assert Algorithm(plugins=set_).decide(p, snap).node == "a"
    # A db pod of higher priority nominated to a counts there for the plugin as well.
    other = db("other", None, 20)
    other["status"]["nominatedNodeName"] = "a"
    q = db("q", None, 10)
    snap = NodeInfoSnapshot([node("a"), node("b", unschedulable=True)], [db("d2", "a", 2), other])
    d = Algorithm(plugins=set_).decide(q, snap)
    assert d.node is None
    assert d.victims is not None and (d.victims.node, d.victims.victims) == ("a", ("default/d2",))


def test_the_loop_evicts_exactly_the_victims_the_plugin_needs_and_binds_there() -> None:
    from test_scheduling_loop import FakeApi, eventually, settings

    from kschedctl.model.scheduling.loop import SchedulerLoop

    set_ = plugins(AT_MOST_TWO_DBS)
    api = FakeApi([node("a"), node("b")])
    for p in (db("a-db1", "a", 1), db("a-db2", "a", 2), running("a-web", "a", 0),
              db("b-db1", "b", 3), db("b-db2", "b", 4)):  # fmt: skip
        api.add_pod(p)
    loop = SchedulerLoop(api, settings(algorithm=Algorithm(plugins=set_)))  # type: ignore[arg-type]
    loop.start()
    try:
        api.add_pod(db("p", None, 10))
        eventually(lambda: api.node_of("p") == "a")
        assert api.deleted == ["a-db1"]
        assert loop.metrics.value("preemption_victims_total", ()) == 1
    finally:
        loop.shutdown(grace=2)


def test_the_loop_counts_a_plugin_raising_in_the_dry_run_and_goes_on() -> None:
    from test_scheduling_loop import FakeApi, eventually, ours, settings

    from kschedctl.model.scheduling.loop import SchedulerLoop

    set_ = plugins(
        """
        NAME = "fragile"
        def filter(pod, node, ctx):
            if (pod["metadata"].get("labels") or {}).get("app") != "db":
                return None
            if not ctx.pods_on(node["metadata"]["name"]):
                raise RuntimeError("empty node")
            return "node(s) are full"
        """
    )
    api = FakeApi([node("a")])
    api.add_pod(running("low", "a", 1))
    loop = SchedulerLoop(api, settings(algorithm=Algorithm(plugins=set_)))  # type: ignore[arg-type]
    loop.start()
    try:
        api.add_pod(db("p", None, 10))
        note = eventually(
            lambda: next((e["note"] for e in api.events if e["reason"] == "FailedScheduling"), None)
        )
        assert note == 'running "fragile" filter plugin: RuntimeError: empty node'
        assert loop.metrics.value("plugin_errors_total", (("plugin", "fragile"),)) >= 1
        assert api.deleted == []
        api.add_pod(ours("after"))  # still serving
        eventually(lambda: api.node_of("after") == "a")
    finally:
        loop.shutdown(grace=2)


def test_why_shows_the_plugin_verdicts_counting_nominated_pods_like_the_scheduler() -> None:
    other = db("other", None, 20)
    other["status"]["nominatedNodeName"] = "a"
    snap = NodeInfoSnapshot([node("a"), node("b")], [db("d2", "a", 2), db("b1", "b", 30), db("b2", "b", 30),
                                             other])  # fmt: skip
    q = db("q", None, 10)
    set_ = plugins(AT_MOST_TWO_DBS)
    d, diag = decide_and_explain(q, snap, set_)
    # a: d2 and the nominated db pod make two; evicting d2 is enough. b: nothing lower.
    assert d.victims is not None and (d.victims.node, d.victims.victims) == ("a", ("default/d2",))
    assert diag.plugins is not None
    assert {n: [v.reason for v in vs] for n, vs in diag.plugins.nodes.items()} == {
        "a": ["node(s) already run 2 db pods"],
        "b": ["node(s) already run 2 db pods"],
    }
    # the nominated pod is not left on the node
    assert [p.name for p in snap.node("a").pods] == ["d2"]
