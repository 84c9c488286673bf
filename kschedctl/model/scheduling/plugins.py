"""Scheduling plugins written in plain Python: the contract, and running them contained.

A plugin is a module (a ``PATH.py`` file, an importable ``package.module``, or an object in
one: ``package.module:object``) that defines any of::

    NAME = "rack-match"                  # optional; default: the module's name
    WEIGHT = 1                           # optional; multiplies score(), a number in (0, 100]

    def pre_filter(pod, ctx) -> str | None: ...     # optional, once per pod and stage
    def filter(pod, node, ctx) -> str | None: ...   # None: the node fits; a str: the reason
    def score(pod, node, ctx) -> float: ...         # 0..100, times WEIGHT, added to the sum

and at least one of ``filter`` and ``score``. ``pod`` and ``node`` are the dicts the
scheduler caches (:func:`kschedctl.model.scheduling.slim.slim_pod` / ``slim_node``: metadata with
labels and annotations, the spec fields scheduling reads, allocatable) behind a read-only
view (:class:`FrozenDict`: a ``Mapping`` whose lists read as tuples); ``thaw`` gives a
private plain copy. ``ctx`` (:class:`PluginContext`) reads the same snapshot the built-in
filters read: ``ctx.node(name)``, ``ctx.nodes()``, ``ctx.pods_on(node_name)``,
``ctx.allocation(node_name)`` (the devices DynamicResources allocates the pod's
ResourceClaims on that node: claim name -> ``status.allocation``; None without claims), and
``ctx.cycle``, a dict private to this plugin and this pod (what ``pre_filter`` computed for
``filter`` and ``score``), like kube-scheduler's CycleState.

Order and meaning (kube-scheduler's framework, pkg/scheduler/framework/runtime/framework.go):
the plugins' ``pre_filter`` run after the built-in PreFilter checks, in the order given; a
string rejects the pod on every node ("0/N nodes are available: <reason>."). Their ``filter``
runs on each node that passed every built-in filter, in the order given, and the first
reason counts in the FailedScheduling histogram like a kube-scheduler reason. Their ``score``
(times ``WEIGHT``) is added to the built-in weighted sum of each feasible node.

A ``filter`` reason is Unschedulable (evicting pods may resolve it), as kube-scheduler treats
an out-of-tree Filter plugin's failure: when no node fits, DefaultPreemption's dry run runs
the plugins too, on each candidate node with lower-priority pods taken off and put back one
at a time (and with the pods nominated there counted, as in every filter pass), so
``ctx.pods_on`` shows the node as the dry run has it at that moment. Per-node counts a
plugin keeps in ``ctx.cycle`` from ``pre_filter`` are not updated then (there is no
AddPod/RemovePod extension): read ``ctx.pods_on`` in ``filter``. A ``pre_filter`` reason is
UnschedulableAndUnresolvable: no preemption.

Containment: a plugin that raises, or returns something outside its contract (a score
outside 0..100, a reason that is not a non-empty string), fails that pod's scheduling attempt
only — the pod gets ``running "NAME" filter plugin: ValueError: …`` (kube-scheduler's wording
for a plugin error) and the scheduler goes on. A plugin that cannot be loaded (import error,
no filter or score, a bad WEIGHT or NAME) is refused at start with a :class:`PluginError`
(exit 3).

Loading and refusing them is :mod:`.pluginload`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, cast

from kschedctl.base.errors import printable
from kschedctl.model.filters import UNRESOLVABLE, NodeInfoSnapshot, Reason
from kschedctl.model.filters.draalloc import AllocationError, Unsupported
from kschedctl.model.filters.drabind import pod_claim_writes
from kschedctl.model.filters.nodeinfo import NodeInfo
from kschedctl.model.kubetypes import Pod

from .slim import slim_node, slim_pod

__all__ = [
    "FrozenDict",
    "MAX_SCORE",
    "Plugin",
    "PluginContext",
    "PluginFailure",
    "PluginSet",
    "PluginVerdict",
    "NO_PLUGINS",
    "PLUGINS_LEASE_ANNOTATION",
    "PLUGIN_FILES_LEASE_ANNOTATION",
    "PLUGINS_HASH_LEASE_ANNOTATION",
    "frozen",
    "thaw",
]

MAX_SCORE = 100.0
REASON_LIMIT = 256  # characters of a filter reason (the event note is 1024 bytes in all)
ERROR_LIMIT = 300  # characters of an exception's text in a FailedScheduling message
# On the Lease of kschedctl's scheduler: the NAMEs of its plugins, in order, comma-separated;
# when every plugin was loaded from a file, those files' names in order (comma-separated) and
# the hash of their text (:func:`kschedctl.render.builtin.bundle_hash` of no config and the
# files), so that `why` can prove an installed copy is what the scheduler runs.
PLUGINS_LEASE_ANNOTATION = "kschedctl.io/plugins"
PLUGIN_FILES_LEASE_ANNOTATION = "kschedctl.io/plugin-files"
PLUGINS_HASH_LEASE_ANNOTATION = "kschedctl.io/plugins-hash"


# -- read-only views ------------------------------------------------------------------------


class FrozenDict(Mapping[str, Any]):
    """A read-only view of a dict: nested dicts read as FrozenDicts, lists as tuples.

    Built in O(1) (nothing is copied until read), so handing a node to a plugin costs one
    small object per call.
    """

    __slots__ = ("_data",)

    def __init__(self, data: Mapping[str, Any]) -> None:
        self._data = data

    def __getitem__(self, key: str) -> Any:
        return frozen(self._data[key])

    def get(self, key: str, default: Any = None) -> Any:
        value = self._data.get(key, default)
        return value if value is default else frozen(value)

    def __contains__(self, key: object) -> bool:
        return key in self._data

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __repr__(self) -> str:
        return f"FrozenDict({self._data!r})"


def frozen(value: Any) -> Any:
    """``value`` as a plugin sees it: dicts as :class:`FrozenDict`, lists as tuples."""
    if isinstance(value, dict):
        return FrozenDict(value)
    if isinstance(value, list | tuple):
        return tuple(frozen(v) for v in value)
    return value


def thaw(value: Any) -> Any:
    """A plain, private deep copy (dicts and lists) of a view, e.g. for ``json.dumps``."""
    if isinstance(value, Mapping):
        return {k: thaw(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [thaw(v) for v in value]
    return value


class PluginContext:
    """What a plugin may read besides the pod and the node: the scheduler's snapshot
    (read-only), and ``cycle``, its own scratch dict for this pod."""

    __slots__ = ("_snapshot", "_reslim", "_nodes", "_pods", "_pod", "_allocations", "cycle")

    def __init__(
        self,
        snapshot: NodeInfoSnapshot,
        reslim: bool = False,
        pod: Mapping[str, Any] | None = None,
    ) -> None:
        self._snapshot = snapshot
        self._reslim = reslim
        self._pod = pod
        self._allocations: dict[str, FrozenDict | None] = {}
        self._nodes: tuple[FrozenDict, ...] | None = None
        # node name -> (the node's generation when read, its pods): the nominated pods and
        # the preemption dry run add and remove pods, and a plugin must see them as they are.
        self._pods: dict[str, tuple[int, tuple[FrozenDict, ...]]] = {}
        self.cycle: dict[str, Any] = {}

    def node(self, name: str) -> FrozenDict | None:
        """The node called ``name``, or None."""
        if name not in self._snapshot:
            return None
        return node_view(self._snapshot.node(name), self._reslim)

    def nodes(self) -> tuple[FrozenDict, ...]:
        """Every node, in the scheduler's order."""
        if self._nodes is None:
            self._nodes = tuple(node_view(n, self._reslim) for n in self._snapshot)
        return self._nodes

    def node_names(self) -> tuple[str, ...]:
        return tuple(n.name for n in self._snapshot)

    def allocation(self, node_name: str) -> FrozenDict | None:
        """The pod's ResourceClaims as the scheduler allocates them on ``node_name``
        (DynamicResources' Reserve): claim name -> its ``status.allocation`` (devices'
        results, config, node selector; a claim allocated before as it is). None when the
        pod has no claims, or they cannot be allocated there (the built-in filter rejects
        the node before ``filter`` runs)."""
        if node_name not in self._allocations:
            found: FrozenDict | None = None
            if self._pod is not None and node_name in self._snapshot:
                try:
                    writes = pod_claim_writes(cast(Pod, self._pod), self._snapshot, node_name)
                except (ValueError, AllocationError, Unsupported):
                    writes = ()
                if writes:
                    found = FrozenDict({
                        w.key[1]: (w.assumed.get("status") or {}).get("allocation")
                        for w in writes
                    })  # fmt: skip
            self._allocations[node_name] = found
        return self._allocations[node_name]

    def pods_on(self, node_name: str) -> tuple[FrozenDict, ...]:
        """The pods bound to (or being bound by this scheduler to) ``node_name``, as the
        filters see the node now: with the pods nominated there while they are counted, and
        without the ones the preemption dry run has taken off."""
        if node_name not in self._snapshot:
            return ()
        node = self._snapshot.node(node_name)
        found = self._pods.get(node_name)
        if found is None or found[0] != node.generation:
            found = (
                node.generation,
                tuple(
                    FrozenDict(slim_pod(p.raw, annotations=True) if self._reslim else p.raw)
                    for p in node.pods
                ),
            )
            self._pods[node_name] = found
        return found[1]


