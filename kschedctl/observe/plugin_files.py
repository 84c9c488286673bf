"""The plugin files of a deployed kschedctl scheduler, as its ConfigMap carries them (pure).

The pod and deployment forms of ``program: builtin`` put each file of ``spec.builtin.plugins``
in the ConfigMap ``NAME-config`` under the key ``plugin-<file>`` and list the files, in the
order the scheduler runs them, in its annotation ``kschedctl.io/plugin-files``
(:mod:`kschedctl.render.builtin`, which ``observe`` may not import: a test pins the names
equal).

``why`` never runs that code by itself: whoever may edit the ConfigMap (and the pod's
config-hash annotation beside it) would run code in the caller's process, with the caller's
credentials. It lists the plugins it did not run (:class:`UnrunPlugins`) and runs them only
when the caller names that exact content: ``--run-cluster-plugins NAMESPACE/NAME-config@
sha256:HEX`` (:class:`ClusterPluginsRef`), HEX being the hash of the files in order (what the
scheduler publishes as ``kschedctl.io/plugins-hash`` on its Lease).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from kschedctl.base.errors import KschedError, UsageError, printable
from kschedctl.model.config.shapes import dns_label_problem, dns_subdomain_problem

PLUGIN_FILES_ANNOTATION = "kschedctl.io/plugin-files"
PLUGIN_KEY_PREFIX = "plugin-"
CONFIGMAP_SUFFIX = "-config"
RUN_CLUSTER_PLUGINS = "--run-cluster-plugins"
_DIGEST = re.compile(r"sha256:([0-9a-f]{64})", re.ASCII)

__all__ = [
    "CONFIGMAP_SUFFIX",
    "ClusterPluginsRef",
    "PLUGIN_FILES_ANNOTATION",
    "PLUGIN_KEY_PREFIX",
    "RUN_CLUSTER_PLUGINS",
    "UnrunPlugins",
    "configmap_name",
    "plugin_files",
]


def configmap_name(scheduler: str) -> str:
    """The ConfigMap of kschedctl's scheduler ``scheduler`` (templates/_configmap.yaml.j2)."""
    return f"{scheduler}{CONFIGMAP_SUFFIX}"


def plugin_files(configmap: dict[str, Any]) -> list[tuple[str, str]]:
    """(file name, Python source) of each plugin ``configmap`` carries, in the order the
    scheduler runs them; [] when it carries none. A file the annotation names but the data
    lacks is an error: the scheduler's pods could not mount it either."""
    meta = configmap.get("metadata") or {}
    order = str((meta.get("annotations") or {}).get(PLUGIN_FILES_ANNOTATION) or "")
    data = configmap.get("data") or {}
    where = f"ConfigMap {meta.get('namespace')}/{meta.get('name')}"
    out = []
    for file in (f for f in order.split(",") if f):
        text = data.get(PLUGIN_KEY_PREFIX + file)
        if not isinstance(text, str):
            raise KschedError(
                f"{printable(where)} lists plugin {printable(file)} in its "
                f"{PLUGIN_FILES_ANNOTATION} annotation but holds no key "
                f"{printable(PLUGIN_KEY_PREFIX + file)}",
                hint="deploy the scheduler again: kschedctl deploy DIR --as-deployment",
            )
        out.append((file, text))
    return out


@dataclass(frozen=True)
class ClusterPluginsRef:
    """``--run-cluster-plugins NAMESPACE/CONFIGMAP@sha256:HEX``: the caller's consent to run
    the plugin files of that ConfigMap, as long as they hash to ``digest``."""

    namespace: str
    configmap: str
    digest: str  # 64 lowercase hex digits

    @property
    def scheduler(self) -> str:
        """The kschedctl scheduler whose ConfigMap it is (``NAME-config``)."""
        return self.configmap.removesuffix(CONFIGMAP_SUFFIX)

    @property
    def where(self) -> str:
        return f"ConfigMap {self.namespace}/{self.configmap}"

    def flag(self) -> str:
        return f"{RUN_CLUSTER_PLUGINS} {self.namespace}/{self.configmap}@sha256:{self.digest}"

    @classmethod
    def parse(cls, text: str) -> ClusterPluginsRef:
        """The value of ``--run-cluster-plugins``; a UsageError (exit 2) naming the part
        that is wrong."""
        shape = f"{RUN_CLUSTER_PLUGINS} NAMESPACE/NAME{CONFIGMAP_SUFFIX}@sha256:HEX"
        hint = f"{shape}: copy it from the plugins-not-run finding of `kschedctl why`"
        where, at, digest = text.partition("@")
        namespace, slash, configmap = where.partition("/")
        match = _DIGEST.fullmatch(digest)
        if not at or not slash:
            problem: str | None = f"expected {shape}"
        elif not configmap.endswith(CONFIGMAP_SUFFIX) or configmap == CONFIGMAP_SUFFIX:
            problem = (
                f"{printable(configmap, 80)} is not a kschedctl scheduler's ConfigMap "
                f"(NAME{CONFIGMAP_SUFFIX})"
            )
        elif match is None:
            problem = "the hash must be sha256: and 64 lowercase hex digits"
        else:
            problem = dns_label_problem(namespace) or dns_subdomain_problem(configmap)
        if problem is not None or match is None:
            raise UsageError(f"{RUN_CLUSTER_PLUGINS} {printable(text, 200)}: {problem}", hint=hint)
        return cls(namespace, configmap, match.group(1))


@dataclass(frozen=True)
class UnrunPlugins:
    """The Python plugins a scheduler runs that `why` did not run, and how the caller can
    have them run. ``files``: their file names in order (their NAMEs when only the
    scheduler's Lease tells); ``digest``: the hash of the files (None: not known);
    ``run_with``: the exact flags that run them (None: ``note`` says why there are none)."""

    scheduler: str
    source: str  # "ConfigMap NS/NAME-config", a directory on this machine, or "its Lease"
    files: tuple[str, ...]
    digest: str | None = None
    run_with: str | None = None
    note: str | None = None

    def describe(self) -> str:
        digest = f", sha256:{self.digest}" if self.digest else ""
        return f"[{', '.join(self.files)}] ({self.source}{digest})"

    def to_dict(self) -> dict[str, Any]:
        return {
            "scheduler": self.scheduler,
            "source": self.source,
            "files": list(self.files),
            "sha256": self.digest,
            "runWith": self.run_with,
            "note": self.note,
        }
