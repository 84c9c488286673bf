"""Generate kschedctl/_generated/scheduler_plugins.py from a git mirror of scheduler-plugins.

Usage: python tools/gen_scheduler_plugins.py MIRROR_GIT_DIR [--check]

MIRROR_GIT_DIR is a (bare) git clone of https://github.com/kubernetes-sigs/scheduler-plugins
with its tags. For every release tag ``v0.X.Y`` (no ``-devel``/``-rc`` suffix) of Kubernetes
1.25 or newer, read at that tag:

- ``go.mod``: the ``k8s.io/kubernetes`` it requires (its Kubernetes release);
- ``cmd/scheduler/main.go``: the plugins ``app.WithPlugin(pkg.Name, pkg.New)`` registers (not
  the commented-out samples);
- each plugin package under ``pkg/``: its ``Name`` constant, the type whose ``Name()`` returns
  it, and the framework methods that type defines (``Less`` → QueueSort, ``Filter``, ``Score``,
  …): the extension points it implements;
- ``apis/config/v1/types.go``: the plugin's args kind (``<Name>Args``) and its JSON fields;
- ``apis/config/validation/validation_pluginargs.go``: the ``args.X < 0`` checks of the args
  validation the plugin's constructor runs (with their message);
- the plugin package (and its sub-packages): which custom resources it reads (the RBAC rules
  of ``manifests/install/charts/as-a-second-scheduler/templates/rbac.yaml`` grant those to the
  whole scheduler; kschedctl grants each plugin's to the profiles that enable it) and whether
  it writes them;
- ``build/scheduler/Dockerfile``: the binary's path in the image.

``--check`` exits 1 if the committed table differs from what the mirror gives.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parent.parent / "kschedctl" / "_generated" / "scheduler_plugins.py"
OLDEST_MINOR = 25  # kubescheduler.config.k8s.io/v1 (kschedctl's oldest supported version)
MODULE = "sigs.k8s.io/scheduler-plugins/"

# Go method of the plugin type → the extension point (k8s.io/kubernetes
# pkg/scheduler/framework/interface.go: QueueSortPlugin.Less, FilterPlugin.Filter, …).
METHODS = {
    "PreEnqueue": "PreEnqueue",
    "Less": "QueueSort",
    "PreFilter": "PreFilter",
    "Filter": "Filter",
    "PostFilter": "PostFilter",
    "PreScore": "PreScore",
    "Score": "Score",
    "Reserve": "Reserve",
    "Permit": "Permit",
    "PreBind": "PreBind",
    "Bind": "Bind",
    "PostBind": "PostBind",
}

# Custom resources a plugin may read: (apiGroup, resource) → evidence in its Go source (the
# typed object or client it uses). A plugin reads them through an informer or a
# controller-runtime cache: get, list, watch.
RESOURCES: dict[tuple[str, str], str] = {
    ("scheduling.x-k8s.io", "podgroups"): r"\bv1alpha1\.PodGroup(List)?\b|\.PodGroups\(",
    ("scheduling.x-k8s.io", "elasticquotas"): (
        r"\bv1alpha1\.ElasticQuota(List)?\b|\.ElasticQuotas\("
    ),
    ("topology.node.k8s.io", "noderesourcetopologies"): (
        r"\b\w+\.NodeResourceTopology(List)?\b(?!\w)|\.NodeResourceTopologies\("
    ),
    ("appgroup.diktyo.x-k8s.io", "appgroups"): r"\b\w+\.AppGroup(List)?\b|\.AppGroups\(",
    ("networktopology.diktyo.x-k8s.io", "networktopologies"): (
        r"\b\w+\.NetworkTopology(List)?\b|\.NetworkTopologies\("
    ),
    ("scheduling.k8s.io", "priorityclasses"): r"\.PriorityClasses\(\)",
    # the security-profiles-operator's v1beta1 (the pod's own field is corev1.SeccompProfile)
    ("security-profiles-operator.x-k8s.io", "seccompprofiles"): r"\bv1beta1\.SeccompProfile\b",
}
# Writes: (apiGroup, resource) → (verb, evidence).
WRITES: dict[tuple[str, str], tuple[str, str]] = {
    ("scheduling.x-k8s.io", "podgroups"): ("patch", r"\.PodGroups\([^)]*\)\.Patch\("),
}
READ = ["get", "list", "watch"]

GO_TYPES = {
    "int": "int", "int32": "int", "int64": "int", "float64": "number", "float32": "number",
    "string": "str", "bool": "bool",
}  # fmt: skip
# In-tree args a scheduler-plugins args type is defined as (k8s.io/kubernetes
# pkg/scheduler/apis/config/v1 types_pluginargs.go: DefaultPreemptionArgs).
ALIASES = {
    "schedulerconfigv1.DefaultPreemptionArgs": {
        "minCandidateNodesPercentage": "int",
        "minCandidateNodesAbsolute": "int",
    },
}


def git(mirror: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "--git-dir", str(mirror), *args], check=True, capture_output=True, text=True
    ).stdout


def show(mirror: Path, tag: str, path: str) -> str:
    try:
        return git(mirror, "show", f"{tag}:{path}")
    except subprocess.CalledProcessError:
        return ""


def go_files(mirror: Path, tag: str, directory: str, recursive: bool) -> dict[str, str]:
    flags = ["-r"] if recursive else []
    listing = git(mirror, "ls-tree", *flags, "--name-only", tag, directory + "/")
    return {
        path: show(mirror, tag, path)
        for path in listing.split()
        if path.endswith(".go") and not path.endswith("_test.go")
    }


def release_tags(mirror: Path) -> list[str]:
    tags = [t for t in git(mirror, "tag").split() if re.fullmatch(r"v0\.\d+\.\d+", t)]
    tags = [t for t in tags if int(t.split(".")[1]) >= OLDEST_MINOR]
    return sorted(tags, key=lambda t: tuple(int(p) for p in t[1:].split(".")))


def strip_comments(go: str) -> str:
    go = re.sub(r"/\*.*?\*/", "", go, flags=re.S)
    return re.sub(r"(?m)//.*$", "", go)


def registered(main_go: str) -> list[tuple[str, str]]:
    """(import path, name constant) of each app.WithPlugin(pkg.Const, …) in main.go."""
    code = strip_comments(main_go)
    imports = {}
    for alias, path in re.findall(
        r'(?m)^\s*(\w+\s+)?"(' + re.escape(MODULE) + r'pkg/[^"]+)"', code
    ):
        imports[alias.strip() or path.rsplit("/", 1)[-1]] = path
    return [
        (imports[pkg], const)
        for pkg, const in re.findall(r"app\.WithPlugin\(\s*(\w+)\.(\w+)\s*,", code)
    ]


def plugin_facts(mirror: Path, tag: str, import_path: str, const: str) -> dict[str, Any]:
    directory = import_path.removeprefix(MODULE)
    own = go_files(mirror, tag, directory, recursive=False)
    code = {path: strip_comments(text) for path, text in own.items()}
    name = source = ""
    for path, text in code.items():
        found = re.search(r"\b" + const + r'\b\s*(?:string\s*)?=\s*"([^"]+)"', text)
        if found:
            name, source = found.group(1), path
    if not name:
        raise SystemExit(f"{tag}: no constant {const} in {directory}")
    receiver = ""
    for text in code.values():
        found = re.search(
            r"func\s*\(\s*\w*\s*\*?(\w+)\s*\)\s*Name\(\)\s*string\s*\{\s*return\s+" + const + r"\b",
            text,
        )
        if found:
            receiver = found.group(1)
    if not receiver:
        raise SystemExit(f"{tag}: no type of {directory} returns {const} from Name()")
    points = set()
    for text in code.values():
        for method in re.findall(r"func\s*\(\s*\w*\s*\*?" + receiver + r"\s*\)\s*(\w+)\s*\(", text):
            if method in METHODS:
                points.add(METHODS[method])
    everything = "\n".join(
        strip_comments(t) for t in go_files(mirror, tag, directory, recursive=True).values()
    )
    rules = []
    for (group, resource), evidence in RESOURCES.items():
        if re.search(evidence, everything):
            verbs = list(READ)
            write = WRITES.get((group, resource))
            if write and re.search(write[1], everything):
                verbs.append(write[0])
            rules.append({"apiGroups": [group], "resources": [resource], "verbs": verbs})
    return {"name": name, "points": sorted(points), "rules": rules, "source": source}


def struct_fields(types_go: str, struct: str) -> dict[str, str] | None:
    """JSON field → kind of ``type struct`` in types.go (inline structs merged); None when a
    tag does not parse (kube-scheduler's decoder then uses the Go name: not checked)."""
    code = strip_comments(types_go)
    alias = re.search(r"(?m)^type\s+" + struct + r"\s+([\w.]+)\s*$", code)
    if alias:
        return ALIASES.get(alias.group(1))
    body = re.search(r"(?ms)^type\s+" + struct + r"\s+struct\s*\{(.*?)^\}", code)
    if not body:
        return None
    fields: dict[str, str] = {}
    for line in body.group(1).splitlines():
        line = line.strip()
        if not line:
            continue
        tag = re.search(r"`json:\"([^\"]*)\"`", line)
        if not tag:
            return None  # a malformed tag (e.g. PeaksArgs at some releases)
        parts = line.split()
        json_name = tag.group(1).split(",")[0]
        if "inline" in tag.group(1).split(",")[1:] and not json_name:
            if parts[0] == "metav1.TypeMeta":
                continue
            inner = struct_fields(types_go, parts[0])
            if inner is None:
                return None
            fields.update(inner)
            continue
        go_type = parts[1].lstrip("*")
        if go_type.startswith("[]"):
            kind = "list"
        elif go_type.startswith("map[") or "." in go_type and go_type != "v1.ResourceList":
            kind = "dict" if go_type.startswith("map[") else "any"
        elif go_type == "v1.ResourceList":
            kind = "dict"
        elif go_type in GO_TYPES:
            kind = GO_TYPES[go_type]
        else:
            base = re.search(r"(?m)^type\s+" + go_type + r"\s+(\w+)\s*$", code)
            if base and base.group(1) in GO_TYPES:
                kind = GO_TYPES[base.group(1)]
            elif re.search(r"(?m)^type\s+" + go_type + r"\s+struct\b", code):
                kind = "dict"
            else:
                kind = "any"
        fields[json_name] = kind
    return fields


def non_negative(validation_go: str, plugin: str, types_go: str) -> dict[str, str]:
    """JSON field → message of the ``args.Field < 0`` checks in Validate<plugin>Args."""
    code = strip_comments(validation_go)
    body = re.search(r"(?ms)^func\s+Validate" + plugin + r"Args\(.*?^\}", code)
    if not body:
        return {}
    out = {}
    for field, message in re.findall(
        r'args\.(\w+)\s*<\s*0\s*\{.*?"([^"]+)"\s*\)\)', body.group(0), flags=re.S
    ):
        tag = re.search(r"\b" + field + r'\s+\*?\w+\s+`json:"(\w+)', types_go)
        if tag:
            out[tag.group(1)] = message
    return out


def release(mirror: Path, tag: str) -> dict[str, Any]:
    kube = re.search(
        r"(?m)^\s*k8s\.io/kubernetes\s+(v1\.\d+\.\d+)\s*$", show(mirror, tag, "go.mod")
    )
    if not kube:
        raise SystemExit(f"{tag}: go.mod requires no k8s.io/kubernetes")
    dockerfile = show(mirror, tag, "build/scheduler/Dockerfile")
    entry = re.search(r'ENTRYPOINT\s*\[\s*"([^"]+)"', dockerfile)
    copied = re.search(r"(?m)^COPY\s.*\s(/\S*kube-scheduler)\s*$", dockerfile)
    binary = entry.group(1) if entry else copied.group(1) if copied else ""
    if not binary:
        raise SystemExit(f"{tag}: no binary path in build/scheduler/Dockerfile")
    types_go = show(mirror, tag, "apis/config/v1/types.go")
    validation_go = show(mirror, tag, "apis/config/validation/validation_pluginargs.go")
    plugins = {}
    for import_path, const in registered(show(mirror, tag, "cmd/scheduler/main.go")):
        facts = plugin_facts(mirror, tag, import_path, const)
        name = facts["name"]
        kind = name + "Args"
        has_args = re.search(r"(?m)^type\s+" + kind + r"\b", types_go) is not None
        plugins[name] = {
            "points": facts["points"],
            "args": kind if has_args else None,
            "argsFields": struct_fields(types_go, kind) if has_args else None,
            "nonNegative": non_negative(validation_go, name, types_go) if has_args else {},
            "rbac": facts["rules"],
            "source": facts["source"],
        }
    return {"kubernetes": kube.group(1), "binary": binary, "plugins": plugins}


HEADER = '''"""scheduler-plugins releases: GENERATED by tools/gen_scheduler_plugins.py, do not edit.

Source: https://github.com/kubernetes-sigs/scheduler-plugins at each tag below: go.mod
(k8s.io/kubernetes), cmd/scheduler/main.go (app.WithPlugin), pkg/<plugin>/ (Name, the
framework methods of the plugin type, the custom resources it reads), apis/config/v1/types.go
(args), apis/config/validation/validation_pluginargs.go (args checks), build/scheduler/Dockerfile
(the binary). Read through :mod:`kschedctl.model.config.distributions`.
"""

from typing import Any, Final

RELEASES: Final[dict[str, dict[str, Any]]] = '''


def generate(mirror: Path) -> str:
    table = {tag: release(mirror, tag) for tag in release_tags(mirror)}
    body = json.dumps(table, indent=4)
    body = re.sub(r"\bnull\b", "None", body)  # the only bare JSON word in the table
    text = HEADER + body + "\n"
    # the repository's formatter, so that the committed file is what ruff keeps
    return subprocess.run(
        ["ruff", "format", "--stdin-filename", str(OUT), "-"],
        input=text,
        check=True,
        capture_output=True,
        text=True,
    ).stdout


def main(argv: list[str]) -> int:
    if not argv or argv[0].startswith("-"):
        print(__doc__, file=sys.stderr)
        return 2
    text = generate(Path(argv[0]))
    if "--check" in argv[1:]:
        same = OUT.read_text() == text
        print("up to date" if same else f"{OUT} differs from the mirror", file=sys.stderr)
        return 0 if same else 1
    OUT.write_text(text)
    print(f"wrote {OUT}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
