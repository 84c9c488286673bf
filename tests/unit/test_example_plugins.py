"""The example plugins shipped under examples/plugins/ do exactly what their docstrings say,
alone and inside kschedctl's scheduler algorithm."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from test_filters_support import node, pod

from kschedctl.model.filters import NodeInfoSnapshot
from kschedctl.model.scheduling.algorithm import Algorithm
from kschedctl.model.scheduling.pluginload import load_plugin
from kschedctl.model.scheduling.plugins import Plugin, PluginContext, PluginSet, frozen

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "plugins"


@pytest.fixture(scope="module")
def rack_match() -> Plugin:
    return load_plugin(str(EXAMPLES / "rack_match.py"))


@pytest.fixture(scope="module")
def fewest_same_app() -> Plugin:
    return load_plugin(str(EXAMPLES / "fewest_same_app.py"))


def racked(name: str, rack: str | None) -> dict[str, Any]:
    return node(name, labels={"rack": rack} if rack else {})


def asking(name: str, rack: str | None, **kw: Any) -> dict[str, Any]:
    p = pod(name, cpu="100m", **kw)
    if rack is not None:
        p["metadata"]["annotations"] = {"example.com/rack": rack}
    return p


def test_both_examples_load_with_their_names_and_points(
    rack_match: Plugin, fewest_same_app: Plugin
) -> None:
    assert (rack_match.name, rack_match.filter is not None, rack_match.score) == (
        "rack-match", True, None,
    )  # fmt: skip
    assert rack_match.pre_filter is not None
    assert (fewest_same_app.name, fewest_same_app.weight, fewest_same_app.filter) == (
        "fewest-same-app", 10, None,
    )  # fmt: skip


# -- rack_match -----------------------------------------------------------------------------

RACKS = [racked("n1", "r1"), racked("n2", "r2"), racked("n3", "r2"), racked("n4", None)]


@pytest.mark.parametrize(
    ("rack", "allowed"),
    [("r1", {"n1"}), ("r2", {"n2", "n3"}), ("r9", set()), (None, {"n1", "n2", "n3", "n4"})],
)
def test_rack_match_allows_exactly_the_nodes_of_the_pods_rack(
    rack_match: Plugin, rack: str | None, allowed: set[str]
) -> None:
    snap = NodeInfoSnapshot(RACKS, [])
    ctx = PluginContext(snap)
    p = frozen(asking("p", rack))
    assert rack_match.pre_filter is not None and rack_match.filter is not None
    assert rack_match.pre_filter(p, ctx) is None
    fits = {n.name for n in snap if rack_match.filter(p, frozen(n.raw), ctx) is None}
    assert fits == allowed


def test_rack_match_in_the_scheduler_places_only_on_the_rack_and_words_the_histogram(
    rack_match: Plugin,
) -> None:
    algo = Algorithm(plugins=PluginSet((rack_match,)))
    snap = NodeInfoSnapshot(RACKS, [])
    for i in range(6):
        decision = algo.decide(asking(f"p{i}", "r2"), snap)
        assert decision.node in ("n2", "n3")
        snap.assume(asking(f"p{i}", "r2"), decision.node)
    failed = algo.decide(asking("q", "r9"), snap)
    assert failed.node is None
    # A plugin's reject is Unschedulable: preemption runs, and nothing has a lower priority.
    assert failed.message == (
        '0/4 nodes are available: 4 node(s) not in rack "r9" (annotation example.com/rack). '
        "no new claims to deallocate, "
        "preemption: 0/4 nodes are available: 4 No preemption victims found for incoming pod."
    )


def test_rack_match_refuses_an_empty_annotation_before_any_node(rack_match: Plugin) -> None:
    decision = Algorithm(plugins=PluginSet((rack_match,))).decide(
        asking("p", " "), NodeInfoSnapshot(RACKS, [])
    )
    assert decision.message == (
        "0/4 nodes are available: pod's annotation example.com/rack is empty: name a rack or "
        "remove it."
    )


# -- fewest_same_app -----------------------------------------------------------------------


def app_pod(
    name: str, app: str | None, node_name: str | None = None, ns: str = "default"
) -> dict[str, Any]:
    return pod(name, namespace=ns, node_name=node_name, cpu="100m",
               labels={"app": app} if app else None)  # fmt: skip


@pytest.mark.parametrize(("same", "expected"), [(0, 100.0), (1, 50.0), (3, 25.0)])
def test_fewest_same_app_scores_100_over_one_plus_the_same_app_pods(
    fewest_same_app: Plugin, same: int, expected: float
) -> None:
    existing = [app_pod(f"w{i}", "web", "n1") for i in range(same)]
    existing += [app_pod("other", "db", "n1"), app_pod("elsewhere", "web", "n1", ns="prod")]
    snap = NodeInfoSnapshot([node("n1")], existing)
    assert fewest_same_app.score is not None
    score = fewest_same_app.score(frozen(app_pod("new", "web")), frozen(snap.node("n1").raw),
                                  PluginContext(snap))  # fmt: skip
    assert score == pytest.approx(expected)


def test_fewest_same_app_spreads_an_app_even_under_binpack(fewest_same_app: Plugin) -> None:
    """Binpack alone stacks the replicas; with the plugin each goes where its app has the
    fewest pods, checked against the plugin's own count at every step."""
    module = fewest_same_app.score.__globals__  # type: ignore[union-attr]
    nodes = [node(f"n{i}") for i in range(1, 4)]
    snap = NodeInfoSnapshot(nodes, [])
    stacked = Algorithm("binpack")
    first = stacked.decide(app_pod("x0", "web"), snap).node
    snap.assume(app_pod("x0", "web"), first or "")
    assert stacked.decide(app_pod("x1", "web"), snap).node == first  # binpack stacks

    snap = NodeInfoSnapshot(nodes, [])
    algo = Algorithm("binpack", plugins=PluginSet((fewest_same_app,)))
    for i in range(7):
        p = app_pod(f"w{i}", "web")
        ctx = PluginContext(snap)
        counts = {n.name: module["same_app_pods"](frozen(p), n.name, ctx) for n in snap}
        decision = algo.decide(p, snap)
        assert decision.node is not None
        assert counts[decision.node] == min(counts.values()), (i, counts, decision.node)
        snap.assume(p, decision.node)
    per_node = sorted(len(snap.node(n.name).pods) for n in snap)
    assert per_node == [2, 2, 3]
