"""The docs point at things that exist: every relative link and picture in README.md,
CONTRIBUTING.md and CHANGELOG.md names a file of the repository, and every ``kschedctl CMD``
heading of the README is a command of the CLI (``nox -s docs`` runs this file)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kschedctl._generated.completion_table import TABLE

ROOT = Path(__file__).resolve().parents[2]
DOCS = ["README.md", "CONTRIBUTING.md", "CHANGELOG.md"]
LINK = re.compile(r"\]\(([^)\s]+)\)")


@pytest.mark.parametrize("doc", DOCS)
def test_relative_links_name_files_that_exist(doc: str) -> None:
    text = (ROOT / doc).read_text()
    targets = [t.split("#")[0] for t in LINK.findall(text) if not re.match(r"[a-z]+:|#", t)]
    assert targets or doc == "CHANGELOG.md"
    missing = [t for t in targets if not (ROOT / t).exists()]
    assert missing == []


def test_every_command_heading_of_the_readme_is_a_command() -> None:
    headings = re.findall(r"^#+ `kschedctl ([a-z][a-z-]*)", (ROOT / "README.md").read_text(), re.M)
    commands = set(TABLE["commands"])
    assert headings and sorted(set(headings) - commands) == []
