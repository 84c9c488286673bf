"""Pod volumes materialised as directories of the lab, as the kubelet's volume plugins would.

``<pod dir>/volumes/<volume>/`` holds ConfigMap and Secret keys, projected sources (a
ServiceAccount token from the TokenRequest API, ``ca.crt``, the ``namespace``), downward-API
files and emptyDirs. A hostPath ``/etc/x`` is ``<lab>/host/etc/x``, so files "on the node" can
be placed there. Files are written atomically (renamed into place), so a refreshed token is
never seen half-written, and privately: every directory made for a pod is 0700, every file
gets the pod's mode for its owner only (:func:`kschedctl.lab.private.owner_mode`: a token or
Secret key of the default 0644 is 0600), and it is created 0600 before its data is written.
"""

from __future__ import annotations

import base64
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, Protocol

from kschedctl.lab.private import owner_mode, private_dir, write_private
from kschedctl.lab.runner.podenv import ContainerConfigError, field_value

TOKEN_REFRESH_FRACTION = 0.8  # the kubelet renews a projected token at 80 % of its lifetime
KEYED_KINDS = {"configMap": "ConfigMap", "secret": "Secret"}  # a volume's field -> the kind


class VolumeError(Exception):
    """A volume cannot be set up (what the kubelet reports as FailedMount); ``volume`` names
    it when the failure is one volume's."""

    def __init__(self, message: str, volume: str | None = None) -> None:
        super().__init__(message)
        self.volume = volume

    def event_message(self) -> str:
        """The kubelet's FailedMount event text (k8s.io/kubernetes
        pkg/volume/util/operationexecutor: generateVolumeMsg with errSuffix)."""
        if self.volume is None:
            return f"MountVolume.SetUp failed: {self}"
        return f'MountVolume.SetUp failed for volume "{self.volume}" : {self}'


class VolumeApi(Protocol):
    def get_object(self, kind: str, namespace: str, name: str) -> dict[str, Any] | None: ...

    def request_token(
        self, pod: Mapping[str, Any], audience: str | None, expiration: int
    ) -> tuple[str, float]:
        """A token for the pod's ServiceAccount, bound to the pod; (token, lifetime seconds)."""
        ...


@dataclass
class TokenFile:
    path: Path
    audience: str | None
    expiration: int
    mode: int
    refresh_at: float = 0.0


@dataclass
class Volumes:
    paths: dict[str, Path] = field(default_factory=dict)  # volume name -> lab directory
    tokens: list[TokenFile] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def host_path(lab_dir: Path, path: str) -> Path:
    return lab_dir / "host" / path.lstrip("/")


def _write(directory: Path, relative: str, data: bytes, mode: int) -> Path:
    parts = PurePosixPath(relative).parts
    if not parts or ".." in parts or relative.startswith("/"):
        raise VolumeError(f"invalid path {relative!r} in a volume")
    target = directory.joinpath(*parts)
    private_dir(target.parent)
    return write_private(target, data, owner_mode(mode))


def _keyed(
    directory: Path, api: VolumeApi, namespace: str, kind: str, ref: Mapping[str, Any], mode: int
) -> None:
    """A ConfigMap's or Secret's keys as files: all keys, or just ``ref``'s ``items`` (key ->
    path); ``ref`` is the volume's or projection's reference (``name``, a volume's Secret:
    ``secretName``), and may be ``optional``."""
    name = ref["secretName"] if "secretName" in ref else ref["name"]
    optional = ref.get("optional", False)
    data = _source(api, kind, namespace, name, optional)
    if data is None:
        return
    items = ref.get("items")
    if not items:
        for key, value in data.items():
            _write(directory, key, value, mode)
        return
    for item in items:
        if item["key"] not in data:
            if optional:
                continue
            raise VolumeError(
                f'configmap/secret key "{item["key"]}" not found in {kind.lower()} {name}'
            )
        _write(directory, item["path"], data[item["key"]], int(item.get("mode", mode)))


def _keyed_kind(source: Mapping[str, Any]) -> str | None:
    """The field of a volume or projected source that names a ConfigMap or Secret, if any."""
    return next((key for key in KEYED_KINDS if key in source), None)


def _configmap_data(obj: Mapping[str, Any]) -> dict[str, bytes]:
    data = {k: v.encode() for k, v in (obj.get("data") or {}).items()}
    data.update({k: base64.b64decode(v) for k, v in (obj.get("binaryData") or {}).items()})
    return data


def _secret_data(obj: Mapping[str, Any]) -> dict[str, bytes]:
    return {k: base64.b64decode(v) for k, v in (obj.get("data") or {}).items()}


def _source(
    api: VolumeApi, kind: str, namespace: str, name: str, optional: bool
) -> dict[str, bytes] | None:
    obj = api.get_object(kind, namespace, name)
    if obj is None:
        if optional:
            return None
        raise VolumeError(f'{kind.lower()} "{name}" not found')
    return _configmap_data(obj) if kind == "ConfigMap" else _secret_data(obj)


