"""The pictures (kschedctl/cli/pictures.py): golden SVG exports of `top nodes` and
`events --timeline` on the fixed snapshot, deterministic HTML, and the export's errors.

Update the golden files after an intended change with ``KSCHEDCTL_UPDATE_GOLDEN=1 python -m
pytest tests/unit/test_pictures.py`` and look at them (they are pictures) before committing.
"""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
import yaml
from golden_compare import compare_golden

from kschedctl.base.errors import KschedError, NotFoundError, UsageError
from kschedctl.cli import picture_export, pictures
from kschedctl.observe.events import normalize
from kschedctl.observe.placement import placement
from kschedctl.observe.timeline import timeline

SNAPSHOT = Path(__file__).parent / "fixtures" / "pictures" / "snapshot.yaml"
GOLDEN = Path(__file__).resolve().parent.parent / "golden" / "pictures"


@pytest.fixture(scope="module")
def snapshot() -> dict[str, Any]:
    return yaml.safe_load(SNAPSHOT.read_text(encoding="utf-8"))


def _compare(name: str, actual: str) -> None:
    compare_golden(GOLDEN / name, actual, "tests/unit/test_pictures.py")


def _nodes_svg(snapshot: dict[str, Any], **kwargs: Any) -> str:
    shown = placement(snapshot["nodes"], snapshot["pods"], **kwargs)
    return picture_export.render_export(
        pictures.nodes_picture(shown), ".svg", "kschedctl top nodes"
    )


def _timeline(snapshot: dict[str, Any]) -> Any:
    return timeline(normalize(e) for e in snapshot["events"])


def test_top_nodes_svg_golden(snapshot: dict[str, Any]) -> None:
    _compare("top-nodes.svg", _nodes_svg(snapshot))


def test_top_nodes_highlight_svg_golden(snapshot: dict[str, Any]) -> None:
    _compare("top-nodes-spread.svg", _nodes_svg(snapshot, scheduler="spread", sort_by="cpu"))


def test_timeline_svg_golden(snapshot: dict[str, Any]) -> None:
    picture = pictures.timeline_picture(_timeline(snapshot), "spread")
    _compare("events-timeline.svg",
             picture_export.render_export(picture, ".svg", "kschedctl events spread --timeline"))  # fmt: skip


def test_svg_is_well_formed_and_says_what_matters(snapshot: dict[str, Any]) -> None:
    svg = _nodes_svg(snapshot)
    root = ET.fromstring(svg)
    assert root.tag.endswith("svg")
    text = "".join(root.itertext()).replace("\xa0", " ")
    for words in ("node-a", "node-c", "binpack", "spread", "default-scheduler", "(none)",
                  "2.5 (125%) ⚠", "cordoned", "kschedctl top nodes"):  # fmt: skip
        assert words in text, words


def test_exports_are_deterministic(snapshot: dict[str, Any]) -> None:
    shown = placement(snapshot["nodes"], snapshot["pods"])
    for suffix in (".svg", ".html"):
        first = picture_export.render_export(pictures.nodes_picture(shown), suffix, "t")
        again = picture_export.render_export(pictures.nodes_picture(shown), suffix, "t")
        assert first == again


def test_html_has_the_title_escaped(snapshot: dict[str, Any]) -> None:
    shown = placement(snapshot["nodes"], snapshot["pods"])
    page = picture_export.render_export(pictures.nodes_picture(shown), ".html", "a <b> {c}\x1b")
    assert "<title>a &lt;b&gt; {c}^[</title>" in page
    assert "node-a" in page


def test_names_from_the_cluster_are_one_line() -> None:
    nodes = [{"metadata": {"name": "evil\x1b[31m\nnode"}, "status": {"allocatable": {"cpu": "1"}}}]
    pods = [
        {
            "metadata": {"name": "p"},
            "spec": {
                "nodeName": "evil\x1b[31m\nnode",
                "schedulerName": "s<\x07>",
                "containers": [],
            },
        }
    ]
    svg = picture_export.render_export(pictures.nodes_picture(placement(nodes, pods)), ".svg", "t")
    text = "".join(ET.fromstring(svg).itertext())  # control characters: invalid XML
    assert "\x1b" not in svg and "\x07" not in svg
    assert "evil^[[31m\\nnode" in text.replace("\xa0", " ")
    assert "s<\\x07>" in text


def test_export_writes_the_file(tmp_path: Path, snapshot: dict[str, Any]) -> None:
    picture = pictures.nodes_picture(placement(snapshot["nodes"], snapshot["pods"]))
    target = tmp_path / "top.SVG"
    picture_export.export(picture, target, "kschedctl top nodes")
    assert target.read_text(encoding="utf-8").startswith("<svg")


@pytest.mark.parametrize("name", ["top.png", "top", "top.svg.txt"])
def test_unknown_extension_is_a_usage_error(name: str) -> None:
    with pytest.raises(UsageError, match="unknown picture format") as caught:
        picture_export.check_export(name)
    assert caught.value.exit_code == 2
    assert "FILE.svg" in (caught.value.hint or "")


def test_export_into_a_missing_directory_is_not_found(tmp_path: Path) -> None:
    with pytest.raises(NotFoundError, match="writing the picture to .*missing/top.svg"):
        picture_export.export(
            pictures.timeline_picture(timeline([]), None), tmp_path / "missing" / "top.svg", "t"
        )


def test_export_onto_a_directory_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "d.svg").mkdir()
    with pytest.raises(KschedError, match="writing the picture to") as caught:
        picture_export.export(
            pictures.timeline_picture(timeline([]), None), tmp_path / "d.svg", "t"
        )
    assert caught.value.exit_code == 1


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes anywhere")
def test_export_into_a_read_only_directory_is_an_error(tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    with pytest.raises(KschedError, match="Permission denied") as caught:
        picture_export.export(pictures.timeline_picture(timeline([]), None), locked / "t.svg", "t")
    assert caught.value.exit_code == 1
    assert caught.value.hint == "choose a directory you can write to"


def test_export_under_a_file_is_not_found(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    with pytest.raises(
        NotFoundError, match="writing the picture to .*file/t.svg failed: Not a directory"
    ):
        picture_export.export(
            pictures.timeline_picture(timeline([]), None), tmp_path / "file" / "t.svg", "t"
        )
