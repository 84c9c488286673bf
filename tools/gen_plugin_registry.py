#!/usr/bin/env python3
"""Generate kschedctl/_generated/registry_data.py from the Kubernetes source of each version.

Usage::

    python tools/gen_plugin_registry.py SRC [SRC ...] [-o kschedctl/_generated/registry_data.py]

Each SRC is the source of one ``k8s.io/kubernetes`` version: a directory (the Go module cache's
``~/go/pkg/mod/k8s.io/kubernetes@v1.36.3``) or that module's zip
(``~/go/pkg/mod/cache/download/k8s.io/kubernetes/@v/v1.36.3.zip``, which
``go mod download -json k8s.io/kubernetes@v1.36.3`` in a scratch module fetches). The version is
read from the name (``kubernetes@v1.36.3``, ``v1.36.3.zip``). Stdlib only.

What it reads, per version (paths in the kubernetes tree):

- ``pkg/scheduler/framework/plugins/registry.go`` NewInTreeRegistry: the plugin names (each
  resolved through its package's ``Name`` constant and ``plugins/names/names.go``) and the
  constructor each name maps to;
- the plugin packages: the struct the constructor returns and the ``var _ fwk.XPlugin = &T{}``
  (``framework.XPlugin`` before 1.34) assertions on it: kube-scheduler type-asserts the plugin
  object against each extension point's interface (framework/runtime/framework.go
  updatePluginList), and upstream declares every one a plugin implements with such a line;
- ``pkg/scheduler/framework/runtime/framework.go`` getExtensionPoints: the extension points the
  framework builds, in the order it builds them (the first one names the error for a multiPoint
  plugin that does not exist);
- ``pkg/scheduler/apis/config/v1/default_plugins.go`` getDefaultPlugins and applyFeatureGates,
  evaluated with the version's default feature gates from ``pkg/features/*.go``
  (``kube_features.go``; 1.32 also ``versioned_kube_features.go``).

Anything in a shape this script does not know stops it with an error: fix the script rather than
hand-edit the output.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import textwrap
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

PLUGINS_DIR = "pkg/scheduler/framework/plugins"
REGISTRY_GO = f"{PLUGINS_DIR}/registry.go"
NAMES_GO = f"{PLUGINS_DIR}/names/names.go"
FRAMEWORK_GO = "pkg/scheduler/framework/runtime/framework.go"
DEFAULTS_GO = "pkg/scheduler/apis/config/v1/default_plugins.go"
FEATURES_GO = "pkg/features/*.go"
VALIDATION_GO = "pkg/scheduler/apis/config/validation/validation.go"
TYPES_GO = "pkg/scheduler/apis/config/types.go"
SOURCE_FILES = (
    REGISTRY_GO,
    f"{PLUGINS_DIR}/*/*.go",
    FRAMEWORK_GO,
    DEFAULTS_GO,
    FEATURES_GO,
    VALIDATION_GO,
    TYPES_GO,
)


class SourceError(Exception):
    """The source is not in a shape this generator understands."""


class Source:
    """Read-only view of one kubernetes source tree: a directory or a Go module zip."""

    def __init__(self, path: str) -> None:
        self.path = path
        match = re.search(r"v(1\.\d+\.\d+)(?:\.zip)?/?$", path.rstrip("/"))
        if not match:
            raise SourceError(
                f"{path}: cannot tell the version from the name (…@v1.X.Y or v1.X.Y.zip)"
            )
        self.version = match.group(1)
        self.minor = ".".join(self.version.split(".")[:2])
        self._zip: zipfile.ZipFile | None = None
        self._names: list[str] | None = None
        self._cache: dict[str, str] = {}
        self._prefix = ""
        if os.path.isfile(path):
            self._zip = zipfile.ZipFile(path)
            self._prefix = f"k8s.io/kubernetes@v{self.version}/"
        elif not os.path.isdir(path):
            raise SourceError(f"{path}: no such directory or zip")

    def read(self, rel: str) -> str:
        if rel not in self._cache:  # plugin packages are read once per plugin
            self._cache[rel] = self._read(rel)
        return self._cache[rel]

    def _read(self, rel: str) -> str:
        if self._zip is not None:
            try:
                return self._zip.read(self._prefix + rel).decode()
            except KeyError:
                raise SourceError(f"{self.path}: no {rel}") from None
        try:
            return Path(self.path, rel).read_text()
        except FileNotFoundError:
            raise SourceError(f"{self.path}: no {rel}") from None

    def go_files(self, rel_dir: str) -> list[str]:
        """Non-test .go files directly in rel_dir, sorted."""
        if self._zip is not None:
            base = self._prefix + rel_dir.rstrip("/") + "/"
            if self._names is None:
                self._names = self._zip.namelist()
            names = [
                n[len(self._prefix) :]
                for n in self._names
                if n.startswith(base) and "/" not in n[len(base) :]
            ]
        else:
            d = Path(self.path, rel_dir)
            names = [f"{rel_dir}/{p.name}" for p in d.iterdir()] if d.is_dir() else []
        return sorted(n for n in names if n.endswith(".go") and not n.endswith("_test.go"))


@dataclass
class VersionData:
    version: str  # "1.36.3"
    extension_points: tuple[str, ...]  # framework order, e.g. ("PreFilter", "Filter", …)
    plugins: dict[str, tuple[str, ...]]  # plugin name → extension points it implements
    default_plugins: tuple[tuple[str, int | None], ...]  # multiPoint enabled: (name, weight)
    gates: dict[str, bool] = field(default_factory=dict)  # gates the defaults consulted
    invalid: tuple[str, ...] = ()  # plugins validation refuses for a v1 config
    config_points: tuple[str, ...] = ()  # the Plugins fields of the config, in their order


def _block(text: str, start: int) -> str:
    """The text between the brace at or after ``start`` and its matching close brace."""
    open_at = text.index("{", start)
    depth = 0
    for i in range(open_at, len(text)):
        if text[i] == "{":
            depth += 1
        elif text[i] == "}":
            depth -= 1
            if depth == 0:
                return text[open_at + 1 : i]
    raise SourceError("unbalanced braces")


def _func_body(text: str, name: str, where: str) -> str:
    match = re.search(rf"^func (?:\([^)]*\) )?{name}\(.*?\)[^{{\n]*\{{$", text, re.M | re.S)
    if not match:
        raise SourceError(f"{where}: no func {name}")
    return _block(text, match.end() - 1)


def _strip_comments(text: str) -> str:
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def _names(src: Source) -> dict[str, str]:
    text = _strip_comments(src.read(NAMES_GO))
    return dict(re.findall(r'^\s*(\w+)\s*=\s*"([^"]+)"', text, re.M))


def _package_consts(src: Source, pkg_dir: str, names: dict[str, str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for rel in src.go_files(pkg_dir):
        text = _strip_comments(src.read(rel))
        for ident, value in re.findall(
            r'^\s*(?:const\s+)?(\w+)\s*=\s*(names\.\w+|"[^"]*")\s*$', text, re.M
        ):
            if value.startswith("names."):
                out[ident] = names[value.split(".", 1)[1]]
            else:
                out[ident] = value.strip('"')
    return out


def _constructor_type(src: Source, pkg_dir: str, func: str, depth: int = 0) -> str:
    """The plugin struct a constructor returns (following calls to helpers of its package)."""
    for rel in src.go_files(pkg_dir):
        text = _strip_comments(src.read(rel))
        match = re.search(rf"^func {func}\(([^\n]*)$", text, re.M)
        if not match:
            continue
        declared = re.search(r"\(\*(\w+), error\)\s*\{$", match.group(1))
        if declared:
            return declared.group(1)
        body = _func_body(text, func, rel)
        plugin_types = _types_with_name_method(src, pkg_dir)
        for candidate in re.findall(r"(?:[&=]\s*(\w+)\{|new\((\w+)\))", body):
            candidate = candidate[0] or candidate[1]
            if candidate in plugin_types:
                return candidate
        if depth < 3:  # e.g. NewEBS → newNonCSILimitsWithInformerFactory → newNonCSILimits
            for helper in re.findall(r"\breturn (\w+)\(", body):
                if helper != func:
                    return _constructor_type(src, pkg_dir, helper, depth + 1)
        raise SourceError(f"{rel}: cannot tell which plugin type {func} returns")
    raise SourceError(f"{pkg_dir}: no func {func}")


def _types_with_name_method(src: Source, pkg_dir: str) -> set[str]:
    found: set[str] = set()
    for rel in src.go_files(pkg_dir):
        found.update(re.findall(r"^func \(\w+ \*?(\w+)\) Name\(\) string", src.read(rel), re.M))
    return found


def _assertions(src: Source, pkg_dir: str, type_name: str) -> set[str]:
    points: set[str] = set()
    for rel in src.go_files(pkg_dir):
        text = _strip_comments(src.read(rel))
        for iface, typ, nil_typ in re.findall(
            r"\b_\s+(?:fwk|framework)\.(\w+)Plugin\s*=\s*(?:&(\w+)\{\}|\(\*(\w+)\)\(nil\))", text
        ):
            if type_name in (typ, nil_typ):
                points.add(iface)
    return points


def _import_dirs(text: str) -> dict[str, str]:
    """Import alias → path relative to the kubernetes tree, for k8s.io/kubernetes imports."""
    out: dict[str, str] = {}
    for alias, path in re.findall(r'^\s*(\w+\s+)?"k8s.io/kubernetes/([^"]+)"', text, re.M):
        name = alias.strip() if alias else path.rsplit("/", 1)[1]
        out[name] = path
    return out


def _registry(
    src: Source, names: dict[str, str], points: tuple[str, ...]
) -> dict[str, tuple[str, ...]]:
    text = _strip_comments(src.read(REGISTRY_GO))
    imports = _import_dirs(text)
    body = _func_body(text, "NewInTreeRegistry", REGISTRY_GO)
    match = re.search(r"runtime\.Registry\{", body)
    if not match:
        raise SourceError(f"{REGISTRY_GO}: no runtime.Registry literal")
    literal = _block(body, match.end() - 1)
    out: dict[str, tuple[str, ...]] = {}
    for key_pkg, key_const, value in re.findall(r"^\s*(\w+)\.(\w+):\s*(.+?),?\s*$", literal, re.M):
        ctor = re.findall(r"\b(\w+)\.(New\w*)\b", value)
        ctor = [c for c in ctor if c[0] in imports]
        if len(ctor) != 1:
            raise SourceError(f"{REGISTRY_GO}: cannot read the constructor in {value!r}")
        pkg_dir = imports[ctor[0][0]]
        consts = _package_consts(src, imports[key_pkg], names)
        if key_const not in consts:
            raise SourceError(f"{imports[key_pkg]}: no constant {key_const}")
        type_name = _constructor_type(src, pkg_dir, ctor[0][1])
        implemented = _assertions(src, pkg_dir, type_name)
        out[consts[key_const]] = tuple(p for p in points if p in implemented)
    if not out:
        raise SourceError(f"{REGISTRY_GO}: empty registry")
    return dict(sorted(out.items()))


def _extension_points(src: Source) -> tuple[str, ...]:
    text = _strip_comments(src.read(FRAMEWORK_GO))
    body = _func_body(text, "getExtensionPoints", FRAMEWORK_GO)
    found = re.findall(r"\{&plugins\.(\w+), &f\.(\w+)Plugins\}", body)
    if not found:
        raise SourceError(f"{FRAMEWORK_GO}: getExtensionPoints lists nothing")
    for field_name, slice_name in found:
        if slice_name[0].upper() + slice_name[1:] != field_name:
            raise SourceError(f"{FRAMEWORK_GO}: {field_name} fills {slice_name}Plugins")
    return tuple(f for f, _ in found)


def _parse_version(text: str) -> tuple[int, int]:
    major, minor = text.split(".")[:2]
    return int(major), int(minor)


def _gate_default(src: Source, gate: str) -> bool:
    # 1.32 keeps the versioned specs in versioned_kube_features.go beside kube_features.go.
    text = "\n".join(_strip_comments(src.read(rel)) for rel in src.go_files("pkg/features"))
    for match in re.finditer(rf"^\s*{gate}:\s*\{{", text, re.M):
        spec = _block(text, match.end() - 1)
        if "Default:" not in spec:
            continue  # e.g. the dependency map
        versioned = re.findall(
            r'Version:\s*version\.MustParse\("([\d.]+)"\),\s*Default:\s*(true|false)', spec
        )
        if versioned:
            current = _parse_version(src.minor)
            default = None
            for ver, value in versioned:
                if _parse_version(ver) <= current:
                    default = value == "true"
            if default is None:
                raise SourceError(f"{FEATURES_GO}: {gate} has no spec for {src.minor}")
            return default
        plain = re.search(r"Default:\s*(true|false)", spec)
        if plain:
            return plain.group(1) == "true"
    raise SourceError(f"{FEATURES_GO}: no default for gate {gate}")


_PLUGIN_LITERAL = re.compile(
    r"v1\.Plugin\{Name:\s*names\.(\w+)(?:,\s*Weight:\s*[^()]*(?:\[int32\])?\((\d+)\))?\}"
)


def _defaults(
    src: Source, names: dict[str, str]
) -> tuple[tuple[tuple[str, int | None], ...], dict[str, bool]]:
    text = _strip_comments(src.read(DEFAULTS_GO))
    body = _func_body(text, "getDefaultPlugins", DEFAULTS_GO)
    start = body.index("MultiPoint:")
    enabled_at = body.index("Enabled:", start)
    literal = _block(body, body.index("{", body.index("[]v1.Plugin", enabled_at)))
    plugins: list[tuple[str, int | None]] = []
    for entry in re.findall(
        r"\{Name:\s*names\.(\w+)(?:,\s*Weight:\s*[^{}]*?\((\d+)\))?\}", literal
    ):
        plugins.append((names[entry[0]], int(entry[1]) if entry[1] else None))
    if not plugins:
        raise SourceError(f"{DEFAULTS_GO}: no default multiPoint plugins")
    gates: dict[str, bool] = {}
    if "applyFeatureGates(" in body:
        apply = _func_body(text, "applyFeatureGates", DEFAULTS_GO)
        for match in re.finditer(
            r"if utilfeature\.DefaultFeatureGate\.Enabled\(features\.(\w+)\)\s*\{", apply
        ):
            gate = match.group(1)
            gates[gate] = _gate_default(src, gate)
            block = _block(apply, match.end() - 1)
            call = re.fullmatch(r"\s*(apply\w+)\(config\)\s*", block)
            if call:
                block = _func_body(text, call.group(1), DEFAULTS_GO)
            # A disabled gate's block is still read, so an unknown shape fails here too.
            _apply(block, plugins if gates[gate] else list(plugins), names)
        leftover = apply
        while match := re.search(
            r"if utilfeature\.DefaultFeatureGate\.Enabled\(features\.\w+\)\s*\{", leftover
        ):
            inner = _block(leftover, match.end() - 1)
            leftover = leftover[: match.start()] + leftover[match.end() + len(inner) + 1 :]
        if leftover.strip():
            raise SourceError(
                f"{DEFAULTS_GO}: applyFeatureGates has a condition this script does not read"
            )
    return tuple(plugins), dict(sorted(gates.items()))


def _apply(block: str, plugins: list[tuple[str, int | None]], names: dict[str, str]) -> None:
    """Run one gate's additions: appends, or the insert before DefaultPreemption."""
    added = [(names[n], int(w) if w else None) for n, w in _PLUGIN_LITERAL.findall(block)]
    if not added:
        raise SourceError(f"{DEFAULTS_GO}: a gated block adds no plugin: {block.strip()[:80]!r}")
    # 1.26+ DynamicResources: a loop inserting before DefaultPreemption (nothing if absent).
    insert_before = re.search(r"Enabled\[i\]\.Name == names\.(\w+)", block)
    # 1.37 DeferredPodScheduling: slices.IndexFunc + slices.Insert before NodeResourcesFit,
    # else append (the same plugin literal twice).
    index_func = re.search(
        r"slices\.IndexFunc\(config\.MultiPoint\.Enabled,.*?Name == names\.(\w+)", block, re.S
    )
    if insert_before or index_func:
        anchor = names[(insert_before.group(1) if insert_before else index_func.group(1))]
        if index_func:
            if "slices.Insert(config.MultiPoint.Enabled, idx," not in block or len(set(added)) != 1:
                raise SourceError(
                    f"{DEFAULTS_GO}: unknown shape of a gated block: {block.strip()[:80]!r}"
                )
            added = added[:1]
        index = next((i for i, (n, _) in enumerate(plugins) if n == anchor), None)
        if index is not None:
            plugins[index:index] = added
        elif index_func:
            plugins.extend(added)
        return
    if block.count("append(config.MultiPoint.Enabled,") != len(added):
        raise SourceError(f"{DEFAULTS_GO}: unknown shape of a gated block: {block.strip()[:80]!r}")
    plugins.extend(added)


