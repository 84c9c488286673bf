"""Write the generated part of the corpus: ``mut-*`` documents that each break exactly one rule
kube-scheduler v1.36 enforces, and ``edge-*`` documents it accepts although they look wrong.

Run ``python tests/corpus/mutate.py`` after changing a case; it rewrites every generated file
(and deletes generated files no longer listed), so the committed corpus is what this script says.
The rules come from kubernetes v1.36.3: pkg/scheduler/apis/config/validation/validation.go,
validation_pluginargs.go, component-base/config/validation (client connection, leader election),
pkg/scheduler/apis/config/v1/defaults.go (what defaulting repairs), and
pkg/scheduler/framework/runtime/framework.go (what building a profile refuses).
"""

from __future__ import annotations

import copy
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

CONFIGS = Path(__file__).parent / "configs"
API = "kubescheduler.config.k8s.io/v1"

Doc = dict[str, Any]


def base() -> Doc:
    """A config kube-scheduler v1.36 accepts: one named profile, leader election on its own Lease."""
    return {
        "apiVersion": API,
        "kind": "KubeSchedulerConfiguration",
        "leaderElection": {
            "leaderElect": True,
            "resourceName": "my-scheduler",
            "resourceNamespace": "kube-system",
        },
        "profiles": [{"schedulerName": "my-scheduler"}],
    }


def profile(doc: Doc, i: int = 0) -> Doc:
    return doc["profiles"][i]  # type: ignore[no-any-return]


def plugins(
    doc: Doc, point: str, enabled: list[Any] | None = None, disabled: list[Any] | None = None
) -> Doc:
    sets = profile(doc).setdefault("plugins", {}).setdefault(point, {})
    if enabled is not None:
        sets["enabled"] = [p if isinstance(p, dict) else {"name": p} for p in enabled]
    if disabled is not None:
        sets["disabled"] = [p if isinstance(p, dict) else {"name": p} for p in disabled]
    return doc


def args(doc: Doc, name: str, value: Any, i: int = 0) -> Doc:
    profile(doc, i).setdefault("pluginConfig", []).append({"name": name, "args": value})
    return doc


def top(**fields: Any) -> Callable[[Doc], Doc]:
    def apply(doc: Doc) -> Doc:
        doc.update(fields)
        return doc

    return apply


def le(**fields: Any) -> Callable[[Doc], Doc]:
    def apply(doc: Doc) -> Doc:
        doc["leaderElection"].update(fields)
        return doc

    return apply


def cc(**fields: Any) -> Callable[[Doc], Doc]:
    def apply(doc: Doc) -> Doc:
        doc.setdefault("clientConnection", {}).update(fields)
        return doc

    return apply


def second_profile(**fields: Any) -> Callable[[Doc], Doc]:
    def apply(doc: Doc) -> Doc:
        doc["profiles"].append({"schedulerName": "other", **fields})
        return doc

    return apply


def extenders(*items: Doc) -> Callable[[Doc], Doc]:
    def apply(doc: Doc) -> Doc:
        doc["extenders"] = list(items)
        return doc

    return apply


def fit(value: Doc) -> Callable[[Doc], Doc]:
    return lambda d: args(d, "NodeResourcesFit", value)


def spread(value: Doc) -> Callable[[Doc], Doc]:
    return lambda d: args(d, "PodTopologySpread", value)


def preemption(value: Doc) -> Callable[[Doc], Doc]:
    return lambda d: args(d, "DefaultPreemption", value)


def balanced(value: Doc) -> Callable[[Doc], Doc]:
    return lambda d: args(d, "NodeResourcesBalancedAllocation", value)


def affinity(value: Doc) -> Callable[[Doc], Doc]:
    return lambda d: args(d, "NodeAffinity", {"addedAffinity": value})


def rtc(shape: list[Doc], resources: list[Doc] | None = None) -> Callable[[Doc], Doc]:
    strategy: Doc = {
        "type": "RequestedToCapacityRatio",
        "requestedToCapacityRatio": {"shape": shape},
    }
    if resources is not None:
        strategy["resources"] = resources
    return fit({"scoringStrategy": strategy})


def required(*expressions: Doc) -> Doc:
    return {
        "requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": list(expressions)}]
        }
    }


def constraint(**fields: Any) -> Doc:
    return {
        "maxSkew": 1,
        "topologyKey": "topology.kubernetes.io/zone",
        "whenUnsatisfiable": "ScheduleAnyway",
        **fields,
    }


def ext(**fields: Any) -> Doc:
    return {"urlPrefix": "http://127.0.0.1:8888/", "filterVerb": "filter", **fields}


def chain(*steps: Callable[[Doc], Doc]) -> Callable[[Doc], Doc]:
    def apply(doc: Doc) -> Doc:
        for step in steps:
            doc = step(doc)
        return doc

    return apply


def drop(*path: str) -> Callable[[Doc], Doc]:
    def apply(doc: Doc) -> Doc:
        node: Any = doc
        for key in path[:-1]:
            node = node[key]
        del node[path[-1]]
        return doc

    return apply


