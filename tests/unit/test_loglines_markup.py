"""observe.loglines escapes rich markup itself (a pure module): exactly as rich would."""

from __future__ import annotations

import pytest
from rich.markup import escape

from kschedctl.observe.loglines import escape_markup

CASES = {
    "plain": "no brackets at all",
    "tag": "[bold]not bold[/bold]",
    "closing": "text [/] more",
    "colour": "[#ff0000]red?",
    "link": "[@click]handler",
    "upper": "[INFO] upper case is not a tag",
    "klog-prefix": "[s-0 (leader)] I0101 scheduler.go:1] msg",
    "backslash-before-tag": "path\\[bold]x",
    "two-backslashes": "a\\\\[b]",
    "trailing-backslash": "ends with \\",
    "trailing-two-backslashes": "ends with \\\\",
    "nested": "[a[b]c]",
    "empty": "",
}


@pytest.mark.parametrize("text", CASES.values(), ids=CASES.keys())
def test_escape_markup_matches_rich(text: str) -> None:
    assert escape_markup(text) == escape(text)