def _invalid_plugins(src: Source) -> tuple[str, ...]:
    """invalidPluginsByVersion as isPluginInvalid reads it for a v1 config: every entry up to v1."""
    text = _strip_comments(src.read(VALIDATION_GO))
    match = re.search(r"^var invalidPluginsByVersion = \[\]invalidPlugins\{", text, re.M)
    if not match:
        raise SourceError(f"{VALIDATION_GO}: no invalidPluginsByVersion")
    literal = _block(text, match.end() - 1)
    found: list[str] = []
    entries = re.findall(
        r"schemeGroupVersion:\s*(\w+)\.SchemeGroupVersion\.String\(\),\s*plugins:\s*\[\]string\{([^}]*)\}",
        literal,
    )
    if not entries:
        raise SourceError(f"{VALIDATION_GO}: cannot read invalidPluginsByVersion")
    for group_version, plugins in entries:
        found += re.findall(r'"(\w+)"', plugins)
        if group_version == "v1":
            return tuple(sorted(set(found)))
    raise SourceError(f"{VALIDATION_GO}: invalidPluginsByVersion has no v1 entry")


def _config_points(src: Source) -> tuple[str, ...]:
    """The PluginSet fields of the config's Plugins struct (internal types mirror v1's)."""
    text = _strip_comments(src.read(TYPES_GO))
    match = re.search(r"^type Plugins struct \{", text, re.M)
    if not match:
        raise SourceError(f"{TYPES_GO}: no type Plugins")
    fields = re.findall(r"^\s*(\w+)\s+PluginSet\s*$", _block(text, match.end() - 1), re.M)
    if "MultiPoint" not in fields:
        raise SourceError(f"{TYPES_GO}: Plugins has no MultiPoint")
    return tuple(fields)