def node_view(node: NodeInfo, reslim: bool = False) -> FrozenDict:
    return FrozenDict(slim_node(node.raw, annotations=True) if reslim else node.raw)


# -- plugins --------------------------------------------------------------------------------


PreFilter = Callable[[Any, PluginContext], Any]
Filter = Callable[[Any, Any, PluginContext], Any]
Score = Callable[[Any, Any, PluginContext], Any]


@dataclass(frozen=True)
class Plugin:
    """A loaded plugin: its name, where it came from, and its extension points."""

    name: str
    source: str  # the file or module it was loaded from
    filter: Filter | None = None
    score: Score | None = None
    weight: float = 1
    pre_filter: PreFilter | None = None
    # Loaded from Python text (a file, a ConfigMap key): its file name and that text, which
    # the scheduler hashes onto its Lease (None for an imported module).
    file: str | None = field(default=None, compare=False)
    text: str | None = field(default=None, repr=False, compare=False)

    def describe(self) -> str:
        points = [p for p in ("pre_filter", "filter", "score") if getattr(self, p) is not None]
        weight = f" (weight {self.weight:g})" if self.score is not None else ""
        return f"{self.name}: {', '.join(points)}{weight} from {self.source}"


class PluginFailure(Exception):
    """A plugin raised or broke its contract while scheduling one pod: that attempt fails
    with :attr:`message`, the scheduler goes on."""

    def __init__(self, plugin: str, point: str, problem: str) -> None:
        self.plugin = plugin
        self.point = point
        # kube-scheduler: `running %q filter plugin: %w` (framework/runtime/framework.go)
        self.message = f'running "{plugin}" {point.replace("_", "")} plugin: {problem}'
        super().__init__(self.message)


