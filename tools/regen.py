#!/usr/bin/env python3
"""Regenerate every generated file (``kschedctl/_generated/``, ``completions/``, the goldens,
the README's pictures), then run their drift tests.

Usage::

    python tools/regen.py [--check] [--pictures] [--k8s-src DIR_OR_ZIP ...]
                          [--scheduler-plugins GIT_DIR]

(``nox -s regen`` runs it.)

Generators, one per file (each file's header names its own):

- ``python -m kschedctl.cli.completion_scripts``: ``_generated/completion_table.py`` and
  ``completions/*`` from the typer command tree (offline);
- ``python -m kschedctl.render.schemas``: ``_generated/schemas/*.schema.json`` from the spec,
  policy and snapshot shapes (offline);
- ``tools/gen_docs_reference.py``: the docs site's ``docs/reference/cli.md`` (from the commands)
  and ``docs/reference/spec.md`` (from the schemas) (offline);
- ``tools/gen_plugin_registry.py``: ``_generated/registry_data.py`` from the k8s.io/kubernetes
  source of every supported minor (``--k8s-src``, default: the Go module cache);
- ``tools/gen_scheduler_plugins.py``: ``_generated/scheduler_plugins.py`` from a
  kubernetes-sigs/scheduler-plugins git mirror (``--scheduler-plugins``);
- ``KSCHEDCTL_UPDATE_GOLDEN=1 pytest``: the goldens under ``tests/golden/`` (every rendered form
  of each spec there) and the pictures' goldens (review the diff: a golden is a decision);
- ``tools/readme_picture.py`` (``--pictures``): the README's pictures under ``docs/`` (a lab).

A generator whose inputs are not on this machine is skipped with a line saying what it needs.
``--check`` writes nothing: each generator that can compare does, and the exit code says
whether anything is stale. The drift tests run last either way.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GO_MOD = Path.home() / "go/pkg/mod/k8s.io"
MIRROR = Path("/work/.mirror/kubernetes-sigs+scheduler-plugins/repo")
GOLDEN_TESTS = ["tests/unit/test_render_golden.py", "tests/unit/test_pictures.py"]
DRIFT_TESTS = [
    "tests/cli/test_completions.py::test_completion_scripts_are_up_to_date",
    "tests/cli/test_schemas.py::test_shipped_schema_is_the_generated_one",
    "tests/unit/test_framework.py::test_generator_reproduces_the_committed_1_36_table",
    "tests/unit/test_custom_program.py::test_generator_reproduces_the_table",
    "tests/unit/test_docs_links.py::test_generated_reference_pages_are_current",
]


def _run(args: list[str]) -> int:
    print("$", " ".join(args), flush=True)
    return subprocess.run(args, cwd=ROOT, check=False).returncode


def _k8s_sources(given: list[str]) -> tuple[list[str], list[str]]:
    """The sources for every minor of the committed table, and the versions not found."""
    sys.path.insert(0, str(ROOT))
    from kschedctl._generated.registry_data import SOURCE_VERSIONS

    if given:
        return given, []
    found, missing = [], []
    for version in SOURCE_VERSIONS.values():
        path = GO_MOD / f"kubernetes@{version}"
        (found if path.is_dir() else missing).append(str(path) if path.is_dir() else version)
    return found, missing


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="write nothing; report drift")
    parser.add_argument("--k8s-src", nargs="+", default=[], help="k8s.io/kubernetes sources")
    parser.add_argument("--scheduler-plugins", type=Path, default=MIRROR, help="git mirror")
    parser.add_argument("--pictures", action="store_true", help="README pictures too")
    args = parser.parse_args(argv)
    check = ["--check"] if args.check else []
    failed = 0
    py = sys.executable
    failed |= _run([py, "-m", "kschedctl.cli.completion_scripts", *check])
    failed |= _run([py, "-m", "kschedctl.render.schemas", *check])
    failed |= _run([py, "tools/gen_docs_reference.py", *check])  # after the schemas it reads

    sources, missing = _k8s_sources(args.k8s_src)
    if missing:
        print(
            "skip tools/gen_plugin_registry.py: needs the k8s.io/kubernetes source of "
            f"{', '.join(missing)} (go mod download, or --k8s-src DIR_OR_ZIP ...)"
        )
    elif args.check:
        print("skip tools/gen_plugin_registry.py: no --check mode (its drift test runs below)")
    else:
        failed |= _run([py, "tools/gen_plugin_registry.py", *sources])
        failed |= _run(["ruff", "format", "kschedctl/_generated/registry_data.py"])

    if args.scheduler_plugins.is_dir():
        failed |= _run([py, "tools/gen_scheduler_plugins.py", str(args.scheduler_plugins), *check])
    else:
        print(
            "skip tools/gen_scheduler_plugins.py: needs a kubernetes-sigs/scheduler-plugins git "
            f"mirror (--scheduler-plugins GIT_DIR; {MIRROR} not found)"
        )

    if args.check:
        print("skip the goldens: --check compares them in the golden tests")
    else:
        # every rendered form of tests/golden/*.yaml and the pictures' golden SVG/HTML
        env = {**os.environ, "KSCHEDCTL_UPDATE_GOLDEN": "1"}
        print("$ KSCHEDCTL_UPDATE_GOLDEN=1 pytest", " ".join(GOLDEN_TESTS), flush=True)
        failed |= subprocess.run(
            [py, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "0", *GOLDEN_TESTS],
            cwd=ROOT, env=env, check=False,
        ).returncode  # fmt: skip
    if args.pictures:
        failed |= _run([py, "tools/readme_picture.py"])
    else:
        print("skip tools/readme_picture.py (the README's pictures): needs a lab; --pictures")

    failed |= _run([py, "-m", "pytest", "-q", "-p", "no:cacheprovider", *DRIFT_TESTS])
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