def qs_all_disabled(doc: Doc) -> Doc:
    return plugins(doc, "queueSort", disabled=["*"])


# name -> transformation of base(); "mut-" documents break one rule, "edge-" ones must be accepted.
MUTATIONS: dict[str, Callable[[Doc], Doc]] = {
    # --- top level (validation.go ValidateKubeSchedulerConfiguration) ---
    "mut-parallelism-zero": top(parallelism=0),
    "mut-parallelism-negative": top(parallelism=-4),
    "mut-percentage-over-100": top(percentageOfNodesToScore=101),
    "mut-percentage-negative": top(percentageOfNodesToScore=-1),
    "mut-profile-percentage-over-100": lambda d: (
        profile(d).update(percentageOfNodesToScore=150),
        d,
    )[1],
    "mut-pod-initial-backoff-zero": top(podInitialBackoffSeconds=0),
    "mut-pod-max-backoff-below-initial": top(podInitialBackoffSeconds=10, podMaxBackoffSeconds=5),
    "edge-profiles-empty-list": top(profiles=[]),
    "mut-profile-duplicate-name": second_profile(schedulerName="my-scheduler"),
    "mut-profile-empty-name": lambda d: (profile(d).update(schedulerName=""), d)[1],
    "mut-second-profile-different-queuesort": second_profile(
        plugins={"queueSort": {"enabled": [{"name": "PrioritySort"}], "disabled": [{"name": "*"}]}}
    ),
    "mut-queuesort-two-enabled": lambda d: plugins(
        d, "queueSort", enabled=["PrioritySort", "PrioritySort"], disabled=["*"]
    ),
    # --- client connection (component-base ValidateClientConnectionConfiguration) ---
    "mut-clientconnection-burst-negative": cc(burst=-1),
    # --- leader election (component-base ValidateLeaderElectionConfiguration + resourceLock) ---
    "mut-le-lease-not-above-renew": le(leaseDuration="10s", renewDeadline="10s"),
    "mut-le-lease-negative": le(leaseDuration="-1s"),
    "mut-le-renew-negative": le(renewDeadline="-1s"),
    "mut-le-retry-negative": le(retryPeriod="-2s"),
    "mut-le-renew-within-retry-jitter": le(
        leaseDuration="15s", renewDeadline="2s", retryPeriod="2s"
    ),
    "mut-le-resourcelock-endpoints": le(resourceLock="endpoints"),
    "mut-le-resourcelock-configmapsleases": le(resourceLock="configmapsleases"),
    "mut-le-resourcelock-bogus": le(resourceLock="bogus"),
    "mut-le-duration-garbage": le(leaseDuration="fifteen seconds"),
    "mut-le-duration-number": le(leaseDuration=15),
    "mut-le-leaderelect-string": le(leaderElect="yes please"),
    # --- decoding (strict: unknown fields, wrong types) ---
    "mut-unknown-top-field": top(schedulerName="my-scheduler"),
    "mut-unknown-profile-field": lambda d: (profile(d).update(name="x"), d)[1],
    "mut-removed-field-algorithmsource": top(algorithmSource={"provider": "DefaultProvider"}),
    "mut-removed-field-healthzbindaddress": top(healthzBindAddress="0.0.0.0:10251"),
    "mut-removed-field-metricsbindaddress": top(metricsBindAddress="0.0.0.0:10251"),
    "mut-removed-field-lockobjectname": le(lockObjectName="my-scheduler"),
    "mut-parallelism-string": top(parallelism="16"),
    "mut-profiles-not-a-list": top(profiles={"schedulerName": "my-scheduler"}),
    "mut-plugin-weight-string": lambda d: plugins(
        d, "score", enabled=[{"name": "ImageLocality", "weight": "high"}]
    ),
    "mut-apiversion-v1beta3": top(apiVersion="kubescheduler.config.k8s.io/v1beta3"),
    "mut-apiversion-v1beta2": top(apiVersion="kubescheduler.config.k8s.io/v1beta2"),
    "mut-apiversion-v1beta1": top(apiVersion="kubescheduler.config.k8s.io/v1beta1"),
    "mut-apiversion-v1alpha1": top(apiVersion="kubescheduler.config.k8s.io/v1alpha1"),
    "mut-apiversion-v2": top(apiVersion="kubescheduler.config.k8s.io/v2"),
    "mut-apiversion-missing": drop("apiVersion"),
    "mut-kind-misspelled": top(kind="KubeSchedulerConfig"),
    "mut-kind-missing": drop("kind"),
    "mut-apiversion-componentconfig": top(apiVersion="componentconfig/v1alpha1"),
    # --- plugins (framework runtime: existence, extension points, counts, duplicates) ---
    "mut-plugin-unknown-filter": lambda d: plugins(d, "filter", enabled=["NodeNames"]),
    "mut-plugin-unknown-score": lambda d: plugins(
        d, "score", enabled=[{"name": "MyCustomPluginA", "weight": 2}]
    ),
    "mut-plugin-unknown-multipoint": lambda d: plugins(d, "multiPoint", enabled=["MyPlugin"]),
    "mut-plugin-removed-nodelabel": lambda d: plugins(d, "filter", enabled=["NodeLabel"]),
    "mut-plugin-removed-serviceaffinity": lambda d: plugins(
        d, "filter", enabled=["ServiceAffinity"]
    ),
    "mut-plugin-removed-nodepreferavoidpods": lambda d: plugins(
        d, "score", enabled=[{"name": "NodePreferAvoidPods", "weight": 1}]
    ),
    "mut-plugin-removed-leastallocated": lambda d: plugins(
        d, "score", enabled=[{"name": "NodeResourcesLeastAllocated", "weight": 1}]
    ),
    "mut-plugin-removed-mostallocated": lambda d: plugins(
        d, "score", enabled=[{"name": "NodeResourcesMostAllocated", "weight": 1}]
    ),
    "mut-plugin-removed-selectorspread": lambda d: plugins(
        d, "score", enabled=[{"name": "SelectorSpread", "weight": 1}]
    ),
    "mut-plugin-removed-requestedtocapacityratio": lambda d: plugins(
        d, "score", enabled=[{"name": "RequestedToCapacityRatio", "weight": 1}]
    ),
    "mut-plugin-removed-nodevolumelimits-ebs": lambda d: plugins(
        d, "filter", enabled=["EBSLimits"]
    ),
    "mut-plugin-outoftree-coscheduling": lambda d: plugins(
        d, "multiPoint", enabled=["Coscheduling"]
    ),
    "mut-plugin-outoftree-capacityscheduling": lambda d: plugins(
        d, "preFilter", enabled=["CapacityScheduling"]
    ),
    "mut-plugin-outoftree-noderesourcetopologymatch": lambda d: plugins(
        d, "filter", enabled=["NodeResourceTopologyMatch"]
    ),
    "mut-plugin-outoftree-targetloadpacking": lambda d: plugins(
        d, "score", enabled=[{"name": "TargetLoadPacking", "weight": 1}]
    ),
    "mut-plugin-outoftree-queuesort": lambda d: plugins(
        d, "queueSort", enabled=["Coscheduling"], disabled=["*"]
    ),
    "mut-plugin-wrong-point-imagelocality-filter": lambda d: plugins(
        d, "filter", enabled=["ImageLocality"]
    ),
    "mut-plugin-wrong-point-nodename-score": lambda d: plugins(
        d, "score", enabled=[{"name": "NodeName", "weight": 1}]
    ),
    "mut-plugin-wrong-point-prioritysort-filter": lambda d: plugins(
        d, "filter", enabled=["PrioritySort"]
    ),
    "mut-plugin-wrong-point-defaultbinder-prebind": lambda d: plugins(
        d, "preBind", enabled=["DefaultBinder"]
    ),
    "mut-plugin-wrong-point-fit-queuesort": lambda d: plugins(
        d, "queueSort", enabled=["NodeResourcesFit"], disabled=["*"]
    ),
    "mut-plugin-wrong-point-preemption-filter": lambda d: plugins(
        d, "filter", enabled=["DefaultPreemption"]
    ),
    "mut-plugin-duplicate-filter": lambda d: plugins(
        d, "filter", enabled=["NodeAffinity", "NodeAffinity"], disabled=["*"]
    ),
    "mut-plugin-duplicate-score": lambda d: plugins(
        d,
        "score",
        enabled=[{"name": "ImageLocality", "weight": 1}, {"name": "ImageLocality", "weight": 2}],
        disabled=["*"],
    ),
    "mut-plugin-duplicate-multipoint": lambda d: plugins(
        d, "multiPoint", enabled=["NodeName", "NodeName"], disabled=["*"]
    ),
    "mut-queuesort-all-disabled": qs_all_disabled,
    "mut-queuesort-prioritysort-disabled": lambda d: plugins(
        d, "queueSort", disabled=["PrioritySort"]
    ),
    "mut-multipoint-all-disabled": lambda d: plugins(d, "multiPoint", disabled=["*"]),
    "mut-bind-all-disabled": lambda d: plugins(d, "bind", disabled=["*"]),
    "mut-bind-defaultbinder-disabled": lambda d: plugins(d, "bind", disabled=["DefaultBinder"]),
    "mut-score-weight-negative": lambda d: plugins(
        d, "score", enabled=[{"name": "ImageLocality", "weight": -1}]
    ),
    "edge-score-weight-over-max": lambda d: plugins(
        d, "score", enabled=[{"name": "ImageLocality", "weight": 2147483647}]
    ),
    "mut-plugin-name-empty": lambda d: plugins(d, "filter", enabled=[{"name": ""}]),
    "mut-plugin-name-lowercase": lambda d: plugins(d, "filter", enabled=["nodeaffinity"]),
    # --- pluginConfig (validation.go validatePluginConfig) ---
    "mut-pluginconfig-duplicate": chain(
        fit({"scoringStrategy": {"type": "LeastAllocated"}}),
        fit({"scoringStrategy": {"type": "MostAllocated"}}),
    ),
    "edge-pluginconfig-removed-plugin": lambda d: args(d, "NodeLabel", {"presentLabels": ["zone"]}),
    "mut-pluginconfig-args-wrong-kind": lambda d: args(
        d, "NodeResourcesFit", {"apiVersion": API, "kind": "PodTopologySpreadArgs"}
    ),
    "mut-pluginconfig-args-unknown-field": fit(
        {"scoringStrategy": {"type": "LeastAllocated"}, "bogus": True}
    ),
    "mut-pluginconfig-args-not-a-map": lambda d: args(d, "NodeResourcesFit", ["LeastAllocated"]),
    "edge-pluginconfig-unknown-plugin-args": lambda d: args(
        d, "Coscheduling", {"permitWaitingTimeSeconds": 10}
    ),
    "edge-pluginconfig-name-empty": lambda d: args(d, "", {}),
    # --- DefaultPreemption args ---
    "mut-preemption-both-zero": preemption(
        {"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 0}
    ),
    "mut-preemption-percentage-over-100": preemption({"minCandidateNodesPercentage": 101}),
    "mut-preemption-percentage-negative": preemption({"minCandidateNodesPercentage": -1}),
    "mut-preemption-absolute-negative": preemption({"minCandidateNodesAbsolute": -1}),
    # --- InterPodAffinity args ---
    "mut-interpodaffinity-weight-over-100": lambda d: args(
        d, "InterPodAffinity", {"hardPodAffinityWeight": 101}
    ),
    "mut-interpodaffinity-weight-negative": lambda d: args(
        d, "InterPodAffinity", {"hardPodAffinityWeight": -1}
    ),
    # --- PodTopologySpread args ---
    "mut-spread-maxskew-zero": spread(
        {"defaultingType": "List", "defaultConstraints": [constraint(maxSkew=0)]}
    ),
    "mut-spread-labelselector": spread(
        {
            "defaultingType": "List",
            "defaultConstraints": [constraint(labelSelector={"matchLabels": {"a": "b"}})],
        }
    ),
    "mut-spread-topologykey-empty": spread(
        {"defaultingType": "List", "defaultConstraints": [constraint(topologyKey="")]}
    ),
    "mut-spread-topologykey-invalid": spread(
        {
            "defaultingType": "List",
            "defaultConstraints": [constraint(topologyKey="not a/label/key")],
        }
    ),
    "mut-spread-whenunsatisfiable-empty": spread(
        {"defaultingType": "List", "defaultConstraints": [constraint(whenUnsatisfiable="")]}
    ),
    "mut-spread-whenunsatisfiable-bogus": spread(
        {
            "defaultingType": "List",
            "defaultConstraints": [constraint(whenUnsatisfiable="Sometimes")],
        }
    ),
    "mut-spread-duplicate-constraint": spread(
        {"defaultingType": "List", "defaultConstraints": [constraint(), constraint(maxSkew=2)]}
    ),
    "mut-spread-defaultingtype-bogus": spread({"defaultingType": "Auto"}),
    "mut-spread-system-with-constraints": spread(
        {"defaultingType": "System", "defaultConstraints": [constraint()]}
    ),
    # --- NodeResourcesFit args ---
    "mut-fit-ignoredresources-invalid": fit({"ignoredResources": ["not a resource!"]}),
    "mut-fit-ignoredresourcegroups-slash": fit({"ignoredResourceGroups": ["example.com/gpu"]}),
    "mut-fit-ignoredresourcegroups-invalid": fit({"ignoredResourceGroups": ["Bad_Group!"]}),
    "mut-fit-strategy-type-bogus": fit({"scoringStrategy": {"type": "BestFit"}}),
    "mut-fit-strategy-rtc-without-shape": fit(
        {"scoringStrategy": {"type": "RequestedToCapacityRatio"}}
    ),
    "mut-fit-strategy-rtc-on-mostallocated": fit(
        {
            "scoringStrategy": {
                "type": "MostAllocated",
                "requestedToCapacityRatio": {
                    "shape": [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}]
                },
            }
        }
    ),
    "mut-fit-resource-weight-zero-explicit-over": fit(
        {
            "scoringStrategy": {
                "type": "LeastAllocated",
                "resources": [{"name": "cpu", "weight": 101}],
            }
        }
    ),
    "mut-fit-resource-weight-negative": fit(
        {
            "scoringStrategy": {
                "type": "LeastAllocated",
                "resources": [{"name": "cpu", "weight": -1}],
            }
        }
    ),
    "edge-fit-resource-name-invalid": fit(
        {
            "scoringStrategy": {
                "type": "LeastAllocated",
                "resources": [{"name": "cpu cores", "weight": 1}],
            }
        }
    ),
    "edge-fit-resource-duplicate": fit(
        {
            "scoringStrategy": {
                "type": "LeastAllocated",
                "resources": [{"name": "cpu", "weight": 1}, {"name": "cpu", "weight": 2}],
            }
        }
    ),
    "mut-rtc-shape-empty": rtc([]),
    "mut-rtc-shape-unsorted": rtc(
        [{"utilization": 100, "score": 10}, {"utilization": 0, "score": 0}]
    ),
    "mut-rtc-shape-utilization-over-100": rtc(
        [{"utilization": 0, "score": 0}, {"utilization": 101, "score": 10}]
    ),
    "mut-rtc-shape-score-over-10": rtc(
        [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 11}]
    ),
    "mut-rtc-shape-score-negative": rtc(
        [{"utilization": 0, "score": -1}, {"utilization": 100, "score": 10}]
    ),
    "mut-rtc-shape-duplicate-utilization": rtc(
        [{"utilization": 50, "score": 0}, {"utilization": 50, "score": 10}]
    ),
    "mut-rtc-resource-weight-over-100": rtc(
        [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}],
        [{"name": "cpu", "weight": 101}],
    ),
    # --- NodeResourcesBalancedAllocation args ---
    "mut-balanced-resource-weight-not-1": balanced({"resources": [{"name": "cpu", "weight": 2}]}),
    "mut-balanced-resource-duplicate": balanced(
        {"resources": [{"name": "cpu", "weight": 1}, {"name": "cpu", "weight": 1}]}
    ),
    "edge-balanced-resource-name-invalid": balanced(
        {"resources": [{"name": "cpu cores", "weight": 1}]}
    ),
    # --- NodeAffinity args (nodeaffinity.NewNodeSelector / NewPreferredSchedulingTerms) ---
    "mut-affinity-operator-bogus": affinity(
        required({"key": "zone", "operator": "Near", "values": ["a"]})
    ),
    "mut-affinity-in-without-values": affinity(
        required({"key": "zone", "operator": "In", "values": []})
    ),
    "mut-affinity-exists-with-values": affinity(
        required({"key": "zone", "operator": "Exists", "values": ["a"]})
    ),
    "mut-affinity-key-invalid": affinity(required({"key": "not a key", "operator": "Exists"})),
    "mut-affinity-gt-not-integer": affinity(
        required({"key": "cores", "operator": "Gt", "values": ["many"]})
    ),
    "mut-affinity-preferred-operator-bogus": affinity(
        {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {
                    "weight": 1,
                    "preference": {
                        "matchExpressions": [{"key": "zone", "operator": "Near", "values": ["a"]}]
                    },
                }
            ]
        }
    ),
    "edge-affinity-matchfields-bad-key": affinity(
        {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {
                        "matchFields": [
                            {"key": "metadata.namespace", "operator": "In", "values": ["a"]}
                        ]
                    }
                ]
            }
        }
    ),
    # --- VolumeBinding args ---
    "mut-volumebinding-timeout-negative": lambda d: args(
        d, "VolumeBinding", {"bindTimeoutSeconds": -1}
    ),
    # --- DynamicResources args (feature gates off by default in 1.36 decide) ---
    "mut-dra-filtertimeout-negative": lambda d: args(
        d, "DynamicResources", {"filterTimeout": "-1s"}
    ),
    # --- extenders (validation.go validateExtenders) ---
    "mut-extender-prioritize-weight-zero": extenders(ext(prioritizeVerb="prioritize", weight=0)),
    "mut-extender-prioritize-weight-negative": extenders(
        ext(prioritizeVerb="prioritize", weight=-1)
    ),
    "mut-extender-two-binders": extenders(
        ext(bindVerb="bind"), ext(urlPrefix="http://127.0.0.1:9999/", bindVerb="bind")
    ),
    "mut-extender-managed-resource-duplicate": extenders(
        ext(managedResources=[{"name": "example.com/foo"}, {"name": "example.com/foo"}])
    ),
    "mut-extender-managed-resource-not-extended": extenders(
        ext(managedResources=[{"name": "cpu"}])
    ),
    "mut-extender-managed-resource-invalid": extenders(
        ext(managedResources=[{"name": "example.com/foo bar"}])
    ),
    "mut-extender-managed-resource-name-too-long": extenders(
        ext(managedResources=[{"name": "example.com/" + "a" * 64}])
    ),
    "mut-extender-managed-resource-contains-kubernetes-io": extenders(
        ext(managedResources=[{"name": "notkubernetes.io/foo"}])
    ),
    "mut-extender-tls-insecure-and-cafile": extenders(
        ext(tlsConfig={"insecure": True, "caFile": "/etc/ca.crt"})
    ),
    "mut-extender-unknown-field": extenders(ext(bogus=1)),
    # --- edge cases kube-scheduler accepts (defaulting repairs them, or they are simply valid) ---
    "edge-le-retry-zero": le(retryPeriod="0s"),
    "edge-le-all-durations-zero": le(leaseDuration="0s", renewDeadline="0s", retryPeriod="0s"),
    "edge-le-resourcename-empty": le(resourceName="", resourceNamespace=""),
    "edge-le-resourcelock-empty": le(resourceLock=""),
    "edge-le-off-resourcelock-endpoints": le(leaderElect=False, resourceLock="endpoints"),
    "edge-parallelism-omitted": lambda d: d,
    "edge-percentage-zero": top(percentageOfNodesToScore=0),
    "edge-percentage-100": top(percentageOfNodesToScore=100),
    "edge-fit-resource-weight-zero": fit(
        {
            "scoringStrategy": {
                "type": "LeastAllocated",
                "resources": [{"name": "cpu", "weight": 0}, {"name": "memory"}],
            }
        }
    ),
    "edge-balanced-resource-weight-zero": balanced({"resources": [{"name": "cpu", "weight": 0}]}),
    "edge-score-weight-zero": lambda d: plugins(
        d, "score", enabled=[{"name": "ImageLocality", "weight": 0}]
    ),
    "edge-queuesort-replaced": lambda d: plugins(
        d, "queueSort", enabled=["PrioritySort"], disabled=["*"]
    ),
    "edge-multipoint-reenable-default": lambda d: plugins(d, "multiPoint", enabled=["NodeName"]),
    "edge-multipoint-and-specific-point": chain(
        lambda d: plugins(d, "multiPoint", enabled=["ImageLocality"]),
        lambda d: plugins(d, "score", enabled=[{"name": "ImageLocality", "weight": 5}]),
    ),
    "edge-disable-unknown-plugin": lambda d: plugins(d, "filter", disabled=["NoSuchPlugin"]),
    "edge-score-disabled-all": lambda d: plugins(d, "score", disabled=["*"]),
    "edge-pluginconfig-disabled-plugin": chain(
        lambda d: plugins(d, "score", disabled=["ImageLocality"]),
        lambda d: args(d, "InterPodAffinity", {"hardPodAffinityWeight": 5}),
    ),
    "edge-pluginconfig-args-with-typemeta": lambda d: args(
        d,
        "NodeResourcesFit",
        {
            "apiVersion": API,
            "kind": "NodeResourcesFitArgs",
            "scoringStrategy": {"type": "MostAllocated"},
        },
    ),
    "edge-profiles-omitted": drop("profiles"),
    "edge-profile-name-omitted": lambda d: (profile(d).pop("schedulerName"), d)[1],
    "edge-two-profiles-same-queuesort": second_profile(),
    "edge-spread-list-without-constraints": spread({"defaultingType": "List"}),
    "edge-spread-system": spread({"defaultingType": "System"}),
    "edge-preemption-absolute-zero": preemption(
        {"minCandidateNodesAbsolute": 0, "minCandidateNodesPercentage": 10}
    ),
    "edge-extender-one-binder": extenders(
        ext(bindVerb="bind", prioritizeVerb="prioritize", weight=1)
    ),
    "edge-extender-tls-insecure": extenders(ext(tlsConfig={"insecure": True})),
    "edge-affinity-valid": affinity(required({"key": "zone", "operator": "In", "values": ["a"]})),
    "edge-clientconnection-qps-zero": cc(qps=0, burst=0, contentType="", acceptContentTypes=""),
    "edge-default-scheduler-name": lambda d: (
        profile(d).update(schedulerName="default-scheduler"),
        d,
    )[1],
    "edge-rtc-single-point": rtc([{"utilization": 50, "score": 5}]),
    "edge-volumebinding-timeout-zero": lambda d: args(
        d, "VolumeBinding", {"bindTimeoutSeconds": 0}
    ),
    # --- durations (metav1.Duration: time.ParseDuration; a null is "", never zero) ---
    "mut-le-duration-null": le(leaseDuration=None),
    "mut-le-duration-overflow": le(leaseDuration="2562048h"),
    "edge-le-duration-greek-mu": le(leaseDuration="15000000\u03bcs"),
    "mut-extender-httptimeout-null": extenders(ext(httpTimeout=None)),
    # --- null list items decode into the zero struct ---
    "mut-fit-ignoredresources-null-item": fit({"ignoredResources": [None]}),
    "edge-affinity-values-null-item": affinity(
        required({"key": "zone", "operator": "In", "values": [None]})
    ),
    "mut-affinity-gt-int64-overflow": affinity(
        required({"key": "cores", "operator": "Gt", "values": ["9223372036854775808"]})
    ),
    "edge-queuesort-weight-zero-vs-absent": chain(
        lambda d: plugins(d, "queueSort", enabled=[{"name": "PrioritySort", "weight": 0}]),
        second_profile(plugins={"queueSort": {"enabled": [{"name": "PrioritySort"}]}}),
    ),
    "edge-queuesort-null-vs-empty-name": chain(
        lambda d: plugins(d, "queueSort", disabled=[{"name": None}]),
        second_profile(plugins={"queueSort": {"disabled": [{"name": ""}]}}),
    ),
    "edge-plugin-disabled-empty-name": lambda d: plugins(d, "filter", disabled=[{"name": ""}]),
    # --- score weights (framework.go getValidScoreWeights: int64 sum, wraps on negatives) ---
    "edge-multipoint-weight-negative": lambda d: plugins(
        d, "multiPoint", enabled=[{"name": "ImageLocality", "weight": -5}]
    ),
    "mut-multipoint-weight-negative-not-last": lambda d: plugins(
        d, "multiPoint", enabled=[{"name": "TaintToleration", "weight": -5}]
    ),
    "edge-score-weight-negative-last": chain(
        lambda d: plugins(
            d, "multiPoint", enabled=["PrioritySort", "DefaultBinder"], disabled=["*"]
        ),
        lambda d: plugins(d, "score", enabled=[{"name": "ImageLocality", "weight": -1}]),
    ),
    # --- extender TLS data ([]byte: base64 of a PEM file, loaded when extenders are built) ---
    "mut-extender-cadata-not-base64": extenders(ext(tlsConfig={"caData": "not base64!"})),
    "mut-extender-cadata-not-pem": extenders(ext(tlsConfig={"caData": "YWJj"})),
    "mut-extender-certdata-not-pem": extenders(
        ext(tlsConfig={"certData": "YWJj", "keyData": "YWJj"})
    ),
}

