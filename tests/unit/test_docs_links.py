"""The docs point at things that exist and say what the code says (``nox -s docs`` runs this
file): every relative link and picture in README.md, CONTRIBUTING.md, CHANGELOG.md and the
docs site's pages names a file of the repository; every ``kschedctl CMD`` heading of a command
page is a command of the CLI; the generated reference pages are current; the site builds with
``mkdocs build --strict`` (dead links and anchors fail it)."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

from kschedctl._generated.completion_table import TABLE

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "docs").rglob("*.md"))
DOCS = ["README.md", "CONTRIBUTING.md", "CHANGELOG.md", *PAGES]
LINK = re.compile(r"\]\(([^)\s]+)\)")
CODE = re.compile(r"```.*?```|`[^`\n]*`", re.S)  # code is not a link
README_MAX_LINES = 250


def _generator():  # tools/ is not a package: load the script as a module
    spec = importlib.util.spec_from_file_location(
        "gen_docs_reference", ROOT / "tools" / "gen_docs_reference.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("doc", DOCS)
def test_relative_links_name_files_that_exist(doc: str) -> None:
    text = CODE.sub("", (ROOT / doc).read_text())
    targets = [t.split("#")[0] for t in LINK.findall(text) if not re.match(r"[a-z]+:|#", t)]
    missing = [t for t in targets if t and not (ROOT / doc).parent.joinpath(t).exists()]
    assert missing == []


def test_the_front_pages_link_somewhere() -> None:
    for doc in ["README.md", "CONTRIBUTING.md", "docs/index.md"]:
        assert LINK.search((ROOT / doc).read_text()), doc


def test_every_command_heading_of_the_command_pages_is_a_command() -> None:
    text = "".join(p.read_text() for p in sorted((ROOT / "docs" / "commands").glob("*.md")))
    headings = re.findall(r"^#+ `kschedctl ([a-z][a-z-]*)", text, re.M)
    commands = set(TABLE["commands"])
    assert headings and sorted(set(headings) - commands) == []


def test_readme_is_a_front_page() -> None:
    text = (ROOT / "README.md").read_text()
    assert len(text.splitlines()) <= README_MAX_LINES
    # CONTRIBUTING.md links to README.md#tests; the quick start is five commands
    assert "\n## Tests\n" in text and "python -m pytest" in text
    start = text.index("## Quick start")
    block = text[text.index("```sh\n", start) + 6 : text.index("```\n", start + 20)]
    assert len(block.splitlines()) == 5 and all("kschedctl " in line for line in block.splitlines())


@pytest.mark.parametrize("page", ["CLI_PAGE", "SPEC_PAGE"])
def test_generated_reference_pages_are_current(page: str) -> None:
    gen = _generator()
    path = getattr(gen, page)
    assert path.read_text(encoding="utf-8").splitlines() == gen.PAGES[path]().splitlines(), (
        f"{path.relative_to(ROOT)} is stale; run: {gen.REGENERATE}"
    )


def test_cli_reference_has_every_command_and_option() -> None:
    text = (ROOT / "docs" / "reference" / "cli.md").read_text()
    commands = TABLE["commands"]
    visible = {
        f"{parent} {c['name']}".strip()
        for parent, node in commands.items()
        for c in node["commands"]
    }
    for path, node in commands.items():
        if path not in visible or node["commands"]:
            continue
        section = text[text.index(f"\n## `kschedctl {path}`\n") :].split("\n## ", 2)[1]
        for param in node["params"]:
            if param["kind"] == "option" and not param["hidden"]:
                assert f"`{param['opts'][-1]}`" in section, (path, param["opts"])


def test_spec_reference_describes_every_field_of_the_spec() -> None:
    from kschedctl.render.schemas import schema
    from kschedctl.spec.fielddocs import FIELD_DOCS

    paths: list[str] = []

    def walk(node: dict, path: str) -> None:
        for key, child in node.get("properties", {}).items():
            paths.append(f"{path}.{key}" if path else key)
            assert child.get("description"), paths[-1]
            walk(child, paths[-1])

    walk(schema("spec"), "")
    assert sorted(FIELD_DOCS) == sorted(paths)  # no entry for a field that is gone
    text = (ROOT / "docs" / "reference" / "spec.md").read_text()
    section = text[
        text.index("## kschedctl scheduler spec") : text.index(
            "\n## ", 10 + text.index("## kschedctl scheduler spec")
        )
    ]
    for path in paths:
        (row,) = [line for line in section.splitlines() if line.startswith(f"| `{path}`")]
        assert not row.endswith("|  |"), row


def test_site_builds_strict(tmp_path: Path) -> None:
    pytest.importorskip("mkdocs", reason="mkdocs is in the test extra; CI has it")
    pytest.importorskip("material", reason="mkdocs-material is in the test extra; CI has it")
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(tmp_path / "site")],
        cwd=ROOT, capture_output=True, text=True, check=False,
        env={"NO_MKDOCS_2_WARNING": "1", "PATH": "/usr/bin:/bin"},
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "site" / "reference" / "cli" / "index.html").is_file()