def exception_text(err: BaseException) -> str:
    text = printable(str(err), ERROR_LIMIT)
    return f"{type(err).__name__}: {text}" if text else type(err).__name__


# -- running --------------------------------------------------------------------------------


@dataclass(frozen=True)
class PluginVerdict:
    """One plugin's answer for one node (``why``): the reason (None: fits), the score."""

    plugin: str
    reason: str | None = None
    score: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"plugin": self.plugin, "fits": self.reason is None, "reason": self.reason,
                "score": self.score}  # fmt: skip


@dataclass(frozen=True)
class PluginSet:
    """The plugins of one scheduler, in order. ``reslim``: hand plugins the objects slimmed
    as the scheduler's cache slims them (``why`` reads full API objects)."""

    plugins: tuple[Plugin, ...] = ()
    reslim: bool = False
    filters: tuple[Plugin, ...] = field(init=False)
    scorers: tuple[Plugin, ...] = field(init=False)
    pre_filters: tuple[Plugin, ...] = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "filters", tuple(p for p in self.plugins if p.filter))
        object.__setattr__(self, "scorers", tuple(p for p in self.plugins if p.score))
        object.__setattr__(self, "pre_filters", tuple(p for p in self.plugins if p.pre_filter))

    def __bool__(self) -> bool:
        return bool(self.plugins)

    def names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.plugins)

    def files(self) -> list[tuple[str, str]] | None:
        """(file name, text) of each plugin in order; None when one of them was imported
        as a module (no text to show for it)."""
        out = [(p.file, p.text) for p in self.plugins if p.file is not None and p.text is not None]
        return out if len(out) == len(self.plugins) else None

    def cycle(self, pod: Pod, snapshot: NodeInfoSnapshot) -> PluginCycle:
        return PluginCycle(self, pod, snapshot)


NO_PLUGINS = PluginSet()


