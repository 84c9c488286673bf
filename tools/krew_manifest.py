"""Render the krew plugin manifest (``sched.yaml``) for one release archive.

    python tools/krew_manifest.py --url URL --sha256 SHA --version vX.Y.Z [-o sched.yaml]

The archive is platform-independent: it holds ``kubectl-sched`` (a Python zipapp of
kschedctl, run by ``python3`` >= 3.10) and ``LICENSE`` at its root, so one platform entry
serves Linux and macOS on every architecture. The manifest follows krew's schema
(apiVersion ``krew.googlecontainertools.github.com/v1alpha2``, kind ``Plugin``; the rules of
sigs.k8s.io/krew internal/index/validation/validate.go, which tests/unit/test_krew_manifest.py
re-checks on the rendered file). Bad arguments exit 2 with the reason.
"""

from __future__ import annotations

import argparse
import re
import sys
from typing import Any

import yaml

PLUGIN = "sched"
API_VERSION = "krew.googlecontainertools.github.com/v1alpha2"
SHORT_DESCRIPTION = "Write, deploy, watch and debug additional schedulers."
DESCRIPTION = """\
kubectl sched (kschedctl) runs more than one scheduler in a Kubernetes cluster: it writes a
KubeSchedulerConfiguration for a second kube-scheduler (or its own Python scheduler),
deploys it as a Deployment, Pod or static pod, lists every scheduler the cluster runs,
explains why a pod stays Pending (`kubectl sched why POD`), and removes what it deployed.
"""
CAVEATS = """\
kubectl sched needs python3 (>= 3.10) on PATH.
Shell completion of `kubectl sched ...` (kubectl >= 1.26) also needs `kubectl_complete-sched`
on PATH: `pipx install kschedctl` provides both executables.
"""
BIN = "kubectl-sched"
# The platforms a zipapp runs on: wherever python3 does.
OSES = ("darwin", "linux")

_SHA256 = re.compile(r"[a-f0-9]{64}")
# k8s.io/apimachinery/pkg/util/version ParseSemantic, with krew's required leading "v"
_SEMVER = re.compile(
    r"v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)"
    r"(-[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?(\+[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?"
)
_URL = re.compile(r"https://[^\s]+")


def manifest(url: str, sha256: str, version: str, homepage: str | None = None) -> dict[str, Any]:
    """The manifest as data; ValueError names a bad argument."""
    if not _URL.fullmatch(url) or not url.isprintable():
        raise ValueError(f"--url {url!r}: an https:// URL of the release archive")
    if not _SHA256.fullmatch(sha256):
        raise ValueError(f"--sha256 {sha256!r}: 64 lowercase hex digits (sha256sum of the archive)")
    if not _SEMVER.fullmatch(version) or _leading_zero_prerelease(version):
        raise ValueError(f"--version {version!r}: a semantic version with a leading v (v1.2.3)")
    spec: dict[str, Any] = {
        "version": version,
        "shortDescription": SHORT_DESCRIPTION,
        "description": DESCRIPTION,
        "caveats": CAVEATS,
    }
    if homepage:
        if not _URL.fullmatch(homepage) or not homepage.isprintable():
            raise ValueError(f"--homepage {homepage!r}: an https:// URL")
        spec["homepage"] = homepage
    spec["platforms"] = [
        {
            "selector": {
                "matchExpressions": [{"key": "os", "operator": "In", "values": list(OSES)}]
            },
            "uri": url,
            "sha256": sha256,
            "files": [{"from": BIN, "to": "."}, {"from": "LICENSE", "to": "."}],
            "bin": BIN,
        }
    ]
    return {"apiVersion": API_VERSION, "kind": "Plugin", "metadata": {"name": PLUGIN}, "spec": spec}


def _leading_zero_prerelease(version: str) -> bool:
    pre = version.split("+", 1)[0].partition("-")[2]
    return bool(pre) and any(p.isdigit() and p != "0" and p.startswith("0") for p in pre.split("."))


class _Dumper(yaml.SafeDumper):
    """Multi-line texts (description, caveats) as literal blocks, the way krew-index writes
    them; everything else as safe_dump does (quoted where YAML needs it)."""


def _text(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
    style = "|" if "\n" in value and value.replace("\n", "").isprintable() else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _text)


def render(data: dict[str, Any]) -> str:
    return yaml.dump(data, Dumper=_Dumper, sort_keys=False, default_flow_style=False, width=100)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", required=True, help="https URL of the release archive")
    parser.add_argument("--sha256", required=True, help="sha256 of the archive (hex)")
    parser.add_argument("--version", required=True, help="release version, v1.2.3")
    parser.add_argument("--homepage", help="project homepage (https URL)")
    parser.add_argument("-o", "--output", help="write here instead of stdout")
    args = parser.parse_args(argv)
    try:
        text = render(manifest(args.url, args.sha256, args.version, args.homepage))
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    if args.output:
        with open(args.output, "w", encoding="utf-8") as out:
            out.write(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
