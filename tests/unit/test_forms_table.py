"""The FORMS table is the one list of rendered forms: the docs, the CLI and the completion
scripts name exactly its forms, and the render package imports without cycles."""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from kschedctl.cli import completion_scripts
from kschedctl.cli import create as create_cmd
from kschedctl.cli import render as render_cmd
from kschedctl.render import forms
from kschedctl.render.templates import templates_dir
from kschedctl.spec import SPEC_FILE

ROOT = Path(__file__).resolve().parents[2]
# The command pages of the docs site (docs/commands/): offline.md has create and render,
# cluster.md has deploy.
COMMAND_PAGES = "".join(
    p.read_text(encoding="utf-8") for p in sorted((ROOT / "docs" / "commands").glob("*.md"))
)
RENDER_PACKAGE = ROOT / "kschedctl" / "render"


def _section(heading: str) -> str:
    start = COMMAND_PAGES.index(f"\n## {heading}\n")
    end = COMMAND_PAGES.find("\n## ", start + 1)
    return COMMAND_PAGES[start:end]


def test_rows_are_consistent() -> None:
    names = [f.name for f in forms.FORMS]
    assert len(set(names)) == len(names)
    files = [f.file_name("s") for f in forms.FORMS]
    assert forms.WORKSPACE_SCHEMA not in files
    assert len(set(files)) == len(files)
    assert SPEC_FILE not in files and forms.WORKSPACE_README not in files
    for form in forms.FORMS:
        assert form.holds, form.name
        if form.template is not None:
            assert (templates_dir() / form.template).is_file(), form.name
        assert not (form.host and form.host_helper), form.name
    assert sorted(forms.RENDER_FORMS) == sorted(names)
    assert set(forms.HOST_FORMS) <= set(forms.DEPLOY_FORMS)


def test_readme_create_table_lists_the_workspace_files() -> None:
    section = _section("`kschedctl create NAME`")
    listed = re.findall(r"^\| `([^`]+)` \|", section, flags=re.MULTILINE)
    workspace = [f.file_name("NAME") for f in forms.FORMS if not f.directory]
    expected = [SPEC_FILE, forms.WORKSPACE_SCHEMA, *workspace, forms.WORKSPACE_README]
    assert listed == expected


def test_readme_render_section_names_the_forms() -> None:
    section = _section("`kschedctl render SRC --as FORM`")
    paragraph = section[section.index("\nForms: ") :].split(".\n", 1)[0]
    assert re.findall(r"`([^`]+)`", paragraph) == list(forms.RENDER_FORMS)


def test_readme_deploy_heading_names_the_deployable_forms() -> None:
    (flags,) = re.findall(r"^## `kschedctl deploy NAME\|DIR (\S+)`$", COMMAND_PAGES, re.MULTILINE)
    assert flags.split("|") == [f"--as-{name}" for name in forms.DEPLOY_FORMS]


@pytest.mark.parametrize("shell", sorted(completion_scripts.FILES))
def test_completion_scripts_name_the_forms(shell: str) -> None:
    script = (completion_scripts.source_dir() / completion_scripts.FILES[shell]).read_text()
    (deploy,) = [line for line in script.splitlines() if line.startswith("#   kschedctl deploy ")]
    as_flags = [word for word in deploy.split() if word.startswith("--as-")]
    assert sorted(as_flags) == sorted(f"--as-{name}" for name in forms.DEPLOY_FORMS)
    (render,) = [line for line in script.splitlines() if line.startswith("#   kschedctl render ")]
    assert "--as" in render.split()


def test_completion_offers_every_form_in_table_order() -> None:
    env = {
        **os.environ,
        "_KSCHEDCTL_COMPLETE": "complete_bash",
        "COMP_WORDS": "kschedctl render x --as ",
        "COMP_CWORD": "4",
    }
    result = subprocess.run(
        [sys.executable, "-m", "kschedctl"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    assert result.stdout.split() == list(forms.RENDER_FORMS)


def test_derived_help_texts_are_unchanged() -> None:
    assert render_cmd._as_help() == (
        "What to print: config, service (systemd unit), pod, deployment, routing "
        "(MutatingAdmissionPolicy), static-pod, "
        "example-pod; host-config / host-rbac: the config file and Lease RBAC the "
        "service and static-pod forms need; helm-chart / kustomize: GitOps exports, written "
        "to DIR."
    )
    assert [f.value for f in render_cmd.Form] == list(forms.RENDER_FORMS)
    assert create_cmd.HELP == (
        "Write a scheduler workspace PARENT/NAME/: scheduler.yaml and every rendered form.\n\n"
        "Files: scheduler.yaml (the spec, the one source of truth), scheduler.schema.json (its "
        "JSON Schema), config.yaml, NAME.service, "
        "host-config.yaml, host-rbac.yaml, pod.yaml, deployment.yaml, routing.yaml, "
        "static-pod.yaml, "
        "example-pod.yaml, README.md. Prints the paths written (stdout) and the next steps "
        "(stderr). Refuses an existing PARENT/NAME without --force; --force replaces only a "
        "kschedctl workspace or an empty directory. Works offline."
    )


def test_deploy_and_host_forms() -> None:
    assert forms.DEPLOY_FORMS == ("pod", "deployment", "service", "static-pod")
    assert forms.HOST_FORMS == ("service", "static-pod")
    assert forms.HOST_HELPERS == ("host-config", "host-rbac")


def _render_imports(path: Path) -> set[str]:
    """kschedctl.render modules that ``path`` imports, at module level or in a function."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module == "kschedctl.render":
                found.update(f"kschedctl.render.{alias.name}" for alias in node.names)
            elif node.module.startswith("kschedctl.render."):
                found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("kschedctl.render."))
    return found


def test_render_modules_import_each_other_without_cycles() -> None:
    graph = {
        f"kschedctl.render.{p.stem}": _render_imports(p)
        for p in RENDER_PACKAGE.glob("*.py")
        if p.stem != "__init__"
    }
    visiting: list[str] = []
    done: set[str] = set()

    def visit(module: str) -> None:
        assert module not in visiting, f"import cycle: {' -> '.join([*visiting, module])}"
        if module in done or module not in graph:
            return
        visiting.append(module)
        for imported in sorted(graph[module]):
            visit(imported)
        visiting.pop()
        done.add(module)

    for module in sorted(graph):
        visit(module)


def test_the_forms_table_is_cheap_to_import() -> None:
    probe = (
        "import sys, kschedctl.render\n"
        "heavy = ('jinja2', 'yaml', 'rich', 'kschedctl.spec', 'kschedctl.render.context')\n"
        "print(sorted(m for m in heavy if m in sys.modules))"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60
    )
    assert result.stdout.strip() == "[]"
