"""Which container images the lab really runs: the one rule both the lab and its runner use.

The lab (:mod:`kschedctl.lab.cluster`) keeps kwok's pod-ready stage off these pods
(:func:`kwok_selector_key`); the runner (:mod:`kschedctl.lab.runner`) runs them
(:func:`program_for`). Living below both, the rule needs no import from the lab into its runner.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kschedctl.model.config.distributions import RELEASES as SCHEDULER_PLUGINS_RELEASES
from kschedctl.model.config.shapes import image_repository, image_tag
from kschedctl.model.config.versions import NEWEST_MINOR, PATCH_RELEASES, RELEASE_TAG

KUBE_SCHEDULER = "kube-scheduler"
KSCHEDCTL = "kschedctl"  # kschedctl's own scheduler (program: builtin), from the Dockerfile
# kube-scheduler with kschedctl's example out-of-tree plugin (kschedctl/lab/gomod/custom-scheduler)
CUSTOM_KUBE_SCHEDULER = "custom-kube-scheduler"


# The last path element of an image's repository -> the program the lab runs for it.
PROGRAMS = {
    KUBE_SCHEDULER: KUBE_SCHEDULER,
    KSCHEDCTL: KSCHEDCTL,
    CUSTOM_KUBE_SCHEDULER: CUSTOM_KUBE_SCHEDULER,
}
# The image the lab runs as kube-scheduler + NodeLabelMatch: ``kschedctl.local`` is no
# registry (the lab pulls nothing), the tag is the Kubernetes release the binary is built from.
CUSTOM_KUBE_SCHEDULER_IMAGE = "kschedctl.local/custom-kube-scheduler:v1.36.3"


def program_for(container: Mapping[str, Any]) -> str | None:
    """The program the lab runs for this container, or None (kwok keeps simulating it).

    Any image whose repository's last path element is ``kube-scheduler`` —
    ``registry.k8s.io/kube-scheduler:*`` and mirrors or rebuilds of it —, ``kschedctl``
    (the repository's Dockerfile; run from this checkout with the current Python) or
    ``custom-kube-scheduler`` (kube-scheduler with kschedctl's example plugin, built by
    ``kschedctl lab build``; :data:`CUSTOM_KUBE_SCHEDULER_IMAGE` or any registry's copy).
    """
    repository = image_repository(str(container.get("image") or ""))
    return PROGRAMS.get(repository.rsplit("/", 1)[-1])


def kwok_selector_key() -> str:
    """The same rule as :func:`program_for`, as a kwok stage selector key (a gojq query).

    It yields the matching images' names; ``operator: DoesNotExist`` on it keeps kwok's
    pod-ready stage off the pods the runner runs, so nothing but the runner writes their
    status (no moment where kwok calls a pod Ready whose process has not even started).
    """
    names = " or ".join(f'. == "{name}"' for name in PROGRAMS)
    return (
        '.spec.containers.[].image | split("@") | .[0] | split("/") | .[-1] | split(":") '
        f"| .[0] | select({names})"
    )


# Registries whose kube-scheduler tags are known: what the Kubernetes project publishes.
OFFICIAL_REGISTRIES = ("registry.k8s.io", "k8s.gcr.io")
# Patch releases come out for the three newest minors (the Kubernetes support window), some
# after kschedctl's table was written: a higher patch of those may exist.
_PATCHED_MINORS = 3


def _kubernetes_release(tag: str, plugins: bool) -> bool:
    """``tag`` names a published release: of Kubernetes (``v1.X.Y``), or with ``plugins`` of
    scheduler-plugins (``v0.X.Y``, built on Kubernetes 1.X)."""
    if plugins and tag in SCHEDULER_PLUGINS_RELEASES:
        return True
    match = RELEASE_TAG.fullmatch(tag)
    if not match or int(match.group(1)) != (0 if plugins else 1):
        return False
    minor, patch = int(match.group(2)), int(match.group(3))
    if minor > NEWEST_MINOR:
        return False
    if plugins or minor not in PATCH_RELEASES or minor > NEWEST_MINOR - _PATCHED_MINORS:
        return True
    return patch <= PATCH_RELEASES[minor]


def pull_error(image: str) -> str | None:
    """Why the lab cannot "pull" ``image``, in containerd's words; None when it can.

    The lab runs its own binaries for scheduler images, so it pulls nothing — but an image that
    no registry has must not run either: a kube-scheduler (or scheduler-plugins) image of the
    Kubernetes project's registries whose tag is no release (a typo, a release not out yet, no
    tag: there is no ``latest``) fails the way the registry would fail it. Other registries,
    mirrors and digests cannot be checked from here and are run.
    """
    if "@" in image:
        return None
    repository, tag = image_repository(image), image_tag(image)
    registry, _, path = repository.partition("/")
    if registry not in OFFICIAL_REGISTRIES:
        return None
    if path == "kube-scheduler":
        plugins = False
    elif path == "scheduler-plugins/kube-scheduler":
        plugins = True
    else:
        return None
    if _kubernetes_release(tag, plugins):
        return None
    ref = f"{repository}:{tag or 'latest'}"
    return (
        f'rpc error: code = NotFound desc = failed to pull and unpack image "{ref}": '
        f'failed to resolve reference "{ref}": {ref}: not found'
    )


# Set by the runner's kubelet admission (kschedctl.lab.runner.admission) on every pod it admits.
ADMITTED_ANNOTATION = "lab.kschedctl.io/admitted"


def kwok_admitted_expression() -> dict[str, Any]:
    """The matchExpression that keeps kwok's pod-ready stage off pods not admitted yet: kwok
    cannot sum a node's pods, so without it an over-committed pod would still become Running."""
    return {
        "key": f'.metadata.annotations["{ADMITTED_ANNOTATION}"]',
        "operator": "In",
        "values": ["true"],
    }
