"""The plugin files of a deployed kschedctl scheduler, as its ConfigMap carries them (pure).

The pod and deployment forms of ``program: builtin`` put each file of ``spec.builtin.plugins``
in the ConfigMap ``NAME-config`` under the key ``plugin-<file>`` and list the files, in the
order the scheduler runs them, in its annotation ``kschedctl.io/plugin-files``
(:mod:`kschedctl.render.builtin`, which ``observe`` may not import: a test pins the names
equal). ``why`` reads them from there to evaluate the plugins as the scheduler does.
"""

from __future__ import annotations

from typing import Any

from kschedctl.errors import KschedError, printable

PLUGIN_FILES_ANNOTATION = "kschedctl.io/plugin-files"
PLUGIN_KEY_PREFIX = "plugin-"

__all__ = ["PLUGIN_FILES_ANNOTATION", "PLUGIN_KEY_PREFIX", "configmap_name", "plugin_files"]


def configmap_name(scheduler: str) -> str:
    """The ConfigMap of kschedctl's scheduler ``scheduler`` (templates/_configmap.yaml.j2)."""
    return f"{scheduler}-config"


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
