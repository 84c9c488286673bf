"""tools/krew_manifest.py renders a manifest krew accepts.

``krew_problems`` restates krew's ``ValidatePlugin`` (sigs.k8s.io/krew
internal/index/validation/validate.go at db921d5, with index/types.go for the field names and
internal/installation/semver for the version): the rendered file must pass it, and each rule
is shown to bite on a broken copy.
"""

from __future__ import annotations

import copy
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

SCRIPT = Path(__file__).resolve().parents[2] / "tools" / "krew_manifest.py"
SHA = "0123456789abcdef" * 4
URL = "https://github.com/example/kschedctl/releases/download/v0.4.0/kubectl-sched.tar.gz"

_WINDOWS_FORBIDDEN = {"CON", "PRN", "AUX", "NUL", *(f"COM{i}" for i in range(1, 10))}
_WINDOWS_FORBIDDEN |= {f"LPT{i}" for i in range(1, 10)}
_SEMANTIC = re.compile(
    r"\s*v([0-9]+(?:\.[0-9]+)*)"
    r"((?:-[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?(?:\+[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?)\s*"
)


def _semver_ok(version: str) -> bool:
    match = _SEMANTIC.fullmatch(version)
    if not match:
        return False
    parts = match.group(1).split(".")
    return len(parts) == 3 and not any(p.startswith("0") and p != "0" for p in parts)


def _selector_problem(sel: Any) -> str | None:
    if sel is None:
        return "nil selector is not supported"
    labels, exprs = sel.get("matchLabels"), sel.get("matchExpressions")
    if labels is None and not exprs:
        return "empty selector is not supported"
    keys = list(labels or {}) + [e.get("key") for e in exprs or []]
    bad = [k for k in keys if k not in ("os", "arch")]
    if bad:
        return f"key {bad[0]!r} not supported"
    if labels is not None and len(labels) == 0:
        return "`matchLabels` specified but empty"
    if exprs is not None and len(exprs) == 0:
        return "`matchExpressions` specified but empty"
    return None


def krew_problems(name: str, plugin: dict[str, Any]) -> list[str]:
    problems = []
    if plugin.get("apiVersion") != "krew.googlecontainertools.github.com/v1alpha2":
        problems.append("apiVersion")
    if plugin.get("kind") != "Plugin":
        problems.append("kind")
    if not re.fullmatch(r"[\w-]+", name) or name.upper() in _WINDOWS_FORBIDDEN:
        problems.append("unsafe name")
    if (plugin.get("metadata") or {}).get("name") != name:
        problems.append("metadata.name")
    spec = plugin.get("spec") or {}
    short = spec.get("shortDescription") or ""
    if not short:
        problems.append("shortDescription missing")
    if "\r" in short or "\n" in short:
        problems.append("shortDescription has line breaks")
    platforms = spec.get("platforms") or []
    if not platforms:
        problems.append("no platform")
    if not spec.get("version"):
        problems.append("no version")
    elif not _semver_ok(spec["version"]):
        problems.append("version not semantic")
    for p in platforms:
        if not p.get("uri"):
            problems.append("uri")
        if not p.get("sha256"):
            problems.append("sha256 missing")
        elif not re.fullmatch(r"[a-f0-9]{64}", p["sha256"]):
            problems.append("sha256 pattern")
        if not p.get("bin"):
            problems.append("bin")
        files = p.get("files")
        if files is not None:
            if len(files) == 0:
                problems.append("files empty")
            problems += ["files from/to" for op in files if not op.get("from") or not op.get("to")]
        selector = _selector_problem(p.get("selector"))
        if selector:
            problems.append(selector)
    return problems


def render(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )


def rendered() -> dict[str, Any]:
    result = render("--url", URL, "--sha256", SHA, "--version", "v0.4.0")
    assert result.returncode == 0, result.stderr
    data = yaml.safe_load(result.stdout)
    assert isinstance(data, dict)
    return data


def test_rendered_manifest_passes_krews_validation() -> None:
    plugin = rendered()
    assert krew_problems("sched", plugin) == []
    platform = plugin["spec"]["platforms"][0]
    assert (platform["uri"], platform["sha256"], platform["bin"]) == (URL, SHA, "kubectl-sched")
    assert {"from": "kubectl-sched", "to": "."} in platform["files"]
    assert plugin["spec"]["version"] == "v0.4.0"


def test_output_file_and_homepage(tmp_path: Path) -> None:
    target = tmp_path / "sched.yaml"
    result = render(
        "--url",
        URL,
        "--sha256",
        SHA,
        "--version",
        "v1.0.0-rc.1",
        "--homepage",
        "https://x.io",
        "-o",
        str(target),
    )
    assert result.returncode == 0 and result.stdout == ""
    plugin = yaml.safe_load(target.read_text())
    assert krew_problems("sched", plugin) == []
    assert plugin["spec"]["homepage"] == "https://x.io"


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (["--url", URL, "--sha256", SHA.upper(), "--version", "v0.4.0"], "--sha256"),
        (["--url", URL, "--sha256", SHA[:-1], "--version", "v0.4.0"], "--sha256"),
        (["--url", URL, "--sha256", SHA, "--version", "0.4.0"], "--version"),
        (["--url", URL, "--sha256", SHA, "--version", "v0.4"], "--version"),
        (["--url", URL, "--sha256", SHA, "--version", "v01.4.0"], "--version"),
        (["--url", "http://insecure/x.tgz", "--sha256", SHA, "--version", "v0.4.0"], "--url"),
        (["--url", URL + "\n", "--sha256", SHA, "--version", "v0.4.0"], "--url"),
    ],
    ids=[
        "sha-uppercase",
        "sha-short",
        "version-no-v",
        "version-two-parts",
        "version-zero-prefix",
        "url-http",
        "url-newline",
    ],
)
def test_bad_arguments_exit_2_naming_the_flag(args: list[str], named: str) -> None:
    result = render(*args)
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.startswith(f"error: {named}")


@pytest.mark.parametrize(
    ("path", "value", "problem"),
    [
        (("apiVersion",), "krew.googlecontainertools.github.com/v1alpha1", "apiVersion"),
        (("kind",), "Plug", "kind"),
        (("metadata", "name"), "other", "metadata.name"),
        (("spec", "shortDescription"), "two\nlines", "shortDescription has line breaks"),
        (("spec", "version"), "1.0.0", "version not semantic"),
        (("spec", "platforms", 0, "sha256"), "XYZ", "sha256 pattern"),
        (("spec", "platforms", 0, "bin"), "", "bin"),
        (("spec", "platforms", 0, "files"), [], "files empty"),
        (("spec", "platforms", 0, "selector"), None, "nil selector is not supported"),
        (
            ("spec", "platforms", 0, "selector"),
            {"matchLabels": {"distro": "x"}},
            "key 'distro' not supported",
        ),
    ],
    ids=lambda v: v if isinstance(v, str) else None,
)
def test_the_checks_catch_what_krew_refuses(path: tuple, value: Any, problem: str) -> None:
    plugin = copy.deepcopy(rendered())
    node = plugin
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    assert problem in krew_problems("sched", plugin)