class PluginCycle:
    """The plugins run for one pod (one stage of one decision) over one snapshot. Every
    method raises :class:`PluginFailure` when a plugin raises or breaks its contract."""

    def __init__(
        self, plugins: PluginSet, pod: Mapping[str, Any], snapshot: NodeInfoSnapshot
    ) -> None:
        self.set = plugins
        self.pod = FrozenDict(slim_pod(pod, annotations=True) if plugins.reslim else pod)
        self.snapshot = snapshot
        self.contexts = {
            p.name: PluginContext(snapshot, plugins.reslim, pod) for p in plugins.plugins
        }
        self._pre: tuple[tuple[str, str] | None] | None = None  # pre_filter's answer, once

    def prefiltered(self) -> tuple[str, str] | None:
        """:meth:`pre_filter`, run once per cycle."""
        if self._pre is None:
            self._pre = (self.pre_filter(),)
        return self._pre[0]

    def pre_filter(self) -> tuple[str, str] | None:
        """(plugin, reason) of the first ``pre_filter`` that rejects the pod, else None."""
        for p in self.set.plugins:
            if p.pre_filter is None:
                continue
            result = self._call(p, "pre_filter", p.pre_filter, self.pod)
            reason = _reason(p, "pre_filter", result)
            if reason is not None:
                return p.name, reason
        return None

    def _call(self, p: Plugin, point: str, func: Callable[..., Any], *args: Any) -> Any:
        """``func(*args, ctx)``; whatever it raises is a :class:`PluginFailure`."""
        try:
            return func(*args, self.contexts[p.name])
        except (Exception, SystemExit) as err:  # sys.exit() in a plugin must not stop us
            raise PluginFailure(p.name, point, exception_text(err)) from err

    def reject(self, node: NodeInfo) -> tuple[str, str] | None:
        """(plugin, reason) of the first plugin filter that rejects ``node``, else None."""
        if not self.set.filters:
            return None
        view = node_view(node, self.set.reslim)
        for p in self.set.filters:
            reason = self._filter(p, view)
            if reason is not None:
                return p.name, reason
        return None

    def _filter(self, p: Plugin, view: FrozenDict) -> str | None:
        """One plugin's ``filter`` on a node view: its reason, None when the node fits."""
        assert p.filter is not None
        return _reason(p, "filter", self._call(p, "filter", p.filter, self.pod, view))

    def status(self, node: NodeInfo) -> Reason | None:
        """The ``extra`` filter of ``feasible_nodes``, ``fits_node`` and ``evaluate`` (so of
        the preemption dry run): the plugins' ``pre_filter`` (on the first node that passes
        the built-in filters, so after the built-in PreFilter; its reason is
        UnschedulableAndUnresolvable, as from a PreFilter), then their ``filter`` (a plain
        reason is Unschedulable: evicting pods may resolve it, kube-scheduler's
        ``fwk.NewStatus(fwk.Unschedulable, reason)``)."""
        pre = self.prefiltered()
        if pre is not None:
            detail = f"pre_filter of Python plugin {pre[0]}"
            return Reason(pre[0], pre[1], detail, code=UNRESOLVABLE)
        rejected = self.reject(node)
        if rejected is None:
            return None
        return Reason(rejected[0], rejected[1], f"filter of Python plugin {rejected[0]}")

    def fits(self, node: NodeInfo) -> bool:
        """Whether :meth:`status` passes ``node``."""
        return self.status(node) is None

    def verdicts(self, node: NodeInfo) -> list[PluginVerdict]:
        """Every plugin filter's answer for ``node`` (``why``), stopping at the first reject
        as the scheduler does; the plugins after it are not run."""
        view = node_view(node, self.set.reslim)
        out = []
        for p in self.set.filters:
            reason = self._filter(p, view)
            out.append(PluginVerdict(p.name, reason))
            if reason is not None:
                break
        return out

    def _score(self, p: Plugin, view: FrozenDict, node: NodeInfo) -> float:
        assert p.score is not None
        result = self._call(p, "score", p.score, self.pod, view)
        if (
            isinstance(result, bool)
            or not isinstance(result, int | float)
            or not 0 <= result <= MAX_SCORE  # NaN fails this too
        ):
            raise PluginFailure(
                p.name,
                "score",
                f"score {printable(repr(result), 80)} for node {node.name} is not a number "
                f"from 0 to {MAX_SCORE:g}",
            )
        return float(result)

    def scores(self, node: NodeInfo) -> dict[str, float]:
        """Each score plugin's 0..100 score for ``node`` (before its weight)."""
        view = node_view(node, self.set.reslim)
        return {p.name: self._score(p, view, node) for p in self.set.scorers}

    def weighted(self, node: NodeInfo) -> float:
        """Σ WEIGHT × score over the score plugins: what they add to ``node``'s total."""
        view = node_view(node, self.set.reslim)
        return sum(p.weight * self._score(p, view, node) for p in self.set.scorers)


def _reason(plugin: Plugin, point: str, result: Any) -> str | None:
    if result is None:
        return None
    if not isinstance(result, str) or not result.strip():
        raise PluginFailure(
            plugin.name,
            point,
            f"returned {printable(repr(result), 80)}: expected None (fits) or a non-empty "
            "reason string",
        )
    return printable(result.strip(), REASON_LIMIT)
