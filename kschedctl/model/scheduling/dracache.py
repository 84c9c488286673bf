"""The scheduler's view of Dynamic Resource Allocation: DeviceClasses, ResourceSlices and
ResourceClaims from the watches, plus the claims it allocated or reserved and has not yet
seen come back (kube-scheduler's assume cache and its in-flight allocations).

A claim the scheduler decided to allocate counts as allocated — its devices are in use — from
the decision until the API's copy of the claim moves past the version it started from (our
status update, or someone else's), or the binding fails (:meth:`DraCache.forget`): two pods
never get one device. A pod's special claim for extended resources is assumed under a name
of its own (``<extended-resources>`` + the pod's uid) until the claim PreBind created comes
back allocated. A deleted claim frees its devices when the watch says so.

Pure: the caller serialises access (the cache lock) and gives the snapshot the
:class:`~kschedctl.model.filters.dra.DraWorld` :meth:`DraCache.world` builds.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from kschedctl.model.filters.dra import DraWorld
from kschedctl.model.filters.drabind import ClaimWrite, claim_key
from kschedctl.model.filters.draextended import ANNOTATION, SPECIAL_NAME, is_special

__all__ = ["DRA_KINDS", "DraCache", "slim_dra"]

# Watched resource -> kind, for what the DynamicResources plugin reads. Optional: a cluster
# without resource.k8s.io/v1 or a scheduler with an older ClusterRole leaves pods with claims
# "not evaluated" (UNLISTED), never taken for a cluster without devices.
DRA_KINDS = {
    "deviceclasses": "DeviceClass",
    "resourceslices": "ResourceSlice",
    "resourceclaims": "ResourceClaim",
}
_META = ("name", "namespace", "uid", "resourceVersion", "generation", "deletionTimestamp",
         "finalizers", "labels", "annotations", "ownerReferences")  # fmt: skip


def slim_dra(obj: Mapping[str, Any]) -> dict[str, Any]:
    """A DRA object without managedFields (spec and status are read whole)."""
    md = obj.get("metadata") or {}
    out = {k: v for k, v in obj.items() if k not in ("metadata", "apiVersion", "kind")}
    out["metadata"] = {k: md[k] for k in _META if k in md}
    return out


def _key(kind: str, obj: Mapping[str, Any]) -> Any:
    return claim_key(obj) if kind == "ResourceClaim" else (obj.get("metadata") or {}).get("name")


def _allocation(claim: Mapping[str, Any]) -> Any:
    return (claim.get("status") or {}).get("allocation")


def _rv(obj: Mapping[str, Any] | None) -> str:
    return str(((obj or {}).get("metadata") or {}).get("resourceVersion") or "")


class DraCache:
    def __init__(self) -> None:
        self.tables: dict[str, dict[Any, Mapping[str, Any]]] = {}  # kind -> key -> object
        self.unlisted: set[str] = set()
        # claim key -> (the API's copy when we assumed it, our assumed copy)
        self.assumed: dict[tuple[str, str], tuple[Mapping[str, Any] | None, Mapping[str, Any]]] = {}
        self._world: DraWorld | None = None
        self._stale = True

    def synced(self) -> bool:
        return all(k in self.tables or k in self.unlisted for k in DRA_KINDS.values())

    def replace(self, kind: str, objects: Iterable[Mapping[str, Any]]) -> bool:
        """A (re)list of one kind; True: pods waiting for devices may fit now."""
        self.tables[kind] = {_key(kind, o): o for o in map(slim_dra, objects)}
        self.unlisted.discard(kind)
        if kind == "ResourceClaim":
            for key in list(self.assumed):
                if key in self.assumed:  # a created special claim may have taken one off
                    self._reconcile(key, self.tables[kind].get(key))
        self._stale = True
        return True

    def _created(self, claim: Mapping[str, Any]) -> None:
        """A pod's special claim came back from the API with its allocation: it replaces
        the in-memory one assumed since Reserve."""
        md = claim.get("metadata") or {}
        if (md.get("annotations") or {}).get(ANNOTATION) != "true":
            return
        if not (claim.get("status") or {}).get("allocation"):
            return  # created, not yet allocated: the assumed copy still holds the devices
        for ref in md.get("ownerReferences") or []:
            key = (str(md.get("namespace") or "default"), SPECIAL_NAME + str(ref.get("uid")))
            if self.assumed.pop(key, None) is not None:
                self.tables["ResourceClaim"].pop(key, None)

    def event(self, kind: str, event: str, obj: Mapping[str, Any]) -> bool:
        """ADDED/MODIFIED/DELETED (ignored before the kind's first list)."""
        table = self.tables.get(kind)
        if table is None:
            return False
        obj = slim_dra(obj)
        key = _key(kind, obj)
        self._stale = True
        if event == "DELETED":
            table.pop(key, None)
            self.assumed.pop(key, None)  # its devices are free: the claim is gone
            return True
        table[key] = obj
        if kind == "ResourceClaim":
            if key in self.assumed:
                self._reconcile(key, obj)
            self._created(obj)
        return True

    def _reconcile(self, key: tuple[str, str], api: Mapping[str, Any] | None) -> None:
        """Keep our assumed copy while the API still shows the version we assumed from."""
        base, assumed = self.assumed[key]
        if api is not None and base is not None and _rv(api) == _rv(base):
            self.tables["ResourceClaim"][key] = assumed
        elif api is not None and _allocation(assumed) and not _allocation(api):
            # PreBind's finalizer update lands before its status update: the allocation is
            # still in flight (kube-scheduler keeps it in its in-flight allocations until
            # bindClaim ends), so its devices stay taken
            self.tables["ResourceClaim"][key] = assumed
        elif is_special(assumed):  # in memory until the created claim comes back allocated
            self.tables["ResourceClaim"][key] = assumed
            for claim in list(self.tables["ResourceClaim"].values()):
                self._created(claim)
        else:
            del self.assumed[key]

    def assume(self, writes: Iterable[ClaimWrite]) -> None:
        """Reserve: count each claim as allocated and reserved for the pod from now on."""
        table = self.tables.get("ResourceClaim")
        if table is None:
            return
        for w in writes:
            base = self.assumed[w.key][0] if w.key in self.assumed else table.get(w.key)
            self.assumed[w.key] = (base, w.assumed)
            table[w.key] = w.assumed
            self._stale = True

    def forget(self, writes: Iterable[ClaimWrite]) -> None:
        """Unreserve: undo :meth:`assume` for claims whose API copy did not move on."""
        table = self.tables.get("ResourceClaim")
        for w in writes:
            entry = self.assumed.pop(w.key, None)
            if entry is None or table is None:
                continue
            if entry[0] is not None:
                table[w.key] = entry[0]
            else:  # assumed from nothing (the special claim): it goes
                table.pop(w.key, None)
            self._stale = True

    def claim(self, key: tuple[str, str]) -> Mapping[str, Any] | None:
        return (self.tables.get("ResourceClaim") or {}).get(key)

    def device_classes(self) -> list[Mapping[str, Any]]:
        return list((self.tables.get("DeviceClass") or {}).values())

    def world(self) -> DraWorld | None:
        """The DynamicResources plugin's view (None until slices and claims are listed),
        rebuilt only after a change."""
        if not self._stale:
            return self._world
        slices, claims = self.tables.get("ResourceSlice"), self.tables.get("ResourceClaim")
        self._world = (
            None
            if slices is None or claims is None
            else DraWorld(self.device_classes(), slices.values(), claims.values())
        )
        self._stale = False
        return self._world

    def counts(self) -> dict[str, int]:
        return {r: len(self.tables[k]) for r, k in sorted(DRA_KINDS.items()) if k in self.tables}
