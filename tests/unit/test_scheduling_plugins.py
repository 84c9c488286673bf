"""Python scheduling plugins: loading and refusals, order after the built-in filters, the
FailedScheduling histogram, scores added to the sum, containment, fallback steps, and `why`
reporting exactly what the scheduler reports."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from test_filters_support import node, pod

from kschedctl.base.errors import EXIT_INVALID, NotFoundError, PluginError
from kschedctl.model.filters import NodeInfoSnapshot
from kschedctl.model.scheduling.algorithm import Algorithm
from kschedctl.model.scheduling.cache import SchedulerCache
from kschedctl.model.scheduling.explain import explain, plugin_report
from kschedctl.model.scheduling.pluginload import load_plugin, load_plugins, plugin_from_source
from kschedctl.model.scheduling.plugins import FrozenDict, Plugin, PluginSet, frozen, thaw
from kschedctl.model.scheduling.policy import EMPTY
from kschedctl.model.scheduling.policyload import parse_policy
from kschedctl.model.scheduling.scoring import score_nodes
from kschedctl.observe.diagnosis import diagnose


def source(text: str, name: str = "plug.py") -> Plugin:
    return plugin_from_source(name, textwrap.dedent(text))


def plugins(*texts: str) -> PluginSet:
    return PluginSet(tuple(source(t, f"p{i}.py") for i, t in enumerate(texts)))


def labelled(name: str, **labels: str) -> dict[str, Any]:
    return node(name, labels=labels)


REJECT_NOT_GOLD = """
    NAME = "gold-only"
    def filter(pod, node, ctx):
        if (node["metadata"].get("labels") or {}).get("tier") != "gold":
            return "node(s) are not gold"
        return None