def _downward(
    directory: Path,
    pod: Mapping[str, Any],
    items: list[dict[str, Any]],
    mode: int,
    volumes: Volumes,
) -> None:
    for item in items:
        if "fieldRef" not in item:
            volumes.notes.append(
                f"downward-API item {item.get('path')}: only fieldRef is "
                "supported in the lab; file left out"
            )
            continue
        try:
            value = field_value(pod, item["fieldRef"]["fieldPath"])
        except ContainerConfigError as err:
            raise VolumeError(str(err)) from err
        _write(directory, item["path"], value.encode(), int(item.get("mode", mode)))


def materialise(pod: Mapping[str, Any], pod_dir: Path, lab_dir: Path, api: VolumeApi) -> Volumes:
    """Create every volume of ``pod``; raises VolumeError naming the first that cannot be."""
    volumes = Volumes()
    for volume in (pod.get("spec") or {}).get("volumes") or []:
        try:
            _materialise_one(volume, pod, pod_dir, lab_dir, api, volumes)
        except VolumeError as err:
            raise VolumeError(str(err), err.volume or volume["name"]) from err
    return volumes


def _materialise_one(
    volume: Mapping[str, Any],
    pod: Mapping[str, Any],
    pod_dir: Path,
    lab_dir: Path,
    api: VolumeApi,
    volumes: Volumes,
) -> None:
    namespace = pod["metadata"]["namespace"]
    name = volume["name"]
    directory = pod_dir / "volumes" / name
    if "hostPath" in volume:
        volumes.paths[name] = _host_path(lab_dir, volume["hostPath"])
        return
    private_dir(directory)
    volumes.paths[name] = directory
    keyed = _keyed_kind(volume)
    if keyed is not None:
        ref = volume[keyed]
        _keyed(
            directory, api, namespace, KEYED_KINDS[keyed], ref, int(ref.get("defaultMode", 0o644))
        )
    elif "projected" in volume:
        _projected(directory, pod, volume["projected"], api, volumes)
    elif "downwardAPI" in volume:
        spec = volume["downwardAPI"]
        _downward(
            directory,
            pod,
            spec.get("items") or [],
            int(spec.get("defaultMode", 0o644)),
            volumes,
        )
    elif "emptyDir" not in volume:
        kind = next((k for k in volume if k != "name"), "unknown")
        volumes.notes.append(
            f"volume {name}: {kind} volumes are not materialised in the lab; "
            "an empty directory stands in"
        )


def _host_path(lab_dir: Path, spec: Mapping[str, Any]) -> Path:
    path = host_path(lab_dir, spec["path"])
    kind = spec.get("type") or ""
    # What the pod creates is private; what was placed there beforehand keeps its mode.
    if kind in ("", "DirectoryOrCreate") and not path.exists():
        private_dir(path)
    elif kind == "FileOrCreate" and not path.exists():
        private_dir(path.parent, tighten=False)
        path.touch(mode=0o600)
    elif kind == "Directory" and not path.is_dir():
        raise VolumeError(f"hostPath type check failed: {path} is not a directory")
    elif kind == "File" and not path.is_file():
        raise VolumeError(f"hostPath type check failed: {path} is not a file")
    elif kind in ("Socket", "CharDevice", "BlockDevice") and not path.exists():
        raise VolumeError(f"hostPath type check failed: {path} does not exist")
    return path


def _projected(
    directory: Path,
    pod: Mapping[str, Any],
    spec: Mapping[str, Any],
    api: VolumeApi,
    volumes: Volumes,
) -> None:
    namespace = pod["metadata"]["namespace"]
    mode = int(spec.get("defaultMode", 0o644))
    for source in spec.get("sources") or []:
        if "serviceAccountToken" in source:
            token = source["serviceAccountToken"]
            if ".." in PurePosixPath(token["path"]).parts or token["path"].startswith("/"):
                raise VolumeError(f"invalid path {token['path']!r} in a volume")
            entry = TokenFile(
                directory / token["path"],
                token.get("audience") or None,
                int(token.get("expirationSeconds") or 3600),
                mode,
            )
            refresh_token(entry, pod, api)
            volumes.tokens.append(entry)
        elif (keyed := _keyed_kind(source)) is not None:
            _keyed(directory, api, namespace, KEYED_KINDS[keyed], source[keyed], mode)
        elif "downwardAPI" in source:
            _downward(directory, pod, source["downwardAPI"].get("items") or [], mode, volumes)
        else:
            kind = next(iter(source), "unknown")
            volumes.notes.append(f"projected source {kind} is not materialised in the lab")


def refresh_token(entry: TokenFile, pod: Mapping[str, Any], api: VolumeApi) -> None:
    """Request a fresh token and write it; the next refresh is due at 80 % of its lifetime."""
    token, lifetime = api.request_token(pod, entry.audience, entry.expiration)
    _write(entry.path.parent, entry.path.name, token.encode(), entry.mode)
    entry.refresh_at = time.time() + lifetime * TOKEN_REFRESH_FRACTION