BAD_JSON_HEAD = (
    '{"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"'
)

# Documents whose point is their text, not their data.
RAW: dict[str, str] = {
    "mut-json-trailing-comma.json": BAD_JSON_HEAD
    + ', "profiles": [{"schedulerName": "my-scheduler"},]}\n',
    "mut-json-comment.json": BAD_JSON_HEAD
    + ', // my scheduler\n "profiles": [{"schedulerName": "my-scheduler"}]}\n',
    "mut-json-single-quotes.json": "{'apiVersion': 'kubescheduler.config.k8s.io/v1', 'kind': 'KubeSchedulerConfiguration'}\n",
    "mut-parallelism-int32-overflow.yaml": f"apiVersion: {API}\nkind: KubeSchedulerConfiguration\nparallelism: 99999999999\nprofiles:\n- schedulerName: my-scheduler\n",
    "mut-percentage-int32-overflow.yaml": f"apiVersion: {API}\nkind: KubeSchedulerConfiguration\npercentageOfNodesToScore: 4294967296\nprofiles:\n- schedulerName: my-scheduler\n",
    "mut-parallelism-fraction.yaml": f"apiVersion: {API}\nkind: KubeSchedulerConfiguration\nparallelism: 16.5\nprofiles:\n- schedulerName: my-scheduler\n",
    "mut-schedulername-empty-string.yaml": f'apiVersion: {API}\nkind: KubeSchedulerConfiguration\nprofiles:\n- schedulerName: ""\n',
    "mut-schedulername-null-second.yaml": f"apiVersion: {API}\nkind: KubeSchedulerConfiguration\nprofiles:\n- schedulerName: a\n- schedulerName: null\n",
    "mut-duplicate-key.yaml": f"apiVersion: {API}\nkind: KubeSchedulerConfiguration\nparallelism: 8\nparallelism: 16\nprofiles:\n- schedulerName: my-scheduler\n",
    "mut-duplicate-key-profile.yaml": f"apiVersion: {API}\nkind: KubeSchedulerConfiguration\nprofiles:\n- schedulerName: a\n  schedulerName: b\n",
    "mut-tab-indent.yaml": f"apiVersion: {API}\nkind: KubeSchedulerConfiguration\nprofiles:\n-\tschedulerName: my-scheduler\n",
    "mut-yaml-broken-indent.yaml": f"apiVersion: {API}\nkind: KubeSchedulerConfiguration\nprofiles:\n  - schedulerName: my-scheduler\n   plugins: {{}}\n",
    "mut-empty-file.yaml": "",
    "mut-comment-only.yaml": "# nothing here yet\n",
    "mut-top-level-list.yaml": f"- apiVersion: {API}\n  kind: KubeSchedulerConfiguration\n",
    "mut-multi-doc-first-invalid.yaml": f"apiVersion: {API}\nkind: KubeSchedulerConfiguration\nparallelism: 0\n---\napiVersion: {API}\nkind: KubeSchedulerConfiguration\n",
    "mut-le-duration-no-unit.yaml": f'apiVersion: {API}\nkind: KubeSchedulerConfiguration\nleaderElection:\n  leaseDuration: "15"\n',
    "edge-leaderelect-yes.yaml": f"apiVersion: {API}\nkind: KubeSchedulerConfiguration\nleaderElection:\n  leaderElect: yes\n",
    "edge-parallelism-float-integral.yaml": f"apiVersion: {API}\nkind: KubeSchedulerConfiguration\nparallelism: 16.0\nprofiles:\n- schedulerName: my-scheduler\n",
    "edge-parallelism-exponent.yaml": f"apiVersion: {API}\nkind: KubeSchedulerConfiguration\nparallelism: 1e1\nprofiles:\n- schedulerName: my-scheduler\n",
    "edge-multi-doc-second-invalid.yaml": f"apiVersion: {API}\nkind: KubeSchedulerConfiguration\nprofiles:\n- schedulerName: my-scheduler\n---\napiVersion: {API}\nkind: KubeSchedulerConfiguration\nparallelism: 0\n---\nthis is: [not, even, valid\n",
    "edge-multi-doc-leading-separator.yaml": f"---\napiVersion: {API}\nkind: KubeSchedulerConfiguration\nprofiles:\n- schedulerName: my-scheduler\n---\n",
    "edge-json-valid.json": BAD_JSON_HEAD + ', "profiles": [{"schedulerName": "my-scheduler"}]}\n',
    "mut-json-flow-yaml.yaml": "{apiVersion: kubescheduler.config.k8s.io/v1, kind: KubeSchedulerConfiguration}\n",
    "edge-minimal.yaml": f"apiVersion: {API}\nkind: KubeSchedulerConfiguration\n",
    "edge-anchors-and-aliases.yaml": f"apiVersion: {API}\nkind: KubeSchedulerConfiguration\nprofiles:\n- schedulerName: a\n  plugins: &p\n    score:\n      disabled:\n      - name: ImageLocality\n- schedulerName: b\n  plugins: *p\n",
    "edge-null-sections.yaml": f"apiVersion: {API}\nkind: KubeSchedulerConfiguration\nleaderElection:\nclientConnection:\nextenders:\nprofiles:\n- schedulerName: my-scheduler\n  plugins:\n  pluginConfig:\n",
    "edge-leaderelect-quoted-true-lease.yaml": f"apiVersion: {API}\nkind: KubeSchedulerConfiguration\nleaderElection:\n  leaderElect: true\n  leaseDuration: 1m\n  renewDeadline: 45s\n  retryPeriod: 500ms\n",
    "edge-crlf-line-endings.yaml": f"apiVersion: {API}\r\nkind: KubeSchedulerConfiguration\r\nprofiles:\r\n- schedulerName: my-scheduler\r\n",
    "mut-profiles-null-item.yaml": f"apiVersion: {API}\nkind: KubeSchedulerConfiguration\nprofiles:\n-\n- schedulerName: my-scheduler\n",
    "mut-plugin-enabled-null-item.yaml": f"apiVersion: {API}\nkind: KubeSchedulerConfiguration\nprofiles:\n- schedulerName: my-scheduler\n  plugins:\n    filter:\n      enabled:\n      -\n",
    "mut-yaml-directive-1.2.yaml": f"%YAML 1.2\n---\napiVersion: {API}\nkind: KubeSchedulerConfiguration\nprofiles:\n- schedulerName: my-scheduler\n",
    "edge-yaml-directive-1.1.yaml": f"%YAML 1.1\n---\napiVersion: {API}\nkind: KubeSchedulerConfiguration\nprofiles:\n- schedulerName: my-scheduler\n",
    "mut-empty-first-document.yaml": f"---\n---\napiVersion: {API}\nkind: KubeSchedulerConfiguration\nprofiles:\n- schedulerName: my-scheduler\n",
    "mut-yaml-merge-key-overridden.yaml": f"apiVersion: {API}\nkind: KubeSchedulerConfiguration\nprofiles:\n- &a\n  schedulerName: a\n- <<: *a\n  schedulerName: b\n",
    "edge-yaml-merge-key.yaml": f"apiVersion: {API}\nkind: KubeSchedulerConfiguration\nprofiles:\n- &a\n  schedulerName: a\n  percentageOfNodesToScore: 50\n- <<: {{percentageOfNodesToScore: 50}}\n  schedulerName: b\n",
    "mut-config-after-other-document.yaml": f"apiVersion: v1\nkind: Namespace\nmetadata:\n  name: scheduling\n---\napiVersion: {API}\nkind: KubeSchedulerConfiguration\nprofiles:\n- schedulerName: my-scheduler\n",
    "edge-bom.yaml": f"\ufeffapiVersion: {API}\nkind: KubeSchedulerConfiguration\n",
}


def render(doc: Doc) -> str:
    return yaml.safe_dump(doc, sort_keys=False, default_flow_style=False)


def generated() -> dict[str, str]:
    files = {
        f"{name}.yaml": render(make(copy.deepcopy(base()))) for name, make in MUTATIONS.items()
    }
    files.update(RAW)
    return files


def main() -> int:
    files = generated()
    for old in CONFIGS.glob("*"):
        if old.name.startswith(("mut-", "edge-")) and old.name not in files:
            old.unlink()
    for name, text in files.items():
        (CONFIGS / name).write_text(text, encoding="utf-8", newline="")
    print(json.dumps({"generated": len(files)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
