"""`--export FILE.svg|FILE.html` and `simulate --report`: a picture of kschedctl/cli/pictures.py
written as a deterministic SVG or HTML document (a fixed width, title and SVG id, truecolor
whatever the terminal, no timestamp), so a golden file can hold one.
Imported when a picture is drawn: rich is not start-up material.
"""

from __future__ import annotations

import html
import io
from pathlib import Path

from rich.console import Console, RenderableType

from kschedctl.base.errors import UsageError, os_error, shown_path
from kschedctl.base.terminal import escape

EXPORT_WIDTH = 140  # columns of an exported picture: a top nodes row with usage fits
EXPORTS = (".svg", ".html")


def check_export(path: str | None) -> Path | None:
    """``--export FILE``: .svg or .html, checked before anything is fetched (exit 2)."""
    if path is None:
        return None
    target = Path(path)
    if target.suffix.lower() not in EXPORTS:
        raise UsageError(
            f"--export {shown_path(path)}: unknown picture format "
            f"{target.suffix or '(no extension)'!r}",
            hint="name the file FILE.svg (a picture for a README or an issue) or FILE.html",
        )
    return target


# By errno, for a file the user named (ops.snapshot gives the same two for a snapshot file).
WRITE_HINTS = {13: "choose a directory you can write to", 21: "give a file name, not a directory"}


def export(picture: RenderableType, target: Path, title: str) -> None:
    """Write ``picture`` to ``target`` as SVG or HTML (by its extension), byte-identical for
    the same picture."""
    document = render_export(picture, target.suffix.lower(), title)
    try:
        target.write_text(document, encoding="utf-8")
    except OSError as err:
        raise os_error(err, f"writing the picture to {shown_path(target)}", WRITE_HINTS) from err


def render_export(picture: RenderableType, suffix: str, title: str) -> str:
    """The SVG or HTML document of ``picture`` (``suffix``: .svg or .html)."""
    console = Console(
        record=True,
        width=EXPORT_WIDTH,
        file=io.StringIO(),
        force_terminal=True,
        color_system="truecolor",
        legacy_windows=False,
        emoji=False,
        highlight=False,
        markup=False,  # a string in a picture is never read as "[link=…]" (DESIGN.md "Trust")
    )
    console.print(picture)
    if suffix == ".svg":
        return console.export_svg(title=escape(title), unique_id="kschedctl")
    # the title is text inside a str.format template: braces doubled
    shown_title = html.escape(escape(title)).replace("{", "{{").replace("}", "}}")
    return console.export_html(code_format=_HTML.replace("{title}", shown_title))


# rich's page (rich/_export_format.py CONSOLE_HTML_FORMAT) with a <title>: a fixed name, no date.
_HTML = """\
<!DOCTYPE html>
<html>
<head>
<meta charset="UTF-8">
<title>{title}</title>
<style>
{stylesheet}
body {{
    color: {foreground};
    background-color: {background};
}}
</style>
</head>
<body>
    <pre style="font-family:Menlo,'DejaVu Sans Mono',consolas,'Courier New',monospace"><code style="font-family:inherit">{code}</code></pre>
</body>
</html>
"""