def extract(path: str) -> VersionData:
    src = Source(path)
    names = _names(src)
    points = _extension_points(src)
    plugins = _registry(src, names, points)
    defaults, gates = _defaults(src, names)
    for name, _ in defaults:
        if name not in plugins:
            raise SourceError(f"{src.version}: default plugin {name} is not in the registry")
    config_points = _config_points(src)
    for point in points:
        if point not in config_points:
            raise SourceError(
                f"{src.version}: the framework builds {point}, the config has no field"
            )
    return VersionData(
        src.version, points, plugins, defaults, gates, _invalid_plugins(src), config_points
    )


def render(datas: list[VersionData]) -> str:
    datas = sorted(datas, key=lambda d: tuple(int(x) for x in d.version.split(".")))
    tags = ", ".join(f"v{d.version}" for d in datas)
    lines = [
        '"""Generated by tools/gen_plugin_registry.py; do not edit.',
        "",
        *textwrap.wrap(f"From k8s.io/kubernetes {tags}.", 96),
        "",
        *textwrap.wrap("Read, per version: " + ", ".join(SOURCE_FILES) + ".", 96),
        "Regenerate: python tools/gen_plugin_registry.py SRC... (see that script's docstring),",
        "then ruff format this file.",
        '"""',
        "",
        "from __future__ import annotations",
        "",
        "# minor → the k8s.io/kubernetes version the tables below were read from.",
        "SOURCE_VERSIONS: dict[str, str] = {",
    ]
    lines += [f'    "{_minor(d)}": "v{d.version}",' for d in datas]
    lines += [
        "}",
        "",
        "# minor → extension points the framework builds, in its order (getExtensionPoints).",
        "EXTENSION_POINTS: dict[str, tuple[str, ...]] = {",
    ]
    for d in datas:
        lines.append(f'    "{_minor(d)}": (')
        lines += [f'        "{p}",' for p in d.extension_points]
        lines.append("    ),")
    lines += [
        "}",
        "",
        "# minor → in-tree plugin → extension points it implements (NewInTreeRegistry).",
        "PLUGINS: dict[str, dict[str, tuple[str, ...]]] = {",
    ]
    for d in datas:
        lines.append(f'    "{_minor(d)}": {{')
        for name, pts in d.plugins.items():
            inner = ", ".join(f'"{p}"' for p in pts)
            lines.append(f'        "{name}": ({inner}{"," if len(pts) == 1 else ""}),')
        lines.append("    },")
    lines += [
        "}",
        "",
        "# minor → default multiPoint plugins (name, weight or None), default gates applied.",
        "DEFAULT_PLUGINS: dict[str, tuple[tuple[str, int | None], ...]] = {",
    ]
    for d in datas:
        lines.append(f'    "{_minor(d)}": (')
        lines += [f'        ("{n}", {w}),' for n, w in d.default_plugins]
        lines.append("    ),")
    lines += [
        "}",
        "",
        "# minor → the feature gates getDefaultPlugins consults, at their default.",
        "DEFAULT_GATES: dict[str, dict[str, bool]] = {",
    ]
    for d in datas:
        inner = ", ".join(f'"{g}": {v}' for g, v in d.gates.items())
        lines.append(f'    "{_minor(d)}": {{{inner}}},')
    lines += [
        "}",
        "",
        "# minor → plugins validation.go refuses in a v1 config (invalidPluginsByVersion).",
        "INVALID_PLUGINS: dict[str, tuple[str, ...]] = {",
    ]
    for d in datas:
        inner = ", ".join(f'"{n}"' for n in d.invalid)
        lines.append(f'    "{_minor(d)}": ({inner}{"," if len(d.invalid) == 1 else ""}),')
    lines += [
        "}",
        "",
        "# minor → the config's plugins fields (PluginSets of type Plugins), in their order.",
        "CONFIG_POINTS: dict[str, tuple[str, ...]] = {",
    ]
    for d in datas:
        lines.append(f'    "{_minor(d)}": (')
        lines += [f'        "{p}",' for p in d.config_points]
        lines.append("    ),")
    lines += ["}", ""]
    return "\n".join(lines)


def _minor(d: VersionData) -> str:
    return ".".join(d.version.split(".")[:2])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sources", nargs="+", help="kubernetes source dirs or module zips")
    parser.add_argument("-o", "--output", default="kschedctl/_generated/registry_data.py")
    args = parser.parse_args(argv)
    datas: dict[str, VersionData] = {}
    try:
        for path in args.sources:
            data = extract(path)
            if _minor(data) in datas:
                raise SourceError(
                    f"two sources for {_minor(data)}: {datas[_minor(data)].version}, {data.version}"
                )
            datas[_minor(data)] = data
    except SourceError as err:
        print(f"gen_plugin_registry: {err}", file=sys.stderr)
        return 1
    Path(args.output).write_text(render(list(datas.values())))
    print(f"wrote {args.output}: {', '.join(sorted(datas))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