"""


# -- loading --------------------------------------------------------------------------------


def test_a_file_plugin_gets_its_module_name_weight_one_and_its_extension_points(
    tmp_path: Path,
) -> None:
    path = tmp_path / "spread_it.py"
    path.write_text("def score(pod, node, ctx):\n    return 50\n")
    p = load_plugin(str(path))
    assert (p.name, p.weight, p.filter, p.pre_filter) == ("spread_it", 1, None, None)
    assert p.score is not None and p.source == str(path)


def test_name_and_weight_are_read_from_the_module() -> None:
    p = source("NAME = 'x-y'\nWEIGHT = 2.5\ndef filter(pod, node, ctx): return None\n")
    assert (p.name, p.weight) == ("x-y", 2.5)


def test_a_module_and_an_object_in_it_load_from_the_python_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pkg = tmp_path / "myplugins"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "racks.py").write_text(
        "def filter(pod, node, ctx):\n    return None\n"
        "class Strict:\n    NAME = 'strict'\n"
        "    @staticmethod\n    def filter(pod, node, ctx):\n        return 'never'\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        module = load_plugin("myplugins.racks")
        obj = load_plugin("myplugins.racks:Strict")
    finally:
        for name in ("myplugins", "myplugins.racks"):
            sys.modules.pop(name, None)
    assert module.name == "racks" and obj.name == "strict"
    assert obj.filter is not None and obj.filter({}, {}, None) == "never"  # type: ignore[arg-type]


def test_plugin_from_source_is_what_a_configmap_key_and_value_give() -> None:
    p = plugin_from_source("rack_match.py", "def filter(pod, node, ctx):\n    return None\n")
    assert p.name == "rack_match" and p.source == "rack_match.py"
    p = plugin_from_source(
        "x.py", "def filter(pod, node, ctx): return None\n", source="/etc/kschedctl/plugins/x.py"
    )
    assert p.source == "/etc/kschedctl/plugins/x.py"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("X = 1\n", "defines neither filter(pod, node, ctx) nor score(pod, node, ctx)"),
        ("def filter(pod, node, ctx)\n", "is not valid Python (line 1)"),
        ("import no_such_module_here\n", "importing it raised ModuleNotFoundError: No module named 'no_such_module_here'"),
        ("raise RuntimeError('boom')\n", "importing it raised RuntimeError: boom"),
        ("import sys\nsys.exit(2)\n", "importing it raised SystemExit: 2"),
        ("filter = 3\n", "filter must be a function, not int"),
        ("def filter(pod, node): return None\n", "filter cannot be called as filter(pod, node, ctx)"),
        ("def score(pod, node, ctx): return 1\ndef pre_filter(pod): return None\n", "pre_filter cannot be called as pre_filter(pod, ctx)"),
        ("WEIGHT = 0\ndef score(pod, node, ctx): return 1\n", "WEIGHT 0 must be a number greater than 0 and at most 100"),
        ("WEIGHT = -2\ndef score(pod, node, ctx): return 1\n", "WEIGHT -2 must be"),
        ("WEIGHT = 101\ndef score(pod, node, ctx): return 1\n", "WEIGHT 101 must be"),
        ("WEIGHT = True\ndef score(pod, node, ctx): return 1\n", "WEIGHT True must be"),
        ("WEIGHT = '3'\ndef score(pod, node, ctx): return 1\n", "WEIGHT '3' must be"),
        ("WEIGHT = float('nan')\ndef score(pod, node, ctx): return 1\n", "WEIGHT nan must be"),
        ("NAME = 'a b'\ndef filter(pod, node, ctx): return None\n", "NAME 'a b' must be 1-63 letters"),
        ("NAME = ''\ndef filter(pod, node, ctx): return None\n", "NAME '' must be"),
        ("NAME = 7\ndef filter(pod, node, ctx): return None\n", "NAME 7 must be"),
    ],
    ids=["no-filter-or-score", "syntax", "import-error", "raises-on-import", "exits-on-import", "not-callable",
         "filter-arity", "pre-filter-arity", "weight-zero", "weight-negative", "weight-too-big",
         "weight-bool", "weight-string", "weight-nan", "name-space", "name-empty", "name-int"],
)  # fmt: skip
def test_unusable_plugins_are_refused_with_exit_3_naming_the_file(text: str, message: str) -> None:
    with pytest.raises(PluginError) as err:
        plugin_from_source("bad.py", text)
    assert err.value.exit_code == EXIT_INVALID
    assert err.value.source == "bad.py"
    assert message in err.value.message
    assert err.value.message.startswith("bad.py: ")


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("no_such_pkg.mod", "no_such_pkg.mod: cannot import it: ModuleNotFoundError"),
        ("json:nothing_here", "module json has no attribute nothing_here"),
        ("not a module", "is neither a file ending in .py nor a module name"),
        ("json", "defines neither filter(pod, node, ctx) nor score(pod, node, ctx)"),
    ],
)
def test_unusable_specs_are_refused(
    spec: str, message: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(PluginError) as err:
        load_plugin(spec)
    assert message in err.value.message


def test_a_missing_plugin_file_is_not_found(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(NotFoundError) as err:  # exit 5, as a missing file is everywhere
        load_plugin("missing.py")
    assert err.value.message == "missing.py: cannot read the plugin: no such file"
    assert err.value.hint


def test_a_bad_file_name_for_source_text_is_refused() -> None:
    with pytest.raises(PluginError, match="must be a Python module name"):
        plugin_from_source("rack-match.py", "def filter(pod, node, ctx): return None\n")


def test_two_plugins_with_one_name_are_refused(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    for d in ("a", "b"):
        (tmp_path / d / "same.py").write_text("def filter(pod, node, ctx): return None\n")
    with pytest.raises(PluginError, match="plugin name 'same' is also the name of"):
        load_plugins([str(tmp_path / "a" / "same.py"), str(tmp_path / "b" / "same.py")])


# -- read-only views ------------------------------------------------------------------------


def test_views_are_read_only_all_the_way_down_and_thaw_copies() -> None:
    data = {"metadata": {"labels": {"a": "1"}}, "spec": {"taints": [{"key": "k"}]}}
    view = frozen(data)
    assert isinstance(view, FrozenDict) and view["metadata"]["labels"]["a"] == "1"
    assert view["spec"]["taints"] == (FrozenDict({"key": "k"}),)
    assert "metadata" in view and view.get("status") is None and len(view) == 2
    with pytest.raises(TypeError):
        view["metadata"]["labels"]["a"] = "2"  # type: ignore[index]
    with pytest.raises(AttributeError):
        view["spec"]["taints"].append({})
    copy = thaw(view)
    copy["metadata"]["labels"]["a"] = "2"
    assert data["metadata"]["labels"]["a"] == "1" and copy == {
        **data,
        "metadata": {"labels": {"a": "2"}},
    }


def test_a_plugin_cannot_change_the_cache_it_reads() -> None:
    set_ = plugins(
        """
        def filter(pod, node, ctx):
            node["metadata"]["labels"]["hacked"] = "yes"
        """
    )
    snap = NodeInfoSnapshot([node("a")], [pod("x", node_name="a")])
    decision = Algorithm(plugins=set_).decide(pod("p", cpu="1"), snap)
    assert decision.node is None and decision.plugin_error == "p0"
    assert "TypeError" in (decision.message or "")
    assert "hacked" not in snap.node("a").labels


def test_ctx_reads_nodes_and_the_pods_on_them() -> None:
    seen: dict[str, Any] = {}
    set_ = plugins(
        """
        SEEN = {}
        def filter(pod, node, ctx):
            SEEN["nodes"] = [n["metadata"]["name"] for n in ctx.nodes()]
            SEEN["b"] = ctx.node("b")["metadata"]["name"]
            SEEN["missing"] = ctx.node("zz")
            SEEN["on_a"] = [p["metadata"]["name"] for p in ctx.pods_on("a")]
            SEEN["names"] = ctx.node_names()
            return None
        """
    )
    snap = NodeInfoSnapshot(
        [node("a"), node("b")], [pod("x", node_name="a"), pod("y", node_name="a")]
    )
    assert Algorithm(plugins=set_).decide(pod("p", cpu="1"), snap).node is not None
    filt = set_.plugins[0].filter
    assert filt is not None
    seen = filt.__globals__["SEEN"]
    assert seen == {"nodes": ["a", "b"], "b": "b", "missing": None, "on_a": ["x", "y"],
                    "names": ("a", "b")}  # fmt: skip


# -- filters: order, histogram, pre_filter -------------------------------------------------


def test_plugin_filters_run_after_the_built_in_ones_and_only_on_nodes_they_pass() -> None:
    set_ = plugins(
        """
        CALLS = []
        def filter(pod, node, ctx):
            CALLS.append(node["metadata"]["name"])
            return None
        """
    )
    snap = NodeInfoSnapshot([node("small", cpu="1"), node("big", cpu="8")], [])
    assert Algorithm(plugins=set_).decide(pod("p", cpu="4"), snap).node == "big"
    filt = set_.plugins[0].filter
    assert filt is not None and filt.__globals__["CALLS"] == ["big"]


def test_the_first_rejecting_plugin_in_order_gives_the_reason_and_later_ones_do_not_run() -> None:
    first = """
        NAME = "first"
        def filter(pod, node, ctx):
            return "node(s) rejected by first" if node["metadata"]["name"] != "c" else None
    """
    second = """
        NAME = "second"
        CALLS = []
        def filter(pod, node, ctx):
            CALLS.append(node["metadata"]["name"])
            return "node(s) rejected by second"
    """
    set_ = plugins(first, second)
    snap = NodeInfoSnapshot([node("a"), node("b"), node("c")], [])
    decision = Algorithm(plugins=set_).decide(pod("p", cpu="1"), snap)
    assert decision.node is None
    assert decision.message == (
        "0/3 nodes are available: 1 node(s) rejected by second, 2 node(s) rejected by first. "
        "no new claims to deallocate, "
        "preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod."
    )
    filt = set_.plugins[1].filter
    assert filt is not None and filt.__globals__["CALLS"] == ["c", "c"]  # decide, then message


def test_plugin_reasons_join_the_built_in_histogram_like_kube_scheduler_reasons() -> None:
    snap = NodeInfoSnapshot(
        [labelled("a", tier="gold"), node("b"), node("c"), node("tiny", cpu="500m")], []
    )
    decision = Algorithm(plugins=plugins(REJECT_NOT_GOLD)).decide(pod("p", cpu="1"), snap)
    assert decision.node == "a"
    full = NodeInfoSnapshot([labelled("a", tier="gold"), node("b"), node("c"), node("tiny", cpu="500m")],
                    [pod("x", node_name="a", cpu="4")])  # fmt: skip
    decision = Algorithm(plugins=plugins(REJECT_NOT_GOLD)).decide(pod("p", cpu="1"), full)
    assert decision.node is None and decision.plugin_error is None
    # tiny's cpu is short of the request itself: preemption cannot help there.
    assert decision.message == (
        "0/4 nodes are available: 2 Insufficient cpu, 2 node(s) are not gold. "
        "no new claims to deallocate, preemption: "
        "0/4 nodes are available: 1 Preemption is not helpful for scheduling, 3 No preemption "
        "victims found for incoming pod."
    )


def test_a_pre_filter_rejection_is_a_prefilter_message_and_its_cycle_state_reaches_filter() -> None:
    set_ = plugins(
        """
        def pre_filter(pod, ctx):
            want = (pod["metadata"].get("labels") or {}).get("want")
            if want == "nothing":
                return "pod wants nothing"
            ctx.cycle["want"] = want
        def filter(pod, node, ctx):
            return None if node["metadata"]["name"] == ctx.cycle["want"] else "node(s) not wanted"
        """
    )
    snap = NodeInfoSnapshot([node("a"), node("b")], [])
    algo = Algorithm(plugins=set_)
    assert algo.decide(pod("p", cpu="1", labels={"want": "b"}), snap).node == "b"
    decision = algo.decide(pod("q", cpu="1", labels={"want": "nothing"}), snap)
    assert decision.message == "0/2 nodes are available: pod wants nothing."


def test_a_built_in_prefilter_rejection_wins_over_a_plugin_pre_filter() -> None:
    set_ = plugins(
        "def pre_filter(pod, ctx): return 'plugin says no'\ndef filter(pod, node, ctx): return None\n"
    )
    conflict = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["a"]},
                         {"key": "metadata.name", "operator": "In", "values": ["b"]}]}]}}}  # fmt: skip
    snap = NodeInfoSnapshot([node("a")], [])
    without = Algorithm().decide(pod("p", cpu="1", affinity=conflict), snap).message
    assert without is not None and "plugin says no" not in without
    assert (
        Algorithm(plugins=set_).decide(pod("p", cpu="1", affinity=conflict), snap).message
        == without
    )


# -- scores ---------------------------------------------------------------------------------


def test_plugin_scores_times_weight_are_added_to_the_built_in_sum() -> None:
    snap = NodeInfoSnapshot([node("a"), node("b")], [pod("x", node_name="b", cpu="2")])
    assert Algorithm().decide(pod("p", cpu="1"), snap).node == "a"  # spread: the emptier
    prefer_b = """
        WEIGHT = {w}
        def score(pod, node, ctx):
            return 100 if node["metadata"]["name"] == "b" else 0
    """
    # The built-in totals differ by less than 100 (spread and balance): weight 1 × 100 puts
    # b ahead, weight 0.1 × 100 does not; the decision's score carries the plugin's part.
    weak = Algorithm(plugins=plugins(prefer_b.format(w=0.1))).decide(pod("p", cpu="1"), snap)
    strong = Algorithm(plugins=plugins(prefer_b.format(w=1))).decide(pod("p", cpu="1"), snap)
    assert weak.node == "a" and strong.node == "b"
    base = {s.name: s.total for s in score_nodes(pod("p", cpu="1"), snap, ["a", "b"])}
    assert strong.score == base["b"] + 100 and weak.score == base["a"]


@pytest.mark.parametrize(
    ("value", "shown"),
    [("101", "101"), ("-1", "-1"), ("float('nan')", "nan"), ("'50'", "'50'"), ("None", "None"),
     ("True", "True")],
)  # fmt: skip
def test_a_score_outside_0_100_fails_the_pod_naming_plugin_and_node(value: str, shown: str) -> None:
    set_ = plugins(f"NAME = 'bad-score'\ndef score(pod, node, ctx): return {value}\n")
    decision = Algorithm(plugins=set_).decide(pod("p", cpu="1"), NodeInfoSnapshot([node("a")], []))
    assert decision.node is None and decision.plugin_error == "bad-score"
    assert decision.message == (
        f'running "bad-score" score plugin: score {shown} for node a is not a number from 0 to 100'
    )


def test_boundary_scores_are_accepted() -> None:
    for value in ("0", "100", "0.0", "99.5"):
        set_ = plugins(f"def score(pod, node, ctx): return {value}\n")
        assert (
            Algorithm(plugins=set_)
            .decide(pod("p", cpu="1"), NodeInfoSnapshot([node("a")], []))
            .node
            == "a"
        )


# -- containment ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("NAME='boom'\ndef filter(pod, node, ctx): raise RuntimeError('kaput')\n", 'running "boom" filter plugin: RuntimeError: kaput'),
        ("NAME='boom'\ndef score(pod, node, ctx): return 1 / 0\n", 'running "boom" score plugin: ZeroDivisionError: division by zero'),
        ("NAME='boom'\ndef pre_filter(pod, ctx): raise KeyError('x')\ndef filter(pod, node, ctx): return None\n", "running \"boom\" prefilter plugin: KeyError: 'x'"),
        ("NAME='boom'\ndef filter(pod, node, ctx): return 42\n", 'running "boom" filter plugin: returned 42: expected None (fits) or a non-empty reason string'),
        ("NAME='boom'\ndef filter(pod, node, ctx): return '  '\n", "running \"boom\" filter plugin: returned '  ': expected None (fits) or a non-empty reason string"),
        ("NAME='boom'\ndef filter(pod, node, ctx): raise ValueError('x' * 5000)\n", 'running "boom" filter plugin: ValueError: ' + "x" * 300 + "…"),
        ("NAME='boom'\ndef filter(pod, node, ctx): raise ValueError('a\\nb')\n", 'running "boom" filter plugin: ValueError: a\\nb'),
        ("NAME='boom'\ndef filter(pod, node, ctx): raise SystemExit(3)\n", 'running "boom" filter plugin: SystemExit: 3'),
    ],
    ids=["filter-raises", "score-raises", "pre-filter-raises", "bad-return", "blank-reason",
         "long-error-bounded", "newline-escaped", "sys-exit"],
)  # fmt: skip
def test_a_plugin_that_raises_fails_only_that_pod_with_its_name_and_error(
    text: str, message: str
) -> None:
    snap = NodeInfoSnapshot([node("a"), node("b")], [])
    decision = Algorithm(plugins=plugins(text)).decide(pod("p", cpu="1"), snap)
    assert decision.node is None and decision.plugin_error == "boom"
    assert decision.message == message
    # The next pod is decided as usual (plugins that only fail on some pods).
    ok = plugins("def filter(pod, node, ctx):\n    return None\n")
    assert Algorithm(plugins=ok).decide(pod("q", cpu="1"), snap).node == "a"


def test_a_plugin_failing_on_one_pod_only_leaves_the_others_scheduled() -> None:
    set_ = plugins(
        """
        NAME = "picky"
        def filter(pod, node, ctx):
            if pod["metadata"]["name"] == "cursed":
                raise LookupError("no luck")
            return None
        """
    )
    snap = NodeInfoSnapshot([node("a")], [])
    algo = Algorithm(plugins=set_)
    assert algo.decide(pod("cursed", cpu="1"), snap).plugin_error == "picky"
    assert algo.decide(pod("fine", cpu="1"), snap).node == "a"


# -- fallback steps -------------------------------------------------------------------------


SPARE_POLICY = parse_policy(
    {"apiVersion": "kschedctl.io/v1alpha1", "kind": "FallbackPolicy",
     "fallbacks": [{"name": "spare-pool", "nodePool": {"pool": "spare"}}]},
    "policy.yaml",
)  # fmt: skip


def test_fallback_steps_apply_the_plugins_too() -> None:
    nodes = [labelled("main", pool="main"), labelled("spare1", pool="spare"),
             labelled("spare2", pool="spare", tier="gold")]  # fmt: skip
    snap = NodeInfoSnapshot(nodes, [pod("x", node_name="main", cpu="4")])
    p = pod("p", cpu="1", nodeSelector={"pool": "main"})
    without = Algorithm(policy=SPARE_POLICY).decide(p, snap)
    assert without.node == "spare1" and without.step is not None
    decision = Algorithm(policy=SPARE_POLICY, plugins=plugins(REJECT_NOT_GOLD)).decide(p, snap)
    assert decision.node == "spare2" and decision.step is not None
    full = NodeInfoSnapshot(
        nodes, [pod("x", node_name="main", cpu="4"), pod("y", node_name="spare2", cpu="4")]
    )
    failed = Algorithm(policy=SPARE_POLICY, plugins=plugins(REJECT_NOT_GOLD)).decide(p, full)
    assert failed.message == (
        "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) didn't match Pod's node "
        "affinity/selector. "
        "no new claims to deallocate, preemption: 0/3 nodes are available: 1 No preemption victims "
        "found for incoming pod, 2 Preemption is not helpful for scheduling. Fallback steps of "
        "the scheduler's policy tried: spare-pool: 1 node(s) are not gold, 2 Insufficient cpu."
    )


# -- why: the same message as the scheduler -------------------------------------------------


SCENARIOS = {
    "plugin-rejects-the-rest": ([labelled("a"), labelled("b"), node("tiny", cpu="500m")], [], {}, EMPTY),
    "plugin-places-it": ([labelled("a", tier="gold"), labelled("b")], [], {}, EMPTY),
    "fallback-with-plugin": ([labelled("main", pool="main"), labelled("spare1", pool="spare")], [pod("x", node_name="main", cpu="4")], {"nodeSelector": {"pool": "main"}}, SPARE_POLICY),
}  # fmt: skip


@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_why_summary_equals_the_schedulers_failed_scheduling_message(scenario: str) -> None:
    nodes, pods, spec, policy = SCENARIOS[scenario]
    snap = NodeInfoSnapshot(nodes, pods)
    p = pod("p", cpu="1", **spec)
    set_ = plugins(REJECT_NOT_GOLD)
    decision = Algorithm(policy=policy, plugins=set_).decide(p, snap)
    diag = diagnose(p, snap, None, fallback=policy, plugins=set_)
    assert diag.summary == decision.message
    assert diag.schedulable == (decision.node is not None)


def test_why_shows_each_plugins_verdict_per_node_in_its_evaluation_and_json() -> None:
    snap = NodeInfoSnapshot(
        [labelled("a", tier="gold"), labelled("b"), node("tiny", cpu="500m")], []
    )
    set_ = plugins(REJECT_NOT_GOLD, "NAME='sc'\nWEIGHT=2\ndef score(pod, node, ctx): return 40\n")
    diag = diagnose(pod("p", cpu="1"), snap, None, fallback=EMPTY, plugins=set_)
    ev = diag.evaluation
    assert ev is not None and diag.schedulable and diag.summary is None
    verdicts = {v.name: (v.fits, v.plugin, [r.message for r in v.reasons]) for v in ev.nodes}
    assert verdicts == {
        "a": (True, None, []),
        "b": (False, "gold-only", ["node(s) are not gold"]),
        "tiny": (False, "NodeResourcesFit", ["Insufficient cpu"]),
    }
    data = diag.to_dict()["plugins"]
    assert data["plugins"] == ["gold-only", "sc"] and data["error"] is None
    assert data["nodes"] == [
        {"name": "a", "filters": [{"plugin": "gold-only", "fits": True, "reason": None, "score": None}],
         "scores": {"sc": 40.0}},
        {"name": "b", "filters": [{"plugin": "gold-only", "fits": False, "reason": "node(s) are not gold", "score": None}],
         "scores": {}},
    ]  # fmt: skip
    assert any(f.code == "plugins" and "1 of the 2 node(s)" in f.message for f in diag.findings)


def test_why_reports_a_raising_plugin_with_the_schedulers_message() -> None:
    set_ = plugins("NAME='boom'\ndef filter(pod, node, ctx): raise RuntimeError('kaput')\n")
    snap = NodeInfoSnapshot([node("a")], [])
    diag = diagnose(pod("p", cpu="1"), snap, None, fallback=EMPTY, plugins=set_)
    assert diag.summary == 'running "boom" filter plugin: RuntimeError: kaput'
    assert diag.summary == Algorithm(plugins=set_).decide(pod("p", cpu="1"), snap).message
    assert not diag.schedulable
    assert [f.code for f in diag.findings if f.code.startswith("plugin")] == ["plugin-error"]


def test_why_reports_a_pre_filter_rejection_on_every_node() -> None:
    set_ = plugins(
        "NAME='pre'\ndef pre_filter(pod, ctx): return 'pod is not welcome'\ndef filter(pod, node, ctx): return None\n"
    )
    snap = NodeInfoSnapshot([node("a"), node("b")], [])
    diag = diagnose(pod("p", cpu="1"), snap, None, fallback=EMPTY, plugins=set_)
    assert diag.summary == "0/2 nodes are available: pod is not welcome."
    assert diag.evaluation is not None and diag.evaluation.prefilter is not None
    assert {v.plugin for v in diag.evaluation.nodes} == {"pre"}


def test_plugin_report_and_explain_agree_with_the_decision() -> None:
    snap = NodeInfoSnapshot([labelled("a", tier="gold"), labelled("b")], [])
    set_ = plugins(REJECT_NOT_GOLD)
    report = plugin_report(pod("p", cpu="1"), snap, EMPTY, set_)
    assert report.fitting() == ["a"] and report.rejecting() == {"gold-only": ["b"]}
    _policy, _error, stages = explain(pod("p", cpu="1"), snap, EMPTY, plugins=set_)
    assert stages[0].feasible == ("a",) and stages[0].chosen == "a"


# -- the cache keeps what plugins read -------------------------------------------------------


def test_the_cache_keeps_every_annotation_when_plugins_run() -> None:
    p = pod("p", cpu="1")
    p["metadata"]["annotations"] = {
        "example.com/rack": "r1",
        "kubectl.kubernetes.io/last-applied-configuration": "{...}",
    }
    n = node("a")
    n["metadata"]["annotations"] = {"example.com/gpu-memory": "16Gi"}
    plain, with_plugins = SchedulerCache("s"), SchedulerCache("s", annotations=True)
    for cache in (plain, with_plugins):
        cache.replace_nodes([n])
        cache.replace_pods([{**p, "spec": {**p["spec"], "schedulerName": "s"}}])
    kept = next(iter(with_plugins.pending.values()))["metadata"]["annotations"]
    assert kept == {"example.com/rack": "r1"}
    assert "annotations" not in next(iter(plain.pending.values()))["metadata"]
    assert with_plugins.nodes["a"]["metadata"]["annotations"] == {"example.com/gpu-memory": "16Gi"}
    assert "annotations" not in plain.nodes["a"]["metadata"]


# -- the loop: a raising plugin is counted, the scheduler goes on ----------------------------


def test_the_loop_reports_a_raising_plugin_counts_it_and_schedules_the_others() -> None:
    from test_scheduling_loop import FakeApi, eventually, ours, settings

    from kschedctl.model.scheduling.loop import SchedulerLoop

    set_ = plugins(
        """
        NAME = "picky"
        def filter(pod, node, ctx):
            if (pod["metadata"].get("annotations") or {}).get("example.com/curse"):
                raise LookupError("cursed pod")
            return None
        """
    )
    api = FakeApi([node("a"), node("b")])
    cursed = ours("cursed")
    cursed["metadata"]["annotations"] = {"example.com/curse": "yes"}
    api.add_pod(cursed)
    api.add_pod(ours("fine1"))
    loop = SchedulerLoop(api, settings(algorithm=Algorithm(plugins=set_)))  # type: ignore[arg-type]
    assert 'kschedctl_scheduler_plugin_errors_total{plugin="picky"} 0' in loop.metrics.render()
    loop.start()
    try:
        eventually(lambda: len(api.binds) == 1)
        note = eventually(
            lambda: next((e["note"] for e in api.events if e["reason"] == "FailedScheduling"), None)
        )
        assert note == 'running "picky" filter plugin: LookupError: cursed pod'
        assert loop.metrics.value("plugin_errors_total", (("plugin", "picky"),)) >= 1
        api.add_pod(ours("fine2"))  # still serving after the error
        eventually(lambda: len(api.binds) == 2)
        assert api.node_of("cursed") is None
        assert loop.healthy() == (True, "ok")
    finally:
        loop.shutdown(grace=2)
