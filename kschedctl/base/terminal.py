"""The one sanitiser for text that reaches a terminal: what the cluster (or a file) says is data.

Event notes, log lines, names, annotations and profile names are written by whoever can edit
an object; printed raw, an escape sequence clears the screen, writes the clipboard (OSC 52)
or hides a link (OSC 8), and a bidi override reorders what the reader sees. kubectl escapes
them (k8s.io/cli-runtime ``printers.EscapeTerminal``: ESC as ``^[``, CR as ``\\r``);
:func:`escape` does the same and escapes every other character a terminal may act on or that
hides text: C0 and C1 controls, DEL, format characters (bidi overrides and isolates,
zero-width characters, the BOM), line and paragraph separators, surrogates, private-use and
unassigned code points, as ``\\n``, ``\\t``, ``\\xNN``, ``\\uNNNN`` or ``\\UNNNNNNNN``.

Every printer goes through here: ``kschedctl.cli.output`` (tables, messages, lines), the pictures
and exports, custom-columns cells, error messages (:func:`kschedctl.base.errors.printable`) and the
comments of rendered files (:func:`kschedctl.render.escape.comment`). Pure: every layer may
use it.
"""

from __future__ import annotations

import unicodedata

# Kept as they are: printable everywhere, and the separators' spaces (NBSP, U+3000…) too.
_ESCAPED_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})
# kubectl's spellings for ESC and CR; the usual escapes for the line breaks a caller may keep.
_NAMED = {"\x1b": "^[", "\r": "\\r", "\n": "\\n", "\t": "\\t"}

LINES = "\n"  # ``keep`` for messages of several lines
LOG = "\t"  # ``keep`` for a log line: Go's stack traces indent with tabs


def _inert(c: str) -> bool:
    return c.isprintable() or unicodedata.category(c) not in _ESCAPED_CATEGORIES


def is_inert(text: str, keep: str = "") -> bool:
    """True when :func:`escape` would return ``text`` unchanged."""
    return text.isprintable() or all(c in keep or _inert(c) for c in text)


def escaped_char(c: str) -> str:
    """How :func:`escape` writes one character it does not let through."""
    named = _NAMED.get(c)
    if named is not None:
        return named
    code = ord(c)
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def escape(text: str, keep: str = "") -> str:
    """``text`` with nothing a terminal acts on: one line unless ``keep`` holds ``\\n``
    (:data:`LINES`); ``keep`` names the other controls let through (``\\t``: :data:`LOG`).

    Escaping the result again changes nothing.
    """
    if text.isprintable():  # the common case, checked in C
        return text
    return "".join(c if c in keep or _inert(c) else escaped_char(c) for c in text)
